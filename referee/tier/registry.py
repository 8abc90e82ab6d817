"""The live view the referee replicas share in Redis: who holds which bot, and who is alive.

- `arena:sessions` (hash, bot id -> JSON): the replica holding the bot's
  stream, the session id, its capacity and until when the entry holds. The
  replica that opens a session writes it at once; every replica refreshes
  its own each heartbeat. Of two live sessions of one bot the one opened
  last wins: the other replica's refresh finds it and closes its own, stale
  one (a half-open stream the bot has left).
- `arena:replicas` (hash, name -> JSON): every replica with its expiry,
  whether it drains, and its counts.
- `arena:slots:<bot>` (sorted set, `<replica>|<match>` scored by expiry):
  the matches a bot plays now on any replica, bounded by its capacity.

Everything expires unless refreshed, so a replica killed with SIGKILL
leaves nothing that lasts; and everything is rewritten each heartbeat, so
a Redis that restarted empty holds the whole view again within one beat.
Expiries are wall-clock seconds: the replicas' clocks agree far better
than the expiry (NTP), and Redis stays a plain store.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import orjson
import redis.asyncio as aioredis

PREFIX = "arena:"
SESSIONS = PREFIX + "sessions"
REPLICAS = PREFIX + "replicas"

HEARTBEAT_S = 1.0
"""How often a replica rewrites its part of the registry."""
EXPIRY_S = 5.0
"""How long an entry holds unless refreshed: several beats, so a slow beat loses nothing."""
TOMBSTONE_S = 60.0
"""How long an expired entry is still reported (stale) before it is gone: past the grace and the lease."""

# KEYS[1] sessions hash; ARGV: now, then (bot, value JSON, session id, opened) tuples.
# Writes each entry unless a live session of the bot opened later holds it; returns the
# bots that such a session holds (their session here is stale).
REFRESH = """
local stale = {}
local now = tonumber(ARGV[1])
for i = 2, #ARGV, 4 do
  local bot, value, session, opened = ARGV[i], ARGV[i + 1], ARGV[i + 2], tonumber(ARGV[i + 3])
  local held = redis.call('HGET', KEYS[1], bot)
  local mine = true
  if held then
    local entry = cjson.decode(held)
    mine = entry.session == session or entry['until'] < now or entry.opened < opened
  end
  if mine then
    redis.call('HSET', KEYS[1], bot, value)
  else
    table.insert(stale, bot)
  end
end
return stale
"""

# KEYS[1] sessions hash; ARGV[1] bot, ARGV[2] session id: remove the entry if it is that session's.
WITHDRAW = """
local held = redis.call('HGET', KEYS[1], ARGV[1])
if held and cjson.decode(held).session == ARGV[2] then
  return redis.call('HDEL', KEYS[1], ARGV[1])
end
return 0
"""

# KEYS: one slots set per bot; ARGV: now, until, member, then one capacity per key.
# Takes a slot of every bot, or of none when one of them is full (1 or 0).
ACQUIRE = """
local now, expiry, member = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  if not redis.call('ZSCORE', key, member)
     and redis.call('ZCARD', key) >= tonumber(ARGV[3 + i]) then
    return 0
  end
end
for _, key in ipairs(KEYS) do
  redis.call('ZADD', key, expiry, member)
end
return 1
"""


@dataclass(frozen=True)
class Listed:
    """A session as this replica lists it: whose, which, its capacity, when it opened."""

    bot_id: str
    session_id: str
    capacity: int
    opened: float


@dataclass(frozen=True)
class Holder:
    """Where a bot's stream is held: the replica, the session, the capacity it declared."""

    bot_id: str
    replica: str
    session_id: str
    capacity: int
    stale: bool = False
    """The replica stopped refreshing the entry (it died, or Redis cannot reach it): reported
    for TOMBSTONE_S after its expiry, then gone."""


@dataclass(frozen=True)
class Replica:
    """A live referee replica as the registry shows it."""

    name: str
    draining: bool
    sessions: int
    matches: int


@dataclass(frozen=True)
class Beat:
    """What a heartbeat learnt: this replica's stale sessions, and the live replicas."""

    stale: list[str]
    """Bots whose session here a later one, on another replica, replaced."""
    replicas: list[Replica]


def slots_key(bot_id: str) -> str:
    """The sorted set of the matches `bot_id` plays now."""
    return f"{PREFIX}slots:{bot_id}"


class Registry:
    """One replica's access to the shared view (every call is one Redis round trip)."""

    def __init__(
        self,
        client: aioredis.Redis,
        replica: str,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.client = client
        self.replica = replica
        self._clock = clock
        self._refresh = client.register_script(REFRESH)
        self._withdraw = client.register_script(WITHDRAW)
        self._acquire = client.register_script(ACQUIRE)

    def _session_args(self, session: Listed) -> list[Any]:
        value = {
            "replica": self.replica,
            "session": session.session_id,
            "capacity": session.capacity,
            "opened": session.opened,
            "until": self._clock() + EXPIRY_S,
        }
        return [session.bot_id, orjson.dumps(value), session.session_id, session.opened]

    async def publish(self, session: Listed) -> bool:
        """Say this replica holds the bot's stream; False if a later session holds it."""
        stale = await self._refresh(
            keys=[SESSIONS], args=[self._clock(), *self._session_args(session)]
        )
        return not stale

    async def withdraw(self, bot_id: str, session_id: str) -> None:
        """Remove the bot's entry if it still names this session."""
        await self._withdraw(keys=[SESSIONS], args=[bot_id, session_id])

    async def heartbeat(
        self,
        sessions: Sequence[Listed],
        slots: Iterable[tuple[str, str]],
        draining: bool,
        matches: int,
    ) -> Beat:
        """Rewrite this replica's entries, and read the live replicas, in one round trip.

        `slots` are (bot, match) pairs of the matches this replica plays.
        """
        now = self._clock()
        args: list[Any] = [now]
        for session in sessions:
            args += self._session_args(session)
        async with self.client.pipeline(transaction=False) as pipe:
            pipe.hset(
                REPLICAS,
                self.replica,
                orjson.dumps(
                    {
                        "until": now + EXPIRY_S,
                        "draining": draining,
                        "sessions": len(sessions),
                        "matches": matches,
                    }
                ),
            )
            for bot_id, match_id in slots:
                pipe.zadd(slots_key(bot_id), {f"{self.replica}|{match_id}": now + EXPIRY_S})
            await self._refresh(keys=[SESSIONS], args=args, client=pipe)
            pipe.hgetall(REPLICAS)
            *_, stale, replicas = await pipe.execute()
        return Beat([bot.decode() for bot in stale], self._live(replicas))

    async def leave(self) -> None:
        """Remove this replica from the view (a clean stop)."""
        await self.client.hdel(REPLICAS, self.replica)

    async def locate(self, bot_id: str) -> Holder | None:
        """Where `bot_id`'s stream is held, if anywhere alive."""
        raw = cast(bytes | None, await self.client.hget(SESSIONS, bot_id))
        return None if raw is None else self._holder(bot_id, raw)

    async def locate_many(self, bot_ids: Sequence[str]) -> dict[str, Holder | None]:
        """Where each of `bot_ids` is held (one round trip); stale entries are reported so."""
        raw = cast(list[bytes | None], await self.client.hmget(SESSIONS, list(bot_ids)))
        now = self._clock()
        found: dict[str, Holder | None] = {}
        for bot_id, value in zip(bot_ids, raw, strict=True):
            found[bot_id] = None if value is None else self._entry(bot_id, value, now)
        return found

    def _entry(self, bot_id: str, raw: bytes, now: float) -> Holder | None:
        entry = orjson.loads(raw)
        if entry["until"] < now - TOMBSTONE_S:
            return None
        return Holder(
            bot_id,
            entry["replica"],
            entry["session"],
            entry["capacity"],
            stale=entry["until"] < now,
        )

    async def holders(self) -> list[Holder]:
        """Every bot connected to any live replica."""
        raw = cast(dict[bytes, bytes], await self.client.hgetall(SESSIONS))
        found = (self._holder(bot.decode(), value) for bot, value in raw.items())
        return sorted((h for h in found if h is not None), key=lambda h: h.bot_id)

    def _holder(self, bot_id: str, raw: bytes) -> Holder | None:
        entry = orjson.loads(raw)
        if entry["until"] < self._clock():
            return None
        return Holder(bot_id, entry["replica"], entry["session"], entry["capacity"])

    async def replicas(self) -> list[Replica]:
        """The live replicas, by name."""
        return self._live(cast(dict[bytes, bytes], await self.client.hgetall(REPLICAS)))

    def _live(self, raw: dict[bytes, bytes]) -> list[Replica]:
        now = self._clock()
        live = []
        for name, value in sorted(raw.items()):
            entry = orjson.loads(value)
            if entry["until"] >= now:
                live.append(
                    Replica(name.decode(), entry["draining"], entry["sessions"], entry["matches"])
                )
        return live

    async def busy(self, bot_ids: Sequence[str]) -> dict[str, int]:
        """How many matches each bot plays now, on every replica."""
        now = self._clock()
        async with self.client.pipeline(transaction=False) as pipe:
            for bot_id in bot_ids:
                pipe.zcount(slots_key(bot_id), now, "+inf")
            counts = await pipe.execute()
        return dict(zip(bot_ids, (int(c) for c in counts), strict=True))

    async def acquire(self, bots: Sequence[str], capacities: Sequence[int], match_id: str) -> bool:
        """Take one slot of every bot for `match_id`, or none if one is full."""
        now = self._clock()
        keys = [slots_key(bot) for bot in bots]
        taken = await self._acquire(
            keys=keys, args=[now, now + EXPIRY_S, f"{self.replica}|{match_id}", *capacities]
        )
        return bool(taken)

    async def release(self, bots: Sequence[str], match_id: str) -> None:
        """Give back the bots' slots of `match_id`."""
        async with self.client.pipeline(transaction=False) as pipe:
            for bot in bots:
                pipe.zrem(slots_key(bot), f"{self.replica}|{match_id}")
            await pipe.execute()
