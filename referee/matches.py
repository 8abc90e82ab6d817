"""The matches of this referee: started once per id, watched, shut down cleanly.

`MatchManager.start` is idempotent by match id: a running or finished match
is returned as it is, never played twice; an aborted one (its referee died or
stopped) is played again from the start.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import assert_never

from sqlalchemy.exc import OperationalError

import games
from ladder import recording
from ladder.challenges import NO_QUOTAS, ChallengeQuotas
from ladder.records import EventType, MatchEnd, MatchResult, MatchStatus, StrikeKind
from ladder.store import (
    Conflict,
    Lease,
    Match,
    MatchRequest,
    NotFound,
    Replay,
    Store,
)
from referee.channels import ArenaFault, SeatChannel
from referee.metrics import RefereeMetrics
from referee.public import Projector, PublicMatch, RemoteMatches
from referee.runner import Event, Limits, MatchRunner
from referee.seats import Connected, Seats

log = logging.getLogger(__name__)

WAIT_POLL_S = 2.0
"""How often a wait for a match another replica plays reads its status, lacking word of its end."""
STORE_RETRY_S = 300.0
"""How long a finished match's result may wait for the database before the match is aborted."""
LEASE_LOST = "this referee replica lost its lease on the match"
"""What watchers of a match are told when this replica stops playing it, its claim lost."""


Starter = Callable[[MatchRequest], Awaitable[Match]]
"""Starts a match, or finds it by id (MatchManager.start; in a tier, placement's start)."""


class BadMatch(ValueError):
    """A match request that cannot be played; the message says why."""


class Unavailable(BadMatch):
    """This referee takes no new match now (another may): the caller asks again."""


class ShuttingDown(Unavailable):
    """The referee is stopping: it takes no new match (another referee may)."""


@dataclass(frozen=True)
class Bounds:
    """What a match request may ask for."""

    min_deadline_ms: int = 10
    max_deadline_ms: int = 60_000


def ending(match: Match) -> Event:
    """The last event of a match no longer running, from what is stored."""
    if match.result is not None:
        return {"type": EventType.MATCH_END, "result": match.result.to_json()}
    return {"type": "match_" + match.status, "reason": match.reason}


class MatchManager:
    """Starts, tracks and stops the matches of one referee process."""

    def __init__(
        self,
        store: Store,
        seats: Seats,
        limits: Limits,
        metrics: RefereeMetrics,
        replica: str = "referee",
        lease_s: float = 15.0,
        bounds: Bounds = Bounds(),
        clock: Callable[[], float] = time.monotonic,
        on_end: Callable[[str], None] = lambda match_id: None,
        remote: RemoteMatches | None = None,
        quotas: ChallengeQuotas = NO_QUOTAS,
    ) -> None:
        self._store = store
        self._quotas = quotas
        """Each author's challenges, counted when one of its matches is stored or restarted."""
        self._remote = remote
        self._on_end = on_end
        self._awaited: dict[str, asyncio.Event] = {}
        self._seats = seats
        self._replica = replica
        self._lease_s = lease_s
        self._lease = Lease(replica, lease_s)
        self._limits = limits
        self._metrics = metrics
        self._bounds = bounds
        self._clock = clock
        self._tasks: dict[str, asyncio.Task[None]] = {}
        # The matches not yet played to their result (a lost lease stops them), and
        # those of them being stopped for that.
        self._playing: set[str] = set()
        self._lost: set[str] = set()
        self._events: dict[str, list[Event]] = {}
        self._watchers: dict[str, list[asyncio.Queue[Event | None]]] = {}
        self._requests: dict[str, MatchRequest] = {}
        # Only the running matches that someone watches in public: the others pay nothing.
        self._public: dict[str, PublicMatch] = {}
        self._stopping = False
        self.played = 0
        """Matches this manager played to the end and stored, since it started."""
        # One start at a time: concurrent StartMatch calls with one id must not
        # both insert the match (IntegrityError) nor both restart an aborted one.
        self._starting = asyncio.Lock()

    @property
    def stopping(self) -> bool:
        """True once the referee takes no new match."""
        return self._stopping

    def running(self) -> list[str]:
        """Ids of the matches being played now."""
        return list(self._tasks)

    def running_request(self, match_id: str) -> MatchRequest | None:
        """The request (with its seed) of a match played here now; None for any other."""
        return self._requests.get(match_id)

    async def keep_leases(self) -> None:
        """Until cancelled: renew the claims on the matches played here, abort others' that expired.

        Renewing three times a lease keeps a claim alive through a slow database
        write; a replica that died stops renewing, and after its lease its
        matches are aborted here and played again by the workers that asked.
        A claim this replica could not renew is lost: it stops playing that match.
        """
        while True:
            await asyncio.sleep(self._lease_s / 3)
            playing = self.running()
            try:
                renewed = await asyncio.to_thread(self._store.renew_leases, self._lease, playing)
                self._lose([match_id for match_id in playing if match_id not in renewed])
                aborted = await asyncio.to_thread(
                    self._store.abort_abandoned, "its referee stopped renewing its lease"
                )
            except OperationalError as error:
                log.warning("leases: the database is unavailable (%s); trying again", error.orig)
                continue
            if aborted:
                log.warning(
                    "aborted %d matches whose referee stopped renewing their lease: %s",
                    len(aborted),
                    ", ".join(aborted),
                )

    def _lose(self, match_ids: list[str]) -> None:
        """Stop playing these matches: their claims are no longer this replica's.

        The database aborted them meanwhile (this replica's renewals failed for
        longer than a lease), maybe another replica plays them now: their result
        would not be ours to store. A match whose result is in hand is left to
        finish_match, which refuses it.
        """
        for match_id in match_ids:
            task = self._tasks.get(match_id)
            if task is not None and match_id in self._playing and match_id not in self._lost:
                log.warning("match %s: %s; it stops here", match_id, LEASE_LOST)
                self._lost.add(match_id)
                task.cancel()

    async def start(self, request: MatchRequest) -> Match:
        """Play `request` unless a match with its id exists; returns the match."""
        if self._stopping:
            raise ShuttingDown("the referee is shutting down")
        await asyncio.to_thread(self._check, request)
        # Shielded: a caller that goes away mid-call (its RPC cancelled, e.g. a worker
        # killed) must not leave the match stored as running with no task playing it.
        return await asyncio.shield(self._start(request))

    async def _start(self, request: MatchRequest) -> Match:
        async with self._starting:
            # Checked again under the lock: shutdown takes it to list what runs.
            if self._stopping:
                raise ShuttingDown("the referee is shutting down")
            match, created = await asyncio.to_thread(
                self._store.create_match, request, self._lease, self._quotas
            )
            if (
                not created
                and match.status == MatchStatus.ABORTED
                and request.id not in self._tasks
            ):
                # Only one replica restarts it: the others find it running.
                match, created = await asyncio.to_thread(
                    self._store.restart_match, request.id, self._lease, self._quotas
                )
            if created:
                self._events[request.id] = []
                self._requests[request.id] = match.request
                # The stored request: it holds the seed the store drew if the caller gave none.
                self._tasks[request.id] = asyncio.create_task(
                    self._run(match.request), name=f"match {request.id}"
                )
        return match

    def _check(self, request: MatchRequest) -> None:
        try:
            spec = games.get(request.game)
            spec.check_players(request.players)
            spec.resolve_options(request.options, request.players)
        except ValueError as error:
            raise BadMatch(str(error)) from None
        if len(request.bot_ids) != request.players:
            raise BadMatch(
                f"{request.players} players need {request.players} bots, got {len(request.bot_ids)}"
            )
        if not self._bounds.min_deadline_ms <= request.deadline_ms <= self._bounds.max_deadline_ms:
            raise BadMatch(
                f"deadline_ms must be {self._bounds.min_deadline_ms}..{self._bounds.max_deadline_ms}, got {request.deadline_ms}"
            )
        for bot_id in set(request.bot_ids):
            try:
                bot = self._store.bot(bot_id)
            except NotFound as error:
                raise BadMatch(str(error)) from None
            if request.game not in bot.games:
                raise BadMatch(
                    f"bot {bot.name}@{bot.version} ({bot_id}) does not play {request.game}"
                )

    async def _run(self, request: MatchRequest) -> None:
        bots = list(dict.fromkeys(request.bot_ids))
        self._playing.add(request.id)
        acquired = stored = False
        try:
            await self._seats.acquire(bots, request.id)
            acquired = True
            self._metrics.matches_running.inc()
            channels: dict[str, SeatChannel] = {bot: self._seats.channel(bot) for bot in bots}
            result, replays = await self._runner(request, channels).run()
            # The result in hand, a lost lease no longer stops the match: finish_match refuses it.
            self._playing.discard(request.id)
            await self._store_result(request.id, result, replays)
            stored = True
            # Only now: told before, a bot asking for the replay at once was refused it,
            # and a result the store then refused (a lapsed lease) had been announced.
            for channel in channels.values():
                await channel.notify(MatchEnd(request.id, result))
            self.played += 1
            self._metrics.matches_finished.labels(request.game, MatchStatus.FINISHED).inc()
            self._metrics.forfeits.labels(request.game).inc(len(result.forfeits))
            self._publish(request, {"type": EventType.MATCH_END, "result": result.to_json()})
            if request.challenger is not None:
                await self._record_challenge(request.id)
        except asyncio.CancelledError:
            if stored:
                # Finished and stored: a stop while a challenge is recorded aborts nothing.
                raise
            if request.id in self._lost:
                # The database aborted the match already, maybe another replica plays it:
                # its row is not ours to write.
                await self._aborted(request, None, LEASE_LOST)
            else:
                await self._aborted(
                    request, "the referee stopped during the match", "the referee stopped"
                )
            raise
        except ArenaFault as error:
            # Not the bots' fault: the match is played again rather than scored with strikes.
            log.warning("match %s aborted: %s", request.id, error)
            await self._aborted(request, f"{error.what}: {error}", str(error))
        except Conflict as error:
            # Another replica holds the match now (this one's lease lapsed): its result is
            # theirs, and so is its row: nothing is stored.
            log.warning("match %s: result dropped: %s", request.id, error)
            await self._aborted(request, None, str(error))
        except Exception as error:
            log.exception("match %s failed", request.id)
            # The reason is public (GetMatch, the web, the live view): the error's words
            # (a database's address, a statement's parameters) stay in the log above.
            reason = f"referee error: {type(error).__name__} (the referee's log has more)"
            await self._aborted(request, reason, reason)
        finally:
            self._playing.discard(request.id)
            self._lost.discard(request.id)
            if acquired:
                self._metrics.matches_running.dec()
                await self._seats.release(bots, request.id)
            self._tasks.pop(request.id, None)
            self._close_watchers(request.id)
            self._on_end(request.id)

    def _runner(self, request: MatchRequest, channels: dict[str, SeatChannel]) -> MatchRunner:
        move_latency = self._metrics.move_latency
        latency = {
            False: move_latency.labels(request.game, "local"),
            True: move_latency.labels(request.game, "relay"),
        }
        # Metric children bound once per match: a label look-up per move costs more than the count.
        moves = self._metrics.moves.labels(request.game)

        def on_event(event: Event) -> None:
            self._publish(request, event)
            if event["type"] == EventType.ACTION:
                moves.inc()
            elif event["type"] == EventType.TICK:
                moves.inc(len(event["moves"]))

        return MatchRunner(
            request,
            channels,
            self._limits,
            on_event=on_event,
            clock=self._clock,
            on_latency=lambda seconds, relayed: latency[relayed].observe(seconds),
            on_strike=lambda kind: self._count_strike(request.game, kind),
        )

    async def _aborted(self, request: MatchRequest, stored: str | None, told: str) -> None:
        """Count the match aborted, store `stored` as its reason (unless None), tell watchers `told`.

        Storing it waits for a database that is unavailable at most a lease: by then
        the lease has lapsed, and whichever replica next renews its own aborts it.
        """
        if stored is not None:
            try:
                await self._written(
                    f"match {request.id}: storing it aborted",
                    self._lease_s,
                    self._store.abort_match,
                    request.id,
                    stored,
                    self._replica,
                )
            except OperationalError as error:
                log.warning(
                    "match %s: could not store it aborted (%s); it is aborted when its "
                    "lease lapses",
                    request.id,
                    error.orig,
                )
        self._metrics.matches_finished.labels(request.game, MatchStatus.ABORTED).inc()
        self._publish(request, {"type": EventType.MATCH_ABORTED, "reason": told})

    async def _store_result(
        self, match_id: str, result: MatchResult, replays: list[Replay]
    ) -> None:
        """Write a finished match, retrying while the database is unavailable.

        The result exists only in memory until written: a database that is
        down for a while must delay it, not lose a whole match.
        """
        await self._written(
            f"match {match_id}: storing its result",
            STORE_RETRY_S,
            self._store.finish_match,
            match_id,
            result,
            replays,
            self._replica,
        )

    async def _written(
        self, what: str, give_up_s: float, write: Callable[..., object], *args: object
    ) -> None:
        """`write(*args)` in a thread, again while the database is unavailable, with a
        back-off, for at most `give_up_s`; then its OperationalError is raised."""
        delay = 0.5
        give_up = self._clock() + give_up_s
        while True:
            try:
                await asyncio.to_thread(write, *args)
                return
            except OperationalError as error:
                if self._clock() + delay > give_up:
                    raise
                log.warning("%s failed (%s); retrying in %.1f s", what, error.orig, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 10.0)

    async def _record_challenge(self, match_id: str) -> None:
        """Record a finished challenge, unrated: no worker task asks for one. Before the
        match's task ends, so whoever waits for the match finds it recorded. A failure is
        logged and left to the workers' sweep (`recording.record_challenges`)."""
        try:
            await asyncio.to_thread(recording.record_match, self._store, match_id)
        except Exception:
            log.exception("challenge %s: recording failed; the workers' sweep records it", match_id)

    def _publish(self, request: MatchRequest, event: Event) -> None:
        self._events.setdefault(request.id, []).append(event)
        for queue in self._watchers.get(request.id, []):
            queue.put_nowait(event)
        public = self._public.get(request.id)
        if public is not None:
            public.follow(event)

    def _count_strike(self, game: str, kind: StrikeKind) -> None:
        if kind is StrikeKind.TIMEOUT:
            self._metrics.timeouts.labels(game).inc()
        elif kind is StrikeKind.ILLEGAL:
            self._metrics.illegal_moves.labels(game).inc()
        else:
            assert_never(kind)

    def _close_watchers(self, match_id: str) -> None:
        for queue in self._watchers.pop(match_id, []):
            queue.put_nowait(None)
        public = self._public.pop(match_id, None)
        if public is not None:
            public.close()
        self._events.pop(match_id, None)
        self._requests.pop(match_id, None)

    async def watch(self, match_id: str) -> AsyncGenerator[Event, None]:
        """The match's events so far, then as they happen, until it ends (or the watcher,
        closing this generator, goes: an author's seat watch may come and go)."""
        if match_id not in self._tasks:
            match = await asyncio.to_thread(self._store.match, match_id)
            for replay in await asyncio.to_thread(self._store.replays, match_id):
                for event in replay.events:
                    yield event
            yield ending(match)
            return
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        for event in self._events.get(match_id, []):
            queue.put_nowait(event)
        watchers = self._watchers.setdefault(match_id, [])
        watchers.append(queue)
        try:
            while (event := await queue.get()) is not None:
                yield event
        finally:
            if queue in watchers:
                watchers.remove(queue)

    async def watch_public(self, match_id: str) -> AsyncIterator[Event]:
        """What anyone may see of the match (referee.public): so far, then as it happens.

        In a tier, a match another replica plays is followed through Redis
        (a RemoteMatches; WatchUnavailable when Redis fails). TooManyWatchers
        when the match has its bound of public watchers already.
        """
        events = self.follow_public(match_id)
        if events is None:
            stored = await asyncio.to_thread(self._store.match, match_id)
            if (
                self._remote is not None
                and stored.status == MatchStatus.RUNNING
                and match_id not in self._tasks
            ):
                events = self._remote.watch(match_id, lambda: self.stored_end(match_id))
            else:
                events = self._project_stored(stored)
        async with contextlib.aclosing(events):
            async for event in events:
                yield event

    def follow_public(self, match_id: str) -> AsyncGenerator[Event, None] | None:
        """The public events of a match this replica plays, as a public watcher gets them.

        None when no such match runs here.
        """
        request = self._requests.get(match_id)
        if request is None:
            return None
        shared = self._public.get(match_id)
        if shared is None:
            shared = self._public[match_id] = PublicMatch(request, self._events[match_id])
        return self._follow_shared(match_id, shared)

    async def _follow_shared(
        self, match_id: str, shared: PublicMatch
    ) -> AsyncGenerator[Event, None]:
        queue = shared.join()
        try:
            while (shown := await queue.get()) is not None:
                yield shown
        finally:
            shared.leave(queue)
            if not shared.watched and self._public.get(match_id) is shared:
                del self._public[match_id]

    async def _project_stored(self, stored: Match) -> AsyncGenerator[Event, None]:
        projector = Projector(stored.request)
        async for event in self.watch(stored.request.id):
            for public in projector.project(event):
                yield public

    async def stored_end(self, match_id: str) -> Event | None:
        """The match's stored end as a public event; None while the store says it runs."""
        match = await asyncio.to_thread(self._store.match, match_id)
        if match.status == MatchStatus.RUNNING:
            return None
        (public,) = Projector(match.request).project(ending(match))
        return public

    async def wait(self, match_id: str) -> Match:
        """The match once it is no longer running, here or on another replica."""
        while True:
            task = self._tasks.get(match_id)
            if task is not None:
                await asyncio.wait([task])
            # Before reading: word of the end that comes meanwhile is kept.
            ended = self._awaited.setdefault(match_id, asyncio.Event())
            match = await asyncio.to_thread(self._store.match, match_id)
            if match.status != MatchStatus.RUNNING:
                self._awaited.pop(match_id, None)
                return match
            if match_id not in self._tasks:
                # Played by another replica, which says when it ends (`ended_elsewhere`);
                # the poll covers a word lost. The caller's deadline bounds the wait.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(ended.wait(), WAIT_POLL_S)

    def ended_elsewhere(self, match_id: str) -> None:
        """Another replica says `match_id` has ended: wake whoever waits for it here."""
        ended = self._awaited.pop(match_id, None)
        if ended is not None:
            ended.set()

    def stop_taking(self) -> None:
        """Take no new match from now on (StartMatch fails ShuttingDown)."""
        self._stopping = True

    async def shutdown(self, grace_s: float) -> dict[str, list[str]]:
        """Stop taking matches; let running ones finish for `grace_s`, abort the rest."""
        # Under the start lock: a start under way ends first, and its match is listed.
        async with self._starting:
            self._stopping = True
            tasks = dict(self._tasks)
        if tasks:
            await asyncio.wait(list(tasks.values()), timeout=grace_s)
        aborted = [match_id for match_id, task in tasks.items() if not task.done()]
        for match_id in aborted:
            tasks[match_id].cancel()
        if aborted:
            await asyncio.wait([tasks[m] for m in aborted])
        finished = [match_id for match_id in tasks if match_id not in aborted]
        return {"finished": finished, "aborted": aborted}

    async def connected(self) -> list[Connected]:
        """Every bot connected now, with the matches it plays (on every replica of a tier)."""
        return await self._seats.connected()
