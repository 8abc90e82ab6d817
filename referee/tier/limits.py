"""Rate bounds counted across the tier, in the relay's Redis.

A bot may reach any replica, so a bound kept by each replica alone lets it
do N times as much on N replicas. `TierAllowance` keeps one token bucket per
key in Redis (a hash `arena:rate:<name>:<key>`, updated by one Lua script
on Redis's own clock, expiring once it would be full again). While Redis
does not answer, each replica falls back to a bucket of its own, as a lone
referee counts: a bound that is briefly per replica is better than none,
or than refusing every bot because Redis is away.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from referee.limits import KeyedBuckets
from referee.tier.registry import PREFIX

log = logging.getLogger(__name__)

TIMEOUT_S = 0.5
"""Longest wait for Redis before a take falls back to this replica's bucket."""
RETRY_S = 5.0
"""After Redis failed, how long the takes use this replica's bucket before trying it again."""

# KEYS[1] the key's bucket; ARGV: rate (tokens a second), burst. Returns 1 if a token was
# taken, 0 if the bucket was empty.
TAKE = """
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
local taken = 0
if tokens >= 1 then
  tokens = tokens - 1
  taken = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('EXPIRE', KEYS[1], math.ceil(burst / rate) + 1)
return taken
"""


class TierAllowance:
    """An `referee.limits.Allowance` shared by every replica on one Redis."""

    def __init__(
        self,
        commands: aioredis.Redis,
        name: str,
        per_minute: int,
        clock: Callable[[], float] = time.monotonic,
        timeout_s: float = TIMEOUT_S,
    ) -> None:
        self._name = name
        self._timeout_s = timeout_s
        self._per_minute = per_minute
        self._script = commands.register_script(TAKE)
        self._local = KeyedBuckets(per_minute, clock)
        self._clock = clock
        self._redis_after = -math.inf
        """When to try Redis again after it failed."""

    @property
    def per_minute(self) -> int:
        return self._per_minute

    async def take(self, key: str) -> bool:
        if self._per_minute <= 0:
            return True
        if self._clock() >= self._redis_after:
            try:
                taken = await asyncio.wait_for(
                    self._script(
                        keys=[f"{PREFIX}rate:{self._name}:{key}"],
                        args=[self._per_minute / 60.0, self._per_minute],
                    ),
                    self._timeout_s,
                )
                return bool(taken)
            except (RedisError, OSError, TimeoutError) as error:
                self._redis_after = self._clock() + RETRY_S
                log.warning(
                    "%s: Redis does not answer (%s); counting on this replica for %.0f s",
                    self._name,
                    error or type(error).__name__,
                    RETRY_S,
                )
        return self._local.take(key)
