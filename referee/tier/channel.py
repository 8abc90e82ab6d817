"""The seat channel of a replica in a tier: the bot's stream may be held anywhere.

A seat whose bot holds its stream here is asked directly, as a lone referee
does; one whose bot is on another replica is asked through the relay. The
channel follows the bot: when it moves (its replica drained, died, or it
reconnected), the request waiting for it is sent again where it is now,
with what is left of its deadline. A bot found nowhere has the grace period
to come back, as with a lone referee.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from redis.exceptions import RedisError

from ladder.records import Notice
from referee.channels import ActRequest, Answer, RelayUnavailable, SeatTimeout
from referee.metrics import RefereeMetrics
from referee.sessions import SessionHub, absence_wait
from referee.tier.registry import Holder, Registry
from referee.tier.relay import Relay

POLL_S = 0.25
"""How often a relayed request that waits looks whether its bot moved (or died with its replica)."""
CACHE_S = 1.0
"""How long a bot's location is trusted without asking Redis (a `moved` reply corrects it)."""


class Locator:
    """Where bots are, from the registry, remembered for a moment."""

    def __init__(self, registry: Registry, clock: Callable[[], float] = time.monotonic) -> None:
        self._registry = registry
        self._clock = clock
        self._known: dict[str, tuple[float, Holder | None]] = {}

    async def find(self, bot_id: str, fresh: bool = False) -> Holder | None:
        """The bot's holder; `fresh` asks Redis whatever is remembered."""
        now = self._clock()
        known = self._known.get(bot_id)
        if not fresh and known is not None and now - known[0] < CACHE_S:
            return known[1]
        holder = await self._registry.locate(bot_id)
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
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.bot_id = bot_id
        self._hub = hub
        self._relay = relay
        self._locator = locator
        self._grace_s = grace_s
        self._metrics = metrics
        self._clock = clock
        self._absent_since: float | None = None

    async def act(self, request: ActRequest, timeout_s: float) -> Answer:
        """Ask the bot wherever it is, following it until the deadline."""
        deadline = self._clock() + timeout_s
        fresh = False
        while True:
            remaining = deadline - self._clock()
            session = self._hub.get(self.bot_id)
            if session is not None:
                self._absent_since = None
                answer = await session.ask(request, remaining)
                if answer is not None:
                    return answer
                fresh = True
                continue
            holder = await self._find(fresh, deadline)
            if holder is None or holder.replica == self._relay.replica:
                # Nowhere (or the registry still names this replica's closed session).
                await self._wait_absent(remaining)
                fresh = True
                continue
            self._absent_since = None
            if remaining <= 0:
                raise SeatTimeout()
            answer = await self._relayed(holder, request, deadline)
            if answer is not None:
                return answer
            fresh = True

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

    async def _wait_absent(self, remaining: float) -> None:
        now = self._clock()
        if self._absent_since is None:
            self._absent_since = now
        wait = absence_wait(now - self._absent_since, self._grace_s, remaining)
        # Polled: a bot coming back to another replica wakes nothing here.
        await self._hub.wait_change(min(wait, POLL_S))

    async def _relayed(self, holder: Holder, request: ActRequest, deadline: float) -> Answer | None:
        """The answer through `holder`'s replica; None once the bot is elsewhere."""
        sent = self._clock()
        epoch = self._relay.epoch
        outcome = self._relay.ask(holder.replica, self.bot_id, request, deadline - sent)
        try:
            while True:
                remaining = deadline - self._clock()
                if remaining <= 0:
                    if self._relay.down_since is not None:
                        raise RelayUnavailable(
                            "Redis did not carry the request before its deadline"
                        )
                    raise SeatTimeout()
                # wait() leaves the future alone at the timeout (no shield to build).
                await asyncio.wait((outcome,), timeout=min(remaining, POLL_S))
                if not outcome.done():
                    if self._hub.get(self.bot_id) is not None:
                        return None  # the bot came here
                    now_held = await self._find(True, deadline)
                    if now_held != holder:
                        return None
                    if self._relay.epoch != epoch:
                        # Redis restarted (or was unreachable): what was sent may be lost.
                        epoch = self._relay.epoch
                        self._relay.ask(
                            holder.replica, self.bot_id, request, deadline - self._clock()
                        )
                    continue
                relayed = outcome.result()
                if relayed.answer is None:
                    self._locator.forget(self.bot_id)
                    return None
                total = self._clock() - sent
                self._metrics.relay_added_latency.observe(max(0.0, total - relayed.bot_s))
                return relayed.answer
        finally:
            self._relay.forget(request.request_id)

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
        if holder is not None and holder.replica != self._relay.replica:
            self._relay.notify(holder.replica, self.bot_id, notice)
