"""Rate bounds: token buckets, one per session, bot or peer.

A bucket holds up to `burst` tokens and refills at `rate` tokens per second;
each call takes one token or is refused. A rate of 0 means no bound. Taking
a token is a few float operations, cheap enough for every answer a bot sends.

A bound that must hold across the replicas of a tier (session opens: a bot
could otherwise open N times as many on N replicas) is an `Allowance`; this
process's own is `LocalAllowance`, the tier's lives in referee.tier.limits.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol


class TokenBucket:
    """`rate` tokens per second, at most `burst` of them saved up."""

    __slots__ = ("_clock", "_stamp", "_tokens", "burst", "rate")

    def __init__(
        self, rate: float, burst: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate = rate
        self.burst = max(1.0, burst)
        self._clock = clock
        self._tokens = self.burst
        self._stamp = clock()

    def take(self) -> bool:
        """Take one token; False (nothing taken) when the bucket is empty."""
        if self.rate <= 0:
            return True
        now = self._clock()
        tokens = min(self.burst, self._tokens + (now - self._stamp) * self.rate)
        self._stamp = now
        if tokens < 1.0:
            self._tokens = tokens
            return False
        self._tokens = tokens - 1.0
        return True

    def full(self) -> bool:
        """True when the bucket has refilled completely (its owner is idle)."""
        return self._tokens + (self._clock() - self._stamp) * self.rate >= self.burst


class KeyedBuckets:
    """One bucket per key (a bot, a peer), allowing `per_minute` takes a minute.

    The burst is the whole minute's allowance. Idle keys (full buckets) are
    forgotten when more than `max_keys` are held, so the table stays small.
    """

    def __init__(
        self,
        per_minute: int,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = 4096,
    ) -> None:
        self.per_minute = per_minute
        self._clock = clock
        self._max_keys = max_keys
        self._buckets: dict[str, TokenBucket] = {}

    def take(self, key: str) -> bool:
        """Take one of `key`'s tokens; False when it has used up its minute."""
        if self.per_minute <= 0:
            return True
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= self._max_keys:
                self._forget_idle()
            bucket = TokenBucket(self.per_minute / 60.0, self.per_minute, self._clock)
            self._buckets[key] = bucket
        return bucket.take()

    def _forget_idle(self) -> None:
        for key in [key for key, bucket in self._buckets.items() if bucket.full()]:
            del self._buckets[key]


class Allowance(Protocol):
    """`per_minute` takes a minute per key, counted wherever the allowance keeps them."""

    @property
    def per_minute(self) -> int: ...

    async def take(self, key: str) -> bool:
        """Take one of `key`'s minute; False when it has used it up."""
        ...


class LocalAllowance:
    """An Allowance counted in this process only."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self._buckets = KeyedBuckets(per_minute, clock)

    @property
    def per_minute(self) -> int:
        return self._buckets.per_minute

    async def take(self, key: str) -> bool:
        return self._buckets.take(key)
