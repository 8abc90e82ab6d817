"""Where a match is played in a tier: on the replica that holds most of its seats.

Any replica may receive StartMatch (a worker reaches whichever the load
balancer gives it); it forwards the request through the relay to the
replica that holds most of the match's bots, so that most seats are asked
in-process and only the rest through Redis. The database still decides:
the replica that stores the match first owns it, so StartMatch stays
idempotent by match id across the tier.

A replica that cannot reach Redis (not ready) takes no match: StartMatch
on it fails with TierUnavailable (the caller tries another replica), and
one forwarded to it is refused, so the forwarder plays it.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Collection, Sequence

from redis.exceptions import RedisError

from ladder.errors import MatchCancelled, QuotaExceeded
from ladder.records import Match, MatchRequest
from ladder.store import Conflict
from referee.matches import BadMatch, Starter, Unavailable
from referee.metrics import RefereeMetrics
from referee.tier.registry import Replica
from referee.tier.relay import CallFailed
from referee.tier.replica import Tier

log = logging.getLogger(__name__)

FORWARD_TIMEOUT_S = 20.0
"""How long the replica a match was forwarded to may take to store it (then it is played here)."""

START = "start"
"""The relay call that starts a match on the replica it names."""


class TierUnavailable(Unavailable):
    """This replica cannot reach Redis (it is not ready): it takes no match now."""


class ForwardedQuotaExceeded(QuotaExceeded):
    """An author's quota used up, as the replica the match was forwarded to found it (the
    relay carries its message, not its fields)."""

    def __init__(self, message: str) -> None:
        RuntimeError.__init__(self, message)


REFUSALS: dict[str, Callable[[str], Exception]] = {
    "BadMatch": BadMatch,
    "Conflict": Conflict,
    "MatchCancelled": MatchCancelled,
    "QuotaExceeded": ForwardedQuotaExceeded,
}
"""The refusals of a forwarded match that are the request's own (its bots, a match of
that id, its tournament's cancel, the author's quota), by the name the relay gives them: raised here as they were
there. Any other failure is that replica's, and the match is played here instead."""


def placement(held: Sequence[Collection[str]], replicas: Sequence[Replica], me: str) -> str:
    """The replica a match should run on: the live one holding most of its seats.

    `held` names, per bot of the match, the replicas holding a live session of it
    (`Registry.held_by`: several when it holds one on each). Draining replicas take
    no match. A tie goes to `me` (no forwarding), then to the replica with fewer
    matches; with no seat held anywhere, `me`.
    """
    open_ = {replica.name: replica for replica in replicas if not replica.draining}
    seats = Counter(name for names in held for name in set(names) if name in open_)
    if not seats:
        return me
    best = max(seats.values())
    candidates = [name for name, count in seats.items() if count == best]
    if me in candidates:
        return me
    return min(candidates, key=lambda name: (open_[name].matches, name))


class Placer:
    """Starts each match on the replica of the tier where it belongs."""

    def __init__(self, tier: Tier, start_here: Starter, metrics: RefereeMetrics) -> None:
        self._tier = tier
        self._start_here = start_here
        self._metrics = metrics
        tier.relay.handle(START, self._started_for_another)

    async def _started_for_another(self, payload: dict[str, object]) -> dict[str, object]:
        if not self._tier.ready:
            raise TierUnavailable(f"replica {self._tier.replica} cannot reach Redis")
        match = await self._start_here(MatchRequest.from_json(payload))
        return dict(match.to_json())

    async def place(self, bots: Sequence[str]) -> str:
        """The replica that should run a match of `bots` (this one if Redis is silent).

        The live replicas are the last heartbeat's: a second old at most, and a
        replica that began draining since refuses the match, which then plays here.
        """
        tier = self._tier
        try:
            held = await tier.registry.held_by(bots, [replica.name for replica in tier.live])
        except (RedisError, OSError):
            return tier.replica
        return placement([held[bot] for bot in bots], tier.live, tier.replica)

    async def start(self, request: MatchRequest) -> Match:
        """Start `request` where most of its seats are; here if that replica fails to.

        Raises TierUnavailable while this replica cannot reach Redis.
        """
        if not self._tier.ready:
            raise TierUnavailable(
                f"replica {self._tier.replica} cannot reach Redis; it takes no match now"
            )
        target = await self.place(request.bot_ids)
        if target == self._tier.replica:
            self._metrics.placements.labels("here").inc()
            return await self._start_here(request)
        try:
            stored = await self._tier.relay.call(
                target, START, dict(request.to_json()), FORWARD_TIMEOUT_S
            )
        except TimeoutError:
            log.warning("match %s: replica %s did not answer; playing it here", request.id, target)
        except CallFailed as error:
            refusal = REFUSALS.get(error.kind)
            if refusal is not None:
                raise refusal(str(error)) from None
            # ShuttingDown (it began draining) or a fault of that replica.
            log.warning(
                "match %s: replica %s refused it (%s); playing it here", request.id, target, error
            )
        else:
            self._metrics.placements.labels("forwarded").inc()
            return Match.from_json(stored)
        self._metrics.placements.labels("here").inc()
        return await self._start_here(request)
