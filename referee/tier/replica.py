"""A referee replica as one of a tier sharing a Redis relay.

The tier gives a replica: the registry of every bot's stream and of the
live replicas (kept fresh by a heartbeat), seat channels that reach a bot
wherever it is held, slots counted across the tier, placement of a match on
the replica holding most of its seats, and draining (take no match, send the
bots elsewhere) for rolling updates, and public watching of the matches
that another replica plays (referee.tier.public).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from redis.exceptions import RedisError

from referee.channels import RelayUnavailable, SeatChannel
from referee.metrics import RefereeMetrics
from referee.seats import SLOT_POLL_S, Connected
from referee.sessions import Reconnect, Session, SessionHub
from referee.tier.channel import Locator, RelaySeatChannel
from referee.tier.public import PublicTier
from referee.tier.registry import HEARTBEAT_S, Listed, Registry, Replica
from referee.tier.relay import Clients, Relay

log = logging.getLogger(__name__)


def listed(session: Session) -> Listed:
    """The registry's view of a session of this replica."""
    return Listed(session.bot_id, session.id, session.capacity, session.opened)


class TierSeats:
    """Seats of a replica: bots held anywhere in the tier, slots counted in Redis."""

    def __init__(self, tier: Tier) -> None:
        self._tier = tier

    def channel(self, bot_id: str) -> SeatChannel:
        tier = self._tier
        return RelaySeatChannel(
            tier.hub, tier.relay, tier.locator, bot_id, tier.grace_s, tier.metrics, tier.clock
        )

    async def acquire(self, bots: Sequence[str], match_id: str) -> None:
        """Wait for a slot of every bot on the whole tier (a bot nowhere gets one)."""
        tier = self._tier
        while True:
            try:
                holders = [await tier.locator.find(bot) for bot in bots]
                capacities = [1 if h is None else h.capacity for h in holders]
                if await tier.registry.acquire(bots, capacities, match_id):
                    tier.held[match_id] = tuple(bots)
                    return
            except (RedisError, OSError) as error:
                log.warning("match %s: cannot count its bots' slots (%s); waiting", match_id, error)
            await asyncio.sleep(SLOT_POLL_S)

    async def release(self, bots: Sequence[str], match_id: str) -> None:
        tier = self._tier
        tier.held.pop(match_id, None)
        try:
            await tier.registry.release(bots, match_id)
        except (RedisError, OSError) as error:
            # The slots expire on their own when no heartbeat renews them.
            log.warning("match %s: cannot give back its slots (%s)", match_id, error)

    async def connected(self) -> list[Connected]:
        """Raises RelayUnavailable when Redis does not answer."""
        try:
            holders = await self._tier.registry.holders()
            busy = await self._tier.registry.busy([h.bot_id for h in holders])
        except (RedisError, OSError) as error:
            raise RelayUnavailable(f"the relay (Redis) is unavailable: {error}") from error
        return [Connected(h.bot_id, h.capacity, busy[h.bot_id], h.replica) for h in holders]


class Tier:
    """This replica's membership of the tier."""

    def __init__(
        self,
        url: str,
        replica: str,
        hub: SessionHub,
        grace_s: float,
        metrics: RefereeMetrics,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.replica = replica
        self.hub = hub
        self.grace_s = grace_s
        self.metrics = metrics
        self.clock = clock
        self.clients = Clients.connect(url)
        self.registry = Registry(self.clients.commands, replica)
        self.relay = Relay(self.clients, replica, hub, metrics, clock)
        self.public = PublicTier(self.clients.commands, clock)
        """Public watching of matches played by another replica (started by the server)."""
        self.locator = Locator(self.registry, clock)
        self.seats = TierSeats(self)
        self.held: dict[str, tuple[str, ...]] = {}
        """The bots of each match this replica plays (their slots are renewed each beat)."""
        self.draining = False
        self.live: list[Replica] = []
        """The live replicas (this one too), as of the last heartbeat."""
        self._beat: asyncio.Task[None] | None = None
        self._background: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        """Join: publish this replica and its sessions, read the inbox, beat."""
        self.hub.on_open.append(self._opened)
        self.hub.on_close.append(self._closed)
        self.relay.start()
        try:
            await self.beat()
        except (RedisError, OSError) as error:
            log.warning(
                "tier: Redis is unavailable at start (%s); the heartbeat keeps trying", error
            )
        self._beat = asyncio.create_task(self._keep_beating(), name="tier heartbeat")

    async def beat(self) -> None:
        """Rewrite this replica's part of the registry once."""
        sessions = [listed(s) for s in self.hub.connected()]
        slots = [(bot, match) for match, bots in self.held.items() for bot in set(bots)]
        beat = await self.registry.heartbeat(sessions, slots, self.draining, len(self.held))
        for bot_id in beat.stale:
            session = self.hub.get(bot_id)
            if session is not None:
                log.info(
                    "bot %s holds a newer session on another replica; closing this one", bot_id
                )
                self.hub.close(session)
        self.live = beat.replicas
        self.metrics.replicas_live.set(len(self.live))

    async def _keep_beating(self) -> None:
        while True:
            await asyncio.sleep(HEARTBEAT_S)
            try:
                await self.beat()
            except (RedisError, OSError) as error:
                log.warning("tier: heartbeat failed (%s); trying again", error)

    def _opened(self, session: Session) -> None:
        self.locator.forget(session.bot_id)
        self._spawn(self._publish(session))

    async def _publish(self, session: Session) -> None:
        if not await self.registry.publish(listed(session)):
            log.info(
                "bot %s opened a later session on another replica; closing this one", session.bot_id
            )
            self.hub.close(session)

    def _closed(self, session: Session) -> None:
        self.locator.forget(session.bot_id)
        self._spawn(self.registry.withdraw(session.bot_id, session.id))

    def _spawn(self, work: Coroutine[Any, Any, Any]) -> None:
        async def run() -> None:
            try:
                await work
            except (RedisError, OSError) as error:
                # The next heartbeat writes the registry again.
                log.warning("tier: registry update failed (%s)", error)

        task = asyncio.create_task(run())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def match_ended(self, match_id: str) -> None:
        """Tell the other replicas, where a caller may wait for it, that a match ended."""
        peers = [replica.name for replica in self.live if replica.name != self.replica]
        self.relay.announce_end(match_id, peers)

    async def drain(self, reason: str) -> None:
        """Take no more matches and ask this replica's bots to move to another."""
        self.draining = True
        self.metrics.draining.set(1)
        with contextlib.suppress(RedisError, OSError):
            await self.beat()
        for session in self.hub.connected():
            session.send(Reconnect(reason))

    async def close(self) -> None:
        """Leave the tier (its sessions are closed by then)."""
        if self._beat is not None:
            self._beat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._beat
        for task in list(self._background):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(task, 2.0)
        with contextlib.suppress(RedisError, OSError):
            await self.registry.leave()
        await self.public.close()
        await self.relay.close()
        await self.clients.close()
