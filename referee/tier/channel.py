"""The seat channel of a replica in a tier: the bot's stream may be held anywhere.

A seat whose bot holds its stream here is asked directly, as a lone referee
does; one whose bot is on another replica is asked through the relay. The
channel follows the bot: when it moves (its replica drained, died, or it
reconnected), the request waiting for it is sent again where it is now,
with what is left of its deadline.

A relayed request is sent again until its holder acknowledges it, and no
answer by the deadline is the bot's timeout only on the holder's word (its
verdict), asked for whether or not the request was acknowledged (a holder
that takes it late, stalled or behind a slow Redis, still has it answered).
A request the relay could not carry, or whose verdict does not come, aborts
the match (RelayUnavailable), as does a bot whose replica died under it.
While it waits, the channel looks the bot up again only when something says
it may have moved: a `moved` reply, a session opening or closing here, its
holder missing from the live replicas of the last heartbeat, or its holder
not acknowledging the request.

A bot found nowhere has the grace period to come back, as with a lone
referee; one whose replica died has it too, but past it (or past the move's
deadline) the relay is at fault, not the bot. So is it for any timeout or
absence over which Redis failed or stalled (`Outages`): the registry could not
say where the bot was.

Before a bot away is struck or forfeited, the other replicas are asked whether
they refused a session for the arena's fault meanwhile (it may have been the
bot's): asked, not told by them, because one cut off from Redis refuses every
bot (it could not publish the session) and cannot tell anyone until it is back.
One that refused, or does not answer, makes the absence the arena's fault.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from enum import Enum

from redis.exceptions import RedisError

from ladder.records import Notice
from referee.channels import (
    ActRequest,
    Answer,
    RelayUnavailable,
    SeatGone,
    SeatTimeout,
    SentAway,
    SessionsRefused,
)
from referee.metrics import RefereeMetrics
from referee.sessions import Absence, SessionHub
from referee.tier.outages import Outages
from referee.tier.registry import Holder, Registry, Replica
from referee.tier.relay import Asked, Outcome, Relay

POLL_S = 0.25
"""How often a bot found nowhere (or on a dead replica) is looked for, and Redis tried again."""
CACHE_S = 1.0
"""How long a bot's location is trusted without asking Redis (a `moved` reply corrects it)."""
RESEND_S = 0.2
"""How long a request waits for its holder's acknowledgement (or verdict) before it is sent again."""
LIVE_S = 1.0
"""How often an acknowledged request looks whether its holder is still among the live replicas."""
VERDICT_S = 1.0
"""How long past the deadline the holder's verdict may take before the relay is at fault;
and the other replicas' word on their refusals before an absence's verdict."""
SENT_AWAY = (
    "the bot's replica drained during the move and asked it to reconnect elsewhere; "
    "it was not back before the move's deadline"
)
REFUSALS = "refusals"
"""The call that asks a replica how long ago it last refused a session for the arena's
fault (`SessionHub.refused_ago`)."""


class Away(Enum):
    """Why a relayed request left its holder without an answer."""

    MOVED = "the bot may be elsewhere (it moved, or came here)"
    SENT = "the holder drains: it asked the bot to reconnect elsewhere"
    ORPHANED = "the holder is dead: not among the live replicas, or silent while the bot moved"


class Locator:
    """Where bots are, from the registry, remembered for a moment."""

    def __init__(
        self, registry: Registry, outages: Outages, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._registry = registry
        self.outages = outages
        self._clock = clock
        self._known: dict[str, tuple[float, Holder | None]] = {}

    async def find(self, bot_id: str, fresh: bool = False) -> Holder | None:
        """The bot's holder, stale if its replica stopped refreshing it; `fresh` asks Redis."""
        now = self._clock()
        known = self._known.get(bot_id)
        if not fresh and known is not None and now - known[0] < CACHE_S:
            return known[1]
        try:
            holder = (await self._registry.locate_many([bot_id]))[bot_id]
        except (RedisError, OSError) as error:
            self.outages.failed(error)
            raise
        self.outages.answered(now)
        self._known[bot_id] = (now, holder)
        return holder

    def forget(self, bot_id: str) -> None:
        """Ask Redis next time."""
        self._known.pop(bot_id, None)


class RelaySeatChannel:
    """A seat channel to a bot held by this replica or by another of the tier."""

    def __init__(
        self,
        hub: SessionHub,
        relay: Relay,
        locator: Locator,
        bot_id: str,
        grace_s: float,
        metrics: RefereeMetrics,
        live: Callable[[], Sequence[Replica]],
        gone: Callable[[], Sequence[str]],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.bot_id = bot_id
        self._hub = hub
        self._relay = relay
        self._locator = locator
        self._outages = locator.outages
        self._grace_s = grace_s
        self._metrics = metrics
        self._live = live
        self._gone = gone
        self._clock = clock
        self._absent_since: float | None = None

    async def act(self, request: ActRequest, timeout_s: float) -> Answer:
        """Ask the bot wherever it is, following it until the deadline."""
        started = self._clock()
        deadline = started + timeout_s
        fresh = False
        orphaned = False  # the bot's replica died while this request waited for it
        sent = False  # the bot's replica drains, and asked it to go elsewhere
        away: Absence | None = None  # made only when the bot is away: not on every move
        try:
            while True:
                remaining = deadline - self._clock()
                session = self._hub.get(self.bot_id)
                if session is not None:
                    self._absent_since = None
                    answer = await session.ask(request, remaining)
                    if answer is not None:
                        return answer
                    sent = sent or self._hub.draining
                    fresh = True
                    continue
                looked = self._clock()
                holder = await self._find(fresh, deadline)
                # Redis's time to answer, below a stall's (`Outages`), is the relay's and
                # not the bot's: the holder is given the move's time as if it were none.
                deadline += self._clock() - looked
                fresh = True
                if holder is not None and holder.stale:
                    orphaned = True
                if holder is None or holder.stale or holder.replica == self._relay.replica:
                    # Nowhere, on a dead replica, or the registry still names this
                    # replica's closed session.
                    # Polled: a bot coming back to another replica wakes nothing here.
                    away = away or Absence(self._hub, self._grace_s, POLL_S)
                    await self._wait_away(away, remaining, started)
                    continue
                self._absent_since = None
                if remaining <= 0:
                    raise SeatTimeout()
                relayed = await self._relayed(holder, request, started, deadline)
                if isinstance(relayed, Answer):
                    return relayed
                orphaned = orphaned or relayed is Away.ORPHANED
                sent = sent or relayed is Away.SENT
        except (SeatTimeout, SeatGone) as error:
            if orphaned:
                raise RelayUnavailable(
                    "the replica holding the bot's stream died during the move, "
                    "and the bot did not answer in time elsewhere"
                ) from error
            if sent:
                raise SentAway(SENT_AWAY) from error
            since = started if self._absent_since is None else min(started, self._absent_since)
            doubt = self._outages.doubt_since(since)
            if doubt is not None:
                # Where the bot was, and how much of its time a look-up took, rested on
                # a registry not to be believed: nothing here is known to be the bot's doing.
                raise RelayUnavailable(
                    f"{doubt} during the move or while the bot was away: "
                    "the tier could not know where the bot was"
                ) from error
            raise

    async def _find(self, fresh: bool, deadline: float) -> Holder | None:
        """The bot's holder; raises RelayUnavailable if Redis stays silent to the deadline."""
        while True:
            try:
                return await self._locator.find(self.bot_id, fresh)
            except (RedisError, OSError) as error:
                if self._clock() >= deadline:
                    raise RelayUnavailable(
                        "Redis did not answer before the move's deadline"
                    ) from error
                await asyncio.sleep(POLL_S)

    async def _wait_away(self, away: Absence, remaining: float, started: float) -> None:
        now = self._clock()
        if self._absent_since is None:
            self._absent_since = now
        try:
            await away.wait(now - self._absent_since, remaining)
        except (SeatTimeout, SeatGone):
            await self._kept_out(min(started, self._absent_since))
            raise

    async def _kept_out(self, since: float) -> None:
        """Raises an ArenaFault if another replica refused a session for the arena's fault
        since `since` (it may have been the bot's), or does not say within VERDICT_S.

        Asked at the verdict, so an answer covers every refusal before it; an answer's
        `ago` is counted back from its arrival, which can only make a refusal seem later.
        """
        if self._outages.doubt_since(since) is not None:
            return  # the relay's fault already, whatever they say (`act`)
        me = self._relay.replica
        # A replica gone a moment ago may be cut off from Redis and still refusing the bots
        # that come to it: it is asked too, and a dead one's silence aborts (its bots
        # were sent away by its death, the arena's fault as well).
        asked = [replica.name for replica in self._live()] + list(self._gone())
        peers = [name for name in dict.fromkeys(asked) if name != me]
        said = await asyncio.gather(
            *(self._relay.call(peer, REFUSALS, {}, VERDICT_S) for peer in peers),
            return_exceptions=True,
        )
        now = self._clock()
        silent = []
        for peer, word in zip(peers, said, strict=True):
            if isinstance(word, BaseException):
                silent.append(peer)
            elif word["ago"] is not None and now - word["ago"] >= since:
                raise SessionsRefused(
                    f"replica {peer} refused a session for the arena's fault while the "
                    "bot was away: it may have kept the bot out"
                )
        if silent:
            raise RelayUnavailable(
                f"replica {', '.join(silent)} did not say within {VERDICT_S:g} s whether it "
                "refused a session while the bot was away"
            )

    async def _relayed(
        self, holder: Holder, request: ActRequest, started: float, deadline: float
    ) -> Answer | Away:
        """The answer through `holder`'s replica, or why the bot may be elsewhere now."""
        sent = self._clock()
        asked = self._relay.ask(holder.replica, self.bot_id, request, deadline - sent)
        last_sent = sent
        try:
            while not asked.outcome.done():
                now = self._clock()
                if now >= deadline:
                    await self._verdict(asked, started, deadline)
                    break
                step = min(deadline - now, LIVE_S if asked.taken.done() else RESEND_S)
                # Not woken by the acknowledgement alone: it matters only at the resend's
                # time, and is looked at then (one wait a move, not two).
                waits = (asked.outcome, self._hub.changed())
                await asyncio.wait(waits, timeout=step, return_when=asyncio.FIRST_COMPLETED)
                if asked.outcome.done():
                    break
                if self._hub.get(self.bot_id) is not None:
                    return self._away(holder)  # the bot came here
                now = self._clock()
                if not asked.taken.done() and now - last_sent >= RESEND_S:
                    # Not acknowledged: lost on the way, or the holder is dead (a live one
                    # says `moved` when the bot is gone); the bot elsewhere is no longer
                    # to blame for what is left of its time.
                    if await self._find(True, deadline) != holder:
                        return Away.ORPHANED
                    self._relay.resend(asked, deadline - now)
                    last_sent = now
                elif (
                    asked.taken.done()
                    and holder.replica not in self._live_names()
                    and await self._find(True, deadline) != holder
                ):
                    return self._away(holder)
            return self._settled(asked, sent)
        finally:
            self._relay.forget(asked)

    def _live_names(self) -> set[str]:
        return {replica.name for replica in self._live()}

    def _away(self, holder: Holder) -> Away:
        """Why a request left `holder`: the bot moved, or its replica is not live any more."""
        return Away.MOVED if holder.replica in self._live_names() else Away.ORPHANED

    async def _verdict(self, asked: Asked, started: float, deadline: float) -> None:
        """Past the deadline with no answer: the holder's word on what became of the request.

        One not yet acknowledged is asked about too: it may still be on its way, or its
        holder stalled a moment. A holder that takes it late gives the bot the time the
        request carries and answers as usual; one that never had it says `unknown`.
        """
        until = deadline + VERDICT_S
        while not asked.outcome.done():
            remaining = until - self._clock()
            if remaining <= 0:
                said = "gave no verdict on" if asked.taken.done() else "did not acknowledge"
                raise RelayUnavailable(
                    f"replica {asked.replica} {said} the request "
                    f"within {VERDICT_S:g} s of its deadline"
                )
            self._relay.check(asked)
            await asyncio.wait((asked.outcome,), timeout=min(RESEND_S, remaining))
        if asked.outcome.result().outcome is Outcome.MOVED:
            # The bot left its holder without answering. If it is back somewhere, the
            # `moved` may have been lost on the way before the deadline: not its fault.
            self._locator.forget(self.bot_id)
            holder = await self._find(True, deadline)
            if self._hub.get(self.bot_id) is not None or (holder is not None and not holder.stale):
                raise RelayUnavailable(
                    "the bot moved during the move and the word of it came after its deadline"
                )
            await self._kept_out(started)  # it is nowhere now
            raise SentAway(SENT_AWAY) if asked.outcome.result().drained else SeatTimeout()

    def _settled(self, asked: Asked, sent: float) -> Answer | Away:
        """The answer, or MOVED; raises for a timeout or a request the holder lost."""
        relayed = asked.outcome.result()
        if relayed.outcome is Outcome.LATE:
            raise SeatTimeout()
        if relayed.outcome is Outcome.UNKNOWN:
            lost = (
                "lost the request it had taken" if asked.taken.done() else "never had the request"
            )
            raise RelayUnavailable(f"replica {asked.replica} {lost}")
        if relayed.answer is None:
            self._locator.forget(self.bot_id)
            return Away.SENT if relayed.drained else Away.MOVED
        total = self._clock() - sent
        self._metrics.relay_added_latency.observe(max(0.0, total - relayed.bot_s))
        return relayed.answer

    async def notify(self, notice: Notice) -> None:
        """Tell the bot, wherever it is connected (lost if it is nowhere)."""
        session = self._hub.get(self.bot_id)
        if session is not None:
            session.send(notice)
            return
        try:
            holder = await self._locator.find(self.bot_id)
        except (RedisError, OSError):
            return
        if holder is not None and not holder.stale and holder.replica != self._relay.replica:
            self._relay.notify(holder.replica, self.bot_id, notice)
