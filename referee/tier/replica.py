"""A referee replica as one of a tier sharing a Redis relay.

The tier gives a replica: the registry of every bot's stream and of the
live replicas (kept fresh by a heartbeat), seat channels that reach a bot
wherever it is held, slots counted across the tier, placement of a match on
the replica holding most of its seats, and draining (take no match, send the
bots elsewhere) for rolling updates, and public watching of the matches
that another replica plays (referee.tier.public).

A replica is ready while it reaches Redis: once no heartbeat has succeeded
for `Bounds.unready_s` it takes no match (`Tier.ready` is False, and
`Tier.on_ready` hears of each change), and once its entries have expired
for the others too (`Bounds.expiry_s`) it asks its bots to move to a
replica that can serve them, as draining does.

Matches waiting for slots are served in the order they came on one replica:
only the first waiter that wants a bot tries for it. Across replicas there
is no order: each replica's first waiter asks again every SLOT_POLL_S, and
whichever asks first after a slot frees takes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

from redis.exceptions import RedisError

from referee.channels import RelayUnavailable, SeatChannel
from referee.metrics import RefereeMetrics
from referee.seat_view import SEAT_STREAMS
from referee.seats import SLOT_POLL_S, Connected
from referee.sessions import Reconnect, Replicas, Session, SessionHub
from referee.stopping import cancel_and_wait
from referee.tier.channel import REFUSALS, Locator, RelaySeatChannel
from referee.tier.outages import Outages
from referee.tier.public import PublicTier
from referee.tier.registry import DEFAULT_BOUNDS, Bounds, Listed, Registry, Replica
from referee.tier.relay import Clients, Relay

log = logging.getLogger(__name__)

PUBLISH_S = 1.0
"""How long a session's opening waits for the tier to know of it (one Redis round trip
takes milliseconds)."""


@dataclass(eq=False)
class Waiter:
    """A match of this replica waiting for slots of its bots."""

    match_id: str
    bots: frozenset[str]


class TierSeats:
    """Seats of a replica: bots held anywhere in the tier, slots counted in Redis."""

    def __init__(self, tier: Tier) -> None:
        self._tier = tier
        self._waiting: list[Waiter] = []
        """In the order they came: only the first that wants a bot tries for it."""
        self._changed = asyncio.Event()

    def channel(self, bot_id: str) -> SeatChannel:
        tier = self._tier
        return RelaySeatChannel(
            tier.hub,
            tier.relay,
            tier.locator,
            bot_id,
            tier.grace_s,
            tier.metrics,
            lambda: tier.live,
            lambda: tier.gone,
            tier.clock,
        )

    async def acquire(self, bots: Sequence[str], match_id: str) -> None:
        """Wait for a slot of every bot on the whole tier (a bot nowhere gets one).

        Waiters here are served in the order they came: one that wants a bot an
        earlier one waits for does not try, so a later match never overtakes it.
        """
        tier = self._tier
        waiter = Waiter(match_id, frozenset(bots))
        self._waiting.append(waiter)
        try:
            while True:
                if self._first(waiter) and await self._try(bots, match_id):
                    tier.held[match_id] = tuple(bots)
                    return
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), SLOT_POLL_S)
        finally:
            self._waiting.remove(waiter)
            self._wake()

    def _first(self, waiter: Waiter) -> bool:
        """No earlier waiter wants any of its bots."""
        earlier = self._waiting[: self._waiting.index(waiter)]
        return not any(other.bots & waiter.bots for other in earlier)

    async def _try(self, bots: Sequence[str], match_id: str) -> bool:
        registry = self._tier.registry
        try:
            holders = await registry.locate_many(bots)
            capacities = [1 if (h := holders[bot]) is None else h.capacity for bot in bots]
            return await registry.acquire(bots, capacities, match_id)
        except (RedisError, OSError) as error:
            log.warning("match %s: cannot count its bots' slots (%s); waiting", match_id, error)
            return False

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def release(self, bots: Sequence[str], match_id: str) -> None:
        tier = self._tier
        tier.held.pop(match_id, None)
        try:
            await tier.registry.release(bots, match_id)
        except (RedisError, OSError) as error:
            # The slots expire on their own when no heartbeat renews them.
            log.warning("match %s: cannot give back its slots (%s)", match_id, error)
        self._wake()

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
        bounds: Bounds = DEFAULT_BOUNDS,
    ) -> None:
        self.replica = replica
        self.hub = hub
        self.grace_s = grace_s
        self.metrics = metrics
        self.clock = clock
        self.clients = Clients.connect(url)
        self.bounds = bounds
        self.registry = Registry(self.clients.commands, replica, bounds)
        self.outages = Outages(clock, settle_s=2 * bounds.heartbeat_s)
        """Whether Redis served this replica well enough of late for the registry to
        say where a bot is (a session opened meanwhile is published at a later beat)."""
        self.relay = Relay(self.clients, replica, hub, metrics, self.outages, clock)
        self.relay.handle(REFUSALS, self._refusals)
        self.public = PublicTier(self.clients.commands, clock)
        """Public watching of matches played by another replica (started by the server)."""
        self.seat_views = PublicTier(self.clients.commands, clock, SEAT_STREAMS)
        """Authors' watching of their bots' seats of matches played by another replica
        (WatchSeat; started by the server)."""
        self.locator = Locator(self.registry, self.outages, clock)
        self.seats = TierSeats(self)
        self.held: dict[str, tuple[str, ...]] = {}
        """The bots of each match this replica plays (their slots are renewed each beat)."""
        self.live: list[Replica] = []
        """The live replicas (this one too), as of the last heartbeat."""
        self.gone: list[str] = []
        """The replicas whose entry expired lately without their leaving (`Beat.gone`)."""
        self.ready = False
        """This replica reaches Redis (a heartbeat succeeded within `Bounds.unready_s`)."""
        self.on_ready: list[Callable[[bool], None]] = []
        """Called with `ready` each time it changes."""
        self._orders: dict[str, int] = {}
        """The order each published session of this replica took, by session id."""
        self._made = clock()
        self._reached: float | None = None
        """When the last heartbeat succeeded."""
        self._moved = False
        """This outage's bots were asked to move."""
        self._beat: asyncio.Task[None] | None = None
        self._background: set[asyncio.Task[None]] = set()
        self._publishing: dict[str, asyncio.Task[None]] = {}
        """The publication each newly opened session has under way, by session id."""

    async def start(self) -> None:
        """Join: publish this replica and its sessions, read the inbox, beat.

        Not ready until a heartbeat succeeds (the heartbeat keeps trying).
        """
        self.hub.on_open.append(self._opened)
        self.hub.on_close.append(self._closed)
        self.relay.start()
        await self._try_beat()
        if not self.ready:
            log.warning("tier: Redis does not answer at start; not ready until a heartbeat does")
        self._beat = asyncio.create_task(self._keep_beating(), name="tier heartbeat")

    async def held_elsewhere(self, session: Session) -> bool:
        """Whether the bot of `session` (which named an instance) holds a live session of
        that instance on another replica; False when Redis does not say."""
        others = [replica.name for replica in self.live if replica.name != self.replica]
        try:
            held = await self.registry.held_by([session.bot_id], others)
        except (RedisError, OSError):
            return False
        return bool(held[session.bot_id])

    async def published(self, session: Session) -> bool:
        """Whether the tier knows `session`, just opened, is here: its publication took at
        most PUBLISH_S. One that did not is no use: the other replicas would find the bot
        nowhere (this replica cannot reach Redis, or Redis stalls)."""
        opening = self._publishing.get(session.id)
        if opening is not None:
            await asyncio.wait([opening], timeout=PUBLISH_S)
        return session.id in self._orders

    def session_replicas(self) -> list[str]:
        """The live replicas that take sessions (not draining), as of the last heartbeat."""
        return [replica.name for replica in self.live if not replica.draining]

    async def beat(self) -> None:
        """Renew this replica's part of the registry once (publishing what is not yet)."""
        for unpublished in self.hub.connected():
            opening = self._publishing.get(unpublished.id)
            if opening is not None:
                # The opening's own publication is under way: a second one could land
                # after the bot's newer session elsewhere and win over it. Waited for,
                # not cancelled with this beat.
                await asyncio.wait([opening])
            if unpublished.id not in self._orders and not unpublished.closed:
                await self._publish(unpublished)
        sessions = [
            Listed(s.bot_id, s.id, s.capacity, self._orders[s.id], s.instance)
            for s in self.hub.connected()
            if s.id in self._orders
        ]
        slots = [(bot, match) for match, bots in self.held.items() for bot in dict.fromkeys(bots)]
        beat = await self.registry.heartbeat(sessions, slots, self.draining, len(self.held))
        self._reached = self.clock()
        for bot_id, match_id in beat.lost:
            # Renewing it now could take the bot past its capacity: the match plays on
            # without the slot, and its lease (in the database) says whether it may.
            log.warning(
                "match %s: the slot of bot %s had expired or was gone; not renewed",
                match_id,
                bot_id,
            )
            if match_id in self.held:
                self.held[match_id] = tuple(b for b in self.held[match_id] if b != bot_id)
        for bot_id in beat.stale:
            stale = self.hub.get(bot_id)
            if stale is not None:
                log.info(
                    "bot %s holds a newer session on another replica; closing this one", bot_id
                )
                self.hub.close(stale)
        named = self.session_replicas()
        self.live = beat.replicas
        self.gone = beat.gone
        self.metrics.replicas_live.set(len(self.live))
        if (now := self.session_replicas()) != named:
            # Bots keeping a session on every replica open one on a replica that joined.
            changed = Replicas(tuple(now))
            for session in self.hub.connected():
                if session.instance:
                    session.send(changed)

    async def _keep_beating(self) -> None:
        while True:
            await asyncio.sleep(self.bounds.heartbeat_s)
            await self._try_beat()

    async def _try_beat(self) -> None:
        """Beat once, a beat that takes longer than a heartbeat failing; then judge readiness."""
        try:
            await asyncio.wait_for(self.beat(), self.bounds.heartbeat_s)
        except (RedisError, OSError, TimeoutError) as error:
            self.outages.failed(error)  # logs the outage's start, once
        else:
            self.outages.answered()
        reached = self._made if self._reached is None else self._reached
        silent = self.clock() - reached
        if self._reached is not None and silent < self.bounds.unready_s:
            self._moved = False
            self._set_ready(True)
            return
        self._set_ready(False)
        if silent >= self.bounds.expiry_s and not self._moved:
            # The others see this replica dead by now: its bots are better served elsewhere.
            self._moved = True
            log.warning("tier: Redis unreachable for %.1f s; asking the bots to move", silent)
            self._move_bots("this referee replica cannot reach the relay; reconnect")

    def _set_ready(self, ready: bool) -> None:
        if ready == self.ready:
            return
        self.ready = ready
        log.log(
            logging.INFO if ready else logging.WARNING,
            "tier: %s",
            "ready (Redis answers)" if ready else "not ready: Redis does not answer",
        )
        for listener in self.on_ready:
            listener(ready)

    def _opened(self, session: Session) -> None:
        self.locator.forget(session.bot_id)
        task = self._spawn(self._publish(session))
        self._publishing[session.id] = task
        task.add_done_callback(lambda _: self._publishing.pop(session.id, None))

    async def _publish(self, session: Session) -> None:
        # Of two sessions of a bot the one published last wins (a later publication
        # elsewhere closes this one at this replica's next heartbeat).
        order = await self.registry.publish(
            session.bot_id, session.id, session.capacity, session.instance
        )
        if not session.closed:
            self._orders[session.id] = order

    def _closed(self, session: Session) -> None:
        self.locator.forget(session.bot_id)
        self._orders.pop(session.id, None)
        self._spawn(self.registry.withdraw(session.bot_id, session.id))

    def _spawn(self, work: Coroutine[Any, Any, Any]) -> asyncio.Task[None]:
        async def run() -> None:
            try:
                await work
            except (RedisError, OSError) as error:
                # The next heartbeat writes the registry again.
                log.warning("tier: registry update failed (%s)", error)

        task = asyncio.create_task(run())
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    async def revoke(self, bot_id: str, credential: str) -> None:
        """End the bot's session opened with that token, wherever in the tier it is."""
        self.hub.revoke(bot_id, credential)
        # The replicas live now, not at the last heartbeat: one that joined since may
        # hold the session.
        try:
            live = await self.registry.replicas()
        except (RedisError, OSError):
            live = self.live
        peers = [replica.name for replica in live if replica.name != self.replica]
        self.relay.revoke(bot_id, credential, peers)

    async def _refusals(self, _: dict[str, Any]) -> dict[str, Any]:
        return {"ago": self.hub.refused_ago()}

    def match_ended(self, match_id: str) -> None:
        """Tell the other replicas, where a caller may wait for it, that a match ended."""
        peers = [replica.name for replica in self.live if replica.name != self.replica]
        self.relay.announce_end(match_id, peers)

    @property
    def draining(self) -> bool:
        """Whether this replica takes no more matches and sends its bots elsewhere."""
        return self.hub.draining

    async def drain(self, reason: str) -> None:
        """Take no more matches and ask this replica's bots to move to another."""
        self.hub.draining = True
        self.metrics.draining.set(1)
        with contextlib.suppress(RedisError, OSError):
            await self.beat()
        self._move_bots(reason)

    def _move_bots(self, reason: str) -> None:
        for session in self.hub.connected():
            session.send(Reconnect(reason))

    async def close(self) -> None:
        """Leave the tier (its sessions are closed by then)."""
        if self._beat is not None:
            await cancel_and_wait(self._beat)
        for task in list(self._background):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(task, 2.0)
        with contextlib.suppress(RedisError, OSError):
            await self.registry.leave()
        await self.public.close()
        await self.seat_views.close()
        await self.relay.close()
        await self.clients.close()
