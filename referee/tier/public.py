"""Public watching across the replicas of a tier, through the relay's Redis.

A public watcher reaches any replica; the match may be played by another.
Then, for that match:
- the watcher's replica marks it watched, `arena:watched:<match>` (expires
  after WATCHED_S, renewed every MARK_EVERY_S while it has watchers of the
  match), and reads `arena:public:<match>`, a stream of its public events as
  JSON, from the start: one reader per match and replica, fanned out to its
  watchers as a local match is (`Watchers`: a late watcher gets the latest
  view only);
- the owner checks each SCAN_S, with one pipelined EXISTS, which of its
  running matches are watched elsewhere, follows each of those as a local
  public watcher does (so the stream begins with what a late watcher gets),
  and XADDs every public event, the stream trimmed to about MAX_EVENTS and
  expiring STREAM_KEEP_S after its last event.
A match nobody watches elsewhere costs one EXISTS a second, nothing per move.

Once it publishes a match, the owner goes on until the match ends: a
publisher that stopped and started again would repeat its backlog to
readers halfway through the stream. Every entry names its publisher's run:
a stream whose run changes belongs to a new attempt of the match (aborted,
then started again), so a reader of the old one ends with match_aborted.
The stream ends with match_end or match_aborted; a reader whose owner died
ends with the stored status once the store no longer says running.

A `PublicTier` of another kind carries another stream of a match the same
way, under keys of its own: the "seat" kind, what one bot's seats see of it
(WatchSeat, referee.bot_views), whose streams are named `<match>|<bot>`.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncGenerator, Callable
from typing import Any, cast

import orjson
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from ladder.records import EventType
from referee.public import Event, StoredEnd, TooManyWatchers, Watchers, WatchUnavailable
from referee.stopping import cancel_and_wait
from referee.tier.registry import PREFIX

log = logging.getLogger(__name__)

WATCHED_S = 30
"""How long a mark that a match is watched elsewhere holds unless renewed."""
MARK_EVERY_S = 10.0
"""How often a replica renews the marks of the matches it reads for its watchers."""
SCAN_S = 1.0
"""How often the owner looks for its running matches watched elsewhere."""
MAX_EVENTS = 5_000
"""About how many public events a match's stream keeps (a long match loses its oldest)."""
STREAM_KEEP_S = 300
"""A stream expires this long after its last event (a reader still reading it finishes)."""
BATCH = 512
"""Most entries one read takes."""
BLOCK_MS = 1_000
"""How long one read of a stream blocks (the reader renews its mark and polls between)."""
POLL_S = 3.0
"""How often a reader asks the store whether the match still runs (its owner may have died)."""
END_GRACE_S = 3.0
"""How long, once the store says the match is over, its stream may take to bring the end."""
ENDS = frozenset({EventType.MATCH_END, EventType.MATCH_ABORTED})
RESTARTED = "the match was started again"
PUBLIC = "public"
"""The kind of the public streams."""


def watched_key(match_id: str, kind: str = PUBLIC) -> str:
    """The key that says some replica has watchers of `match_id`'s stream of `kind`."""
    return f"{PREFIX}watched:{match_id}" if kind == PUBLIC else f"{PREFIX}{kind}-watched:{match_id}"


def stream_key(match_id: str, kind: str = PUBLIC) -> str:
    """The stream of `match_id`'s events of `kind` (public: its public events)."""
    return f"{PREFIX}{kind}:{match_id}"


Follow = Callable[[str], AsyncGenerator[Event, None] | None]
"""A match's public events as a local public watcher gets them; None if it does not run here."""


class Remote:
    """The public events of one match another replica plays, read once for the watchers here."""

    def __init__(
        self,
        redis: aioredis.Redis,
        match_id: str,
        ended: StoredEnd,
        clock: Callable[[], float],
        on_done: Callable[[Remote], None],
        kind: str = PUBLIC,
    ) -> None:
        self.match_id = match_id
        self.kind = kind
        self.watchers = Watchers()
        self.watching = 0
        """The watchers here, joined or waiting for the catch-up."""
        self.caught_up = asyncio.Event()
        self.error: Exception | None = None
        self._redis = redis
        self._ended = ended
        self._clock = clock
        self._on_done = on_done
        self.task = asyncio.create_task(self._run(), name=f"public reader {match_id}")

    async def _run(self) -> None:
        try:
            await self._follow()
        except (RedisError, OSError) as error:
            self.error = WatchUnavailable(f"the relay (Redis) is unavailable: {error}")
        except asyncio.CancelledError:
            # The last watcher has gone (none to tell), or this replica stops.
            self.error = WatchUnavailable("this referee replica is stopping; watch again")
            raise
        except Exception as error:
            log.warning(
                "match %s: its %s events cannot be read: %r", self.match_id, self.kind, error
            )
            self.error = error
        finally:
            self.caught_up.set()
            self.watchers.close()
            self._on_done(self)

    async def _follow(self) -> None:
        key = stream_key(self.match_id, self.kind)
        await self._redis.set(watched_key(self.match_id, self.kind), b"1", ex=WATCHED_S)
        marked = polled = self._clock()
        last: bytes | str = "0-0"
        run: bytes | None = None
        ending: Event | None = None
        ends_by = 0.0
        while True:
            # What the stream holds already is read without blocking, so that the first
            # watchers join after it: they get the latest view only, as they would locally.
            block = BLOCK_MS if self.caught_up.is_set() else None
            reply = cast(
                list[list[Any]], await self._redis.xread({key: last}, count=BATCH, block=block)
            )
            entries = cast(list[tuple[bytes, dict[bytes, bytes]]], reply[0][1] if reply else [])
            for entry_id, fields in entries:
                last = entry_id
                run = run or fields[b"run"]
                if fields[b"run"] != run:
                    self.watchers.put({"type": EventType.MATCH_ABORTED, "reason": RESTARTED})
                    return
                event: Event = orjson.loads(fields[b"event"])
                self.watchers.put(event)
                if event["type"] in ENDS:
                    return
            if len(entries) < BATCH:
                self.caught_up.set()
            now = self._clock()
            if now - marked >= MARK_EVERY_S:
                await self._redis.set(watched_key(self.match_id, self.kind), b"1", ex=WATCHED_S)
                marked = now
            if ending is not None and now >= ends_by:
                self.watchers.put(ending)
                return
            if ending is None and now - polled >= POLL_S:
                polled = now
                ending = await self._ended()
                ends_by = now + END_GRACE_S


class PublicTier:
    """This replica's part of public watching across the tier: reading and publishing
    (the streams of `kind`: public, or another kind of stream of a match)."""

    def __init__(
        self,
        redis: aioredis.Redis,
        clock: Callable[[], float] = time.monotonic,
        kind: str = PUBLIC,
    ) -> None:
        self._redis = redis
        self._clock = clock
        self._kind = kind
        self._remotes: dict[str, Remote] = {}
        self._published: dict[str, asyncio.Task[None]] = {}
        self._scanning: asyncio.Task[None] | None = None
        self._down = False

    # -- the watchers' side ---------------------------------------------------------------

    async def watch(self, match_id: str, ended: StoredEnd) -> AsyncGenerator[Event, None]:
        """The public events of `match_id`, played by another replica, until it ends.

        WatchUnavailable when Redis fails; TooManyWatchers over the bound of watchers.
        """
        remote = self._remotes.get(match_id)
        if remote is None:
            remote = self._remotes[match_id] = Remote(
                self._redis, match_id, ended, self._clock, self._forget, self._kind
            )
        remote.watching += 1
        queue: asyncio.Queue[Event | None] | None = None
        try:
            await remote.caught_up.wait()
            queue = remote.watchers.join()
            while (event := await queue.get()) is not None:
                yield event
            if remote.error is not None:
                raise remote.error
        finally:
            if queue is not None:
                remote.watchers.leave(queue)
            remote.watching -= 1
            if not remote.watching:
                remote.task.cancel()
                self._forget(remote)

    def _forget(self, remote: Remote) -> None:
        if self._remotes.get(remote.match_id) is remote:
            del self._remotes[remote.match_id]

    # -- the owner's side -----------------------------------------------------------------

    def start(self, running: Callable[[], list[str]], follow: Follow) -> None:
        """Publish, from now on, those of the `running` matches that are watched elsewhere."""
        self._scanning = asyncio.create_task(
            self._keep_scanning(running, follow), name="public scan"
        )

    async def _keep_scanning(self, running: Callable[[], list[str]], follow: Follow) -> None:
        while True:
            await asyncio.sleep(SCAN_S)
            try:
                await self.scan(running(), follow)
            except (RedisError, OSError) as error:
                if not self._down:
                    log.warning(
                        "%s watching: Redis is unavailable (%s); retrying", self._kind, error
                    )
                self._down = True
            else:
                self._down = False

    async def scan(self, running: list[str], follow: Follow) -> None:
        """Begin publishing those of `running` that some replica marks watched."""
        live = set(running)
        for match_id in [m for m, task in self._published.items() if m not in live and task.done()]:
            del self._published[match_id]
        unseen = [match_id for match_id in running if match_id not in self._published]
        if not unseen:
            return
        async with self._redis.pipeline(transaction=False) as pipe:
            for match_id in unseen:
                pipe.exists(watched_key(match_id, self._kind))
            found = await pipe.execute()
        for match_id, watched in zip(unseen, found, strict=True):
            events = follow(match_id) if watched else None
            if events is not None:
                self._published[match_id] = asyncio.create_task(
                    self._publish(match_id, events), name=f"public publisher {match_id}"
                )

    async def _publish(self, match_id: str, events: AsyncGenerator[Event, None]) -> None:
        key = stream_key(match_id, self._kind)
        run = uuid.uuid4().hex
        fresh = True
        try:
            async for event in events:
                entry: dict[Any, Any] = {"run": run, "event": orjson.dumps(event)}
                async with self._redis.pipeline(transaction=fresh) as pipe:
                    if fresh:
                        # An earlier attempt's stream: a reader who comes now must not read it.
                        pipe.delete(key)
                    pipe.xadd(key, entry, maxlen=MAX_EVENTS, approximate=True)
                    pipe.expire(key, STREAM_KEEP_S)
                    await pipe.execute()
                fresh = False
        except (RedisError, OSError, TooManyWatchers) as error:
            # Given up until the match ends: starting again would repeat the backlog.
            log.warning(
                "match %s: its %s events are no longer published for other replicas (%s)",
                match_id,
                self._kind,
                error,
            )
        finally:
            await events.aclose()

    async def close(self, grace_s: float = 2.0) -> None:
        """Stop publishing (what is under way gets `grace_s` to finish) and reading."""
        if self._scanning is not None:
            self._scanning.cancel()
        publishing = list(self._published.values())
        if publishing:
            await asyncio.wait(publishing, timeout=grace_s)
        tasks = [*publishing, *(remote.task for remote in self._remotes.values())]
        if self._scanning is not None:
            tasks.append(self._scanning)
        await cancel_and_wait(*tasks)
