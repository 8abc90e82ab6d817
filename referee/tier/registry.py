"""The live view the referee replicas share in Redis: who holds which bot, and who is alive.

- `arena:tier:sessions` (hash, bot id -> `<session>|<order>|<capacity>|<replica>`)
  and `arena:tier:sessions:until` (sorted set, bot id scored by the entry's
  expiry): the replica holding the bot's stream, the session, its capacity.
  The replica that opens a session publishes it at once, taking its `order`
  from the counter `arena:tier:order`; every replica renews the expiry of the
  entries that still name its sessions each heartbeat. Of two live sessions
  of one bot the one published last wins: the other replica's heartbeat
  finds a higher order and closes its own, stale one (a half-open stream
  the bot has left), unless both name the same instance (`Hello.instance`:
  one bot process holding a session on each replica), whose sessions stand
  side by side.
- `arena:tier:instances` (hash, bot id -> the instance of its entry above).
- `arena:tier:held` (hash, `<bot>|<replica>` -> `<session>|<instance>`) and
  `arena:tier:held:until` (sorted set, by expiry): every replica holding a
  session of the bot, renewed by that replica's heartbeat. A match is placed
  where most of its bots hold a session of their entry's instance.
- `arena:tier:replicas` (hash, name -> JSON of whether it drains and its counts)
  and `arena:tier:replicas:until` (sorted set, name scored by expiry): every
  replica.
- `arena:tier:slots:<bot>` (sorted set, `<replica>|<match>` scored by expiry):
  the matches a bot plays now on any replica, bounded by its capacity. A
  heartbeat extends only the slots that are still there: one that expired
  or was taken away is reported lost, never added again over the capacity.

Time is Redis's: every expiry is written and compared inside a script from
`TIME`, in milliseconds, so the replicas' own clocks never meet. An entry
whose expiry passed is reported stale for `tombstone_s`, then removed by
the next heartbeat of any replica; and every key has an expiry of its own,
renewed by each write, so a tier that is gone leaves nothing in Redis. The
order counter, when missing (Redis restarted empty, or the tier was idle
past its bound), starts again from Redis's time in microseconds: a session
published after that outranks every one published before.

Every call is one Redis round trip.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson
import redis.asyncio as aioredis

PREFIX = "arena:"
REGISTRY = PREFIX + "tier:"
"""The registry's keys, apart from those of the registry before it (JSON entries, wall-clock
expiries): in a rolling update the two never read each other's entries."""
SESSIONS = REGISTRY + "sessions"
SESSIONS_UNTIL = REGISTRY + "sessions:until"
REPLICAS = REGISTRY + "replicas"
REPLICAS_UNTIL = REGISTRY + "replicas:until"
ORDER = REGISTRY + "order"
INSTANCES = REGISTRY + "instances"
HELD = REGISTRY + "held"
HELD_UNTIL = REGISTRY + "held:until"

# Redis's time in milliseconds (and in microseconds), shared by the scripts. (A number
# goes into text through string.format: Lua's own conversion writes 1.7e+15.)
NOW = """
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local now_us = tonumber(time[1]) * 1000000 + tonumber(time[2])
"""

# The values in hash `hash` of `names`, read in chunks (unpack has a bound).
VALUES = """
local function values_of(hash, names)
  local values = {}
  for first = 1, #names, 1000 do
    local chunk = redis.call('HMGET', hash, unpack(names, first, math.min(first + 999, #names)))
    for _, value in ipairs(chunk) do
      table.insert(values, value)
    end
  end
  return values
end
"""

# Drops (a thousand at most each beat) the entries of `hash` whose expiry in `untils`
# passed more than `tombstone` ago, and bounds both keys' lives; the names dropped.
SWEEP = """
local function sweep(hash, untils, tombstone, bound)
  local dead = redis.call('ZRANGEBYSCORE', untils, '-inf', string.format('(%d', now - tombstone), 'LIMIT', 0, 1000)
  if #dead > 0 then
    redis.call('HDEL', hash, unpack(dead))
    redis.call('ZREM', untils, unpack(dead))
  end
  redis.call('PEXPIRE', hash, bound)
  redis.call('PEXPIRE', untils, bound)
  return dead
end
"""

# Whether an entry's value (of `sessions`, `<session>|...`, or of `held`,
# `<session>|<instance>`) is `session`'s.
OF_SESSION = """
local function of_session(value, session)
  return value ~= false and value ~= nil and string.sub(value, 1, #session + 1) == session .. '|'
end
"""

# KEYS sessions, sessions:until, order, instances, held, held:until; ARGV bot, session,
# capacity|replica, expiry, bound, instance, replica. Takes the next order and writes the
# entry over any other (the last published wins), and the replica's `held` entry.
PUBLISH = (
    NOW
    + """
if redis.call('EXISTS', KEYS[3]) == 0 then
  redis.call('SET', KEYS[3], now_us)
end
local order = redis.call('INCR', KEYS[3])
redis.call('PEXPIRE', KEYS[3], ARGV[5])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. string.format('|%d|', order) .. ARGV[3])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[4]), ARGV[1])
redis.call('HSET', KEYS[4], ARGV[1], ARGV[6])
local field = ARGV[1] .. '|' .. ARGV[7]
redis.call('HSET', KEYS[5], field, ARGV[2] .. '|' .. ARGV[6])
redis.call('ZADD', KEYS[6], now + tonumber(ARGV[4]), field)
for i = 1, 6 do
  if i ~= 3 then
    redis.call('PEXPIRE', KEYS[i], ARGV[5])
  end
end
return order
"""
)

# KEYS sessions, sessions:until, instances, held, held:until, replicas:until, order; ARGV
# bot, session, replica, bound: removes the entries that are that session's. An entry that
# was that session's names instead a live session of the same instance on another live
# replica, if there is one (the bot's process holds a session on every replica): the bot
# is not nowhere until that replica's next heartbeat writes it.
WITHDRAW = (
    NOW
    + OF_SESSION
    + """
local field = ARGV[1] .. '|' .. ARGV[3]
if of_session(redis.call('HGET', KEYS[4], field), ARGV[2]) then
  redis.call('HDEL', KEYS[4], field)
  redis.call('ZREM', KEYS[5], field)
end
local entry = redis.call('HGET', KEYS[1], ARGV[1])
if not of_session(entry, ARGV[2]) then
  return 0
end
local instance = redis.call('HGET', KEYS[3], ARGV[1])
if instance and instance ~= '' then
  local capacity = string.match(entry, '^[^|]*|[^|]*|([^|]*)|')
  for _, replica in ipairs(redis.call('ZRANGEBYSCORE', KEYS[6], now, '+inf')) do
    local other = ARGV[1] .. '|' .. replica
    local held = replica ~= ARGV[3] and redis.call('HGET', KEYS[4], other)
    local held_until = held and tonumber(redis.call('ZSCORE', KEYS[5], other) or 0) or 0
    if held and held_until >= now then
      local session, of = string.match(held, '^([^|]*)|(.*)$')
      if of == instance then
        if redis.call('EXISTS', KEYS[7]) == 0 then
          redis.call('SET', KEYS[7], now_us)
        end
        local order = redis.call('INCR', KEYS[7])
        redis.call('PEXPIRE', KEYS[7], ARGV[4])
        redis.call('HSET', KEYS[1], ARGV[1], session .. string.format('|%d|', order) .. capacity .. '|' .. replica)
        redis.call('ZADD', KEYS[2], held_until, ARGV[1])
        return 1
      end
    end
  end
end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
return redis.call('HDEL', KEYS[1], ARGV[1])
"""
)

# KEYS sessions, sessions:until, replicas, replicas:until, instances, held, held:until,
# then one slots set per slot; ARGV expiry, tombstone, bound, replica, its JSON, the number
# of sessions, then (bot, session, order, capacity|replica, instance) per session, then
# one member per slot. Renews the expiry of each entry that still names its session (a
# session's entry is written again when it is missing, dead, or of an older order), and
# each session's `held` entry (a session of the entry's instance stands beside it);
# extends each slot still live. Returns the bots held by a later session of another
# instance, the indexes of the lost slots, the live replicas (names, then their JSON), and
# the replicas whose entry expired within the tombstone (gone without leaving).
HEARTBEAT = (
    NOW
    + VALUES
    + SWEEP
    + OF_SESSION
    + """
local expiry, tombstone, bound = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local expires = now + expiry
redis.call('HSET', KEYS[3], ARGV[4], ARGV[5])
redis.call('ZADD', KEYS[4], expires, ARGV[4])
sweep(KEYS[3], KEYS[4], tombstone, bound)
local stale = {}
local count = tonumber(ARGV[6])
local last = 6 + 5 * count
for i = 7, last, 5 do
  local bot, session, order, instance = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2]), ARGV[i + 4]
  local held = redis.call('HGET', KEYS[1], bot)
  local mine = of_session(held, session)
  local later = false
  if held and not mine then
    local held_order = tonumber(string.match(held, '^[^|]*|(%d+)|'))
    local held_until = tonumber(redis.call('ZSCORE', KEYS[2], bot) or 0)
    later = held_order > order and held_until >= now
  end
  local sibling = later and instance ~= '' and redis.call('HGET', KEYS[5], bot) == instance
  if later and not sibling then
    table.insert(stale, bot)
  else
    if not later then
      if not mine then
        redis.call('HSET', KEYS[1], bot, session .. '|' .. ARGV[i + 2] .. '|' .. ARGV[i + 3])
        redis.call('HSET', KEYS[5], bot, instance)
      end
      redis.call('ZADD', KEYS[2], expires, bot)
    end
    local field = bot .. '|' .. ARGV[4]
    redis.call('HSET', KEYS[6], field, session .. '|' .. instance)
    redis.call('ZADD', KEYS[7], expires, field)
  end
end
local dead = sweep(KEYS[1], KEYS[2], tombstone, bound)
if #dead > 0 then
  redis.call('HDEL', KEYS[5], unpack(dead))
end
redis.call('PEXPIRE', KEYS[5], bound)
sweep(KEYS[6], KEYS[7], tombstone, bound)
local lost = {}
for i = 8, #KEYS do
  local member = ARGV[last + i - 7]
  local score = redis.call('ZSCORE', KEYS[i], member)
  if score and tonumber(score) >= now then
    redis.call('ZADD', KEYS[i], 'XX', expires, member)
    redis.call('PEXPIREAT', KEYS[i], expires)
  else
    redis.call('ZREM', KEYS[i], member)
    table.insert(lost, i - 8)
  end
end
local names = redis.call('ZRANGEBYSCORE', KEYS[4], now, '+inf')
local gone = redis.call('ZRANGEBYSCORE', KEYS[4], string.format('%d', now - tombstone), string.format('(%d', now))
return {stale, lost, names, values_of(KEYS[3], names), gone}
"""
)

# KEYS a hash and its expiries: the live entries (names, then values).
LIVE = (
    NOW
    + VALUES
    + """
local names = redis.call('ZRANGEBYSCORE', KEYS[2], now, '+inf')
return {names, values_of(KEYS[1], names)}
"""
)

# KEYS sessions, sessions:until; ARGV bots: each bot's entry and expiry, then Redis's time.
LOCATE = (
    NOW
    + """
local values = redis.call('HMGET', KEYS[1], unpack(ARGV))
local untils = redis.call('ZMSCORE', KEYS[2], unpack(ARGV))
return {values, untils, now}
"""
)

# KEYS sessions, instances, held, held:until; ARGV the number of bots, the bots, then the
# replicas: per bot, the replicas among them whose live `held` entry is a session of the
# bot's instance (without an instance, its entry's own session).
HELD_BY = (
    NOW
    + OF_SESSION
    + """
local bots = tonumber(ARGV[1])
local found = {}
for i = 2, bots + 1 do
  local bot = ARGV[i]
  local instance = redis.call('HGET', KEYS[2], bot) or ''
  local entry = redis.call('HGET', KEYS[1], bot)
  local primary = entry and string.match(entry, '^[^|]*') or nil
  local replicas = {}
  for j = bots + 2, #ARGV do
    local field = bot .. '|' .. ARGV[j]
    local value = redis.call('HGET', KEYS[3], field)
    local expires = tonumber(redis.call('ZSCORE', KEYS[4], field) or 0)
    if value and expires >= now then
      local ours
      if instance ~= '' then
        ours = string.sub(value, -(#instance + 1)) == '|' .. instance
      else
        ours = primary ~= nil and of_session(value, primary)
      end
      if ours then
        table.insert(replicas, ARGV[j])
      end
    end
  end
  table.insert(found, replicas)
end
return found
"""
)

# KEYS one slots set per bot: how many live slots each holds.
BUSY = (
    NOW
    + """
local counts = {}
for i, key in ipairs(KEYS) do
  counts[i] = redis.call('ZCOUNT', key, now, '+inf')
end
return counts
"""
)

# KEYS one slots set per bot; ARGV expiry, member, then one capacity per key.
# Takes a slot of every bot, or of none when one of them is full (1 or 0).
ACQUIRE = (
    NOW
    + """
local member = ARGV[2]
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('(%d', now))
  if not redis.call('ZSCORE', key, member)
     and redis.call('ZCARD', key) >= tonumber(ARGV[2 + i]) then
    return 0
  end
end
local expires = now + tonumber(ARGV[1])
for _, key in ipairs(KEYS) do
  redis.call('ZADD', key, expires, member)
  redis.call('PEXPIREAT', key, expires)
end
return 1
"""
)


@dataclass(frozen=True)
class Bounds:
    """How often a replica beats and how long what it writes lives (short in tests)."""

    heartbeat_s: float = 1.0
    """How often a replica renews its part of the registry."""
    expiry_s: float = 5.0
    """How long an entry holds unless renewed: several beats, so a slow beat loses nothing."""
    tombstone_s: float = 60.0
    """How long an expired entry is still reported (stale), past the grace and the lease."""
    unready_s: float = 3.0
    """How long without a heartbeat that succeeds before a replica takes no match: less
    than the expiry, so it stops before the others count it dead."""

    def ms(self, seconds: float) -> int:
        return round(seconds * 1000)

    @property
    def bound_ms(self) -> int:
        """The life of a key no write renews any more."""
        return self.ms(self.expiry_s + self.tombstone_s)


DEFAULT_BOUNDS = Bounds()


@dataclass(frozen=True)
class Listed:
    """A session as this replica lists it: whose, which, its capacity, its order."""

    bot_id: str
    session_id: str
    capacity: int
    order: int
    """The number its publication took: of two sessions of a bot, the higher wins."""
    instance: str = ""
    """`Hello.instance`: sessions of one instance on several replicas stand side by side."""


@dataclass(frozen=True)
class Holder:
    """Where a bot's stream is held: the replica, the session, the capacity it declared."""

    bot_id: str
    replica: str
    session_id: str
    capacity: int
    stale: bool = False
    """The replica stopped refreshing the entry (it died, or Redis cannot reach it): reported
    for `tombstone_s` after its expiry, then gone."""


@dataclass(frozen=True)
class Replica:
    """A live referee replica as the registry shows it."""

    name: str
    draining: bool
    sessions: int
    matches: int


@dataclass(frozen=True)
class Beat:
    """What a heartbeat learnt."""

    stale: list[str]
    """Bots whose session here a later one, on another replica, replaced."""
    lost: list[tuple[str, str]]
    """(bot, match) slots of this replica that had expired or were gone: not renewed."""
    replicas: list[Replica]
    """The live replicas, by name."""
    gone: list[str]
    """Replicas whose entry expired within the tombstone, without leaving: dead, or cut
    off from Redis and still running."""


def slots_key(bot_id: str) -> str:
    """The sorted set of the matches `bot_id` plays now."""
    return f"{REGISTRY}slots:{bot_id}"


def _text(raw: bytes | str) -> str:
    return raw.decode() if isinstance(raw, bytes) else raw


class Registry:
    """One replica's access to the shared view."""

    def __init__(
        self, client: aioredis.Redis, replica: str, bounds: Bounds = DEFAULT_BOUNDS
    ) -> None:
        self.client = client
        self.replica = replica
        self.bounds = bounds
        self._publish = client.register_script(PUBLISH)
        self._withdraw = client.register_script(WITHDRAW)
        self._heartbeat = client.register_script(HEARTBEAT)
        self._live_entries = client.register_script(LIVE)
        self._locate = client.register_script(LOCATE)
        self._busy = client.register_script(BUSY)
        self._acquire = client.register_script(ACQUIRE)
        self._held_by = client.register_script(HELD_BY)

    def _tail(self, capacity: int) -> str:
        return f"{capacity}|{self.replica}"

    async def publish(self, bot_id: str, session_id: str, capacity: int, instance: str = "") -> int:
        """Say this replica holds the bot's stream; the order the session took."""
        bounds = self.bounds
        order = await self._publish(
            keys=[SESSIONS, SESSIONS_UNTIL, ORDER, INSTANCES, HELD, HELD_UNTIL],
            args=[
                bot_id,
                session_id,
                self._tail(capacity),
                bounds.ms(bounds.expiry_s),
                bounds.bound_ms,
                instance,
                self.replica,
            ],
        )
        return int(order)

    async def withdraw(self, bot_id: str, session_id: str) -> None:
        """Remove the bot's entries that still name this session (the entry names a live
        sibling session of its instance on another replica instead, if there is one)."""
        await self._withdraw(
            keys=[SESSIONS, SESSIONS_UNTIL, INSTANCES, HELD, HELD_UNTIL, REPLICAS_UNTIL, ORDER],
            args=[bot_id, session_id, self.replica, self.bounds.bound_ms],
        )

    async def heartbeat(
        self,
        sessions: Sequence[Listed],
        slots: Sequence[tuple[str, str]],
        draining: bool,
        matches: int,
    ) -> Beat:
        """Renew this replica's entries and slots, and read the live replicas.

        `slots` are (bot, match) pairs of the matches this replica plays.
        """
        bounds = self.bounds
        me = {"draining": draining, "sessions": len(sessions), "matches": matches}
        args: list[Any] = [
            bounds.ms(bounds.expiry_s),
            bounds.ms(bounds.tombstone_s),
            bounds.bound_ms,
            self.replica,
            orjson.dumps(me),
            len(sessions),
        ]
        for session in sessions:
            args += [
                session.bot_id,
                session.session_id,
                session.order,
                self._tail(session.capacity),
                session.instance,
            ]
        args += [f"{self.replica}|{match_id}" for _, match_id in slots]
        keys = [SESSIONS, SESSIONS_UNTIL, REPLICAS, REPLICAS_UNTIL, INSTANCES, HELD, HELD_UNTIL]
        keys += [slots_key(bot_id) for bot_id, _ in slots]
        stale, lost, names, values, gone = await self._heartbeat(keys=keys, args=args)
        return Beat(
            [_text(bot) for bot in stale],
            [slots[int(i)] for i in lost],
            self._replicas(names, values),
            sorted(_text(name) for name in gone),
        )

    async def leave(self) -> None:
        """Remove this replica from the view (a clean stop)."""
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.hdel(REPLICAS, self.replica)
            pipe.zrem(REPLICAS_UNTIL, self.replica)
            await pipe.execute()

    async def locate(self, bot_id: str) -> Holder | None:
        """Where `bot_id`'s stream is held, if anywhere alive."""
        holder = (await self.locate_many([bot_id]))[bot_id]
        return None if holder is None or holder.stale else holder

    async def locate_many(self, bot_ids: Sequence[str]) -> dict[str, Holder | None]:
        """Where each of `bot_ids` is held, a stale entry reported as such (one round trip)."""
        bots = list(dict.fromkeys(bot_ids))
        if not bots:
            return {}
        values, untils, now = await self._locate(keys=[SESSIONS, SESSIONS_UNTIL], args=bots)
        dead_before = int(now) - self.bounds.ms(self.bounds.tombstone_s)
        found: dict[str, Holder | None] = {}
        for bot_id, value, until in zip(bots, values, untils, strict=True):
            if value is None or until is None or float(until) < dead_before:
                found[bot_id] = None
            else:
                found[bot_id] = self._holder(bot_id, value, stale=float(until) < int(now))
        return found

    async def held_by(
        self, bot_ids: Sequence[str], replicas: Sequence[str]
    ) -> dict[str, list[str]]:
        """Which of `replicas` hold a live session of each bot, of the instance its entry
        names (one round trip)."""
        bots = list(dict.fromkeys(bot_ids))
        if not bots or not replicas:
            return {bot: [] for bot in bots}
        found = await self._held_by(
            keys=[SESSIONS, INSTANCES, HELD, HELD_UNTIL], args=[len(bots), *bots, *replicas]
        )
        return {bot: [_text(r) for r in held] for bot, held in zip(bots, found, strict=True)}

    @staticmethod
    def _holder(bot_id: str, raw: bytes | str, stale: bool = False) -> Holder:
        session, _order, capacity, replica = _text(raw).split("|", 3)
        return Holder(bot_id, replica, session, int(capacity), stale)

    async def holders(self) -> list[Holder]:
        """Every bot connected to any live replica."""
        names, values = await self._live_entries(keys=[SESSIONS, SESSIONS_UNTIL])
        found = [
            self._holder(_text(bot), value)
            for bot, value in zip(names, values, strict=True)
            if value is not None
        ]
        return sorted(found, key=lambda h: h.bot_id)

    async def replicas(self) -> list[Replica]:
        """The live replicas, by name."""
        names, values = await self._live_entries(keys=[REPLICAS, REPLICAS_UNTIL])
        return self._replicas(names, values)

    @staticmethod
    def _replicas(names: list[bytes], values: list[bytes | None]) -> list[Replica]:
        live = []
        for name, value in sorted(zip(names, values, strict=True)):
            if value is not None:
                entry = orjson.loads(value)
                live.append(
                    Replica(_text(name), entry["draining"], entry["sessions"], entry["matches"])
                )
        return live

    async def busy(self, bot_ids: Sequence[str]) -> dict[str, int]:
        """How many matches each bot plays now, on every replica."""
        if not bot_ids:
            return {}
        counts = await self._busy(keys=[slots_key(bot) for bot in bot_ids])
        return dict(zip(bot_ids, (int(c) for c in counts), strict=True))

    async def acquire(self, bots: Sequence[str], capacities: Sequence[int], match_id: str) -> bool:
        """Take one slot of every bot for `match_id`, or none if one is full."""
        taken = await self._acquire(
            keys=[slots_key(bot) for bot in bots],
            args=[
                self.bounds.ms(self.bounds.expiry_s),
                f"{self.replica}|{match_id}",
                *capacities,
            ],
        )
        return bool(taken)

    async def release(self, bots: Sequence[str], match_id: str) -> None:
        """Give back the bots' slots of `match_id`."""
        async with self.client.pipeline(transaction=False) as pipe:
            for bot in bots:
                pipe.zrem(slots_key(bot), f"{self.replica}|{match_id}")
            await pipe.execute()
