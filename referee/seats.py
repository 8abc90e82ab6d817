"""How a match reaches its bots: a seat channel per bot, and their capacity.

A bot declares how many matches it plays at once; a match waits until every
one of its bots has a free slot. A lone referee counts slots in memory
(`LocalSeats`); replicas of a tier count them in Redis, across the tier
(`tier.TierSeats`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from referee.channels import SeatChannel
from referee.sessions import LocalSeatChannel, SessionHub

SLOT_POLL_S = 0.5
"""How often a match waiting for a slot looks again (sessions that open with more capacity)."""


@dataclass(frozen=True)
class Connected:
    """A connected bot: its granted capacity, the matches it plays now, who holds its stream."""

    bot_id: str
    capacity: int
    busy: int
    replica: str


class Seats(Protocol):
    """The seat channels and slots of the matches of one referee."""

    def channel(self, bot_id: str) -> SeatChannel:
        """A channel to `bot_id` for one match."""
        ...

    async def acquire(self, bots: Sequence[str], match_id: str) -> None:
        """Wait until every bot has a free slot, and take one of each for `match_id`."""
        ...

    async def release(self, bots: Sequence[str], match_id: str) -> None:
        """Give back what `acquire` took."""
        ...

    async def connected(self) -> list[Connected]:
        """Every bot connected now (to any replica), with the matches it plays.

        Raises RelayUnavailable when the tier's shared view cannot be read.
        """
        ...


class LocalSeats:
    """Seats of a lone referee: its own sessions, slots counted in memory."""

    def __init__(
        self,
        hub: SessionHub,
        grace_s: float,
        replica: str,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._hub = hub
        self._grace_s = grace_s
        self._replica = replica
        self._clock = clock
        self._busy: Counter[str] = Counter()
        self._changed = asyncio.Event()

    def channel(self, bot_id: str) -> SeatChannel:
        return LocalSeatChannel(self._hub, bot_id, self._grace_s, self._clock)

    async def acquire(self, bots: Sequence[str], match_id: str) -> None:
        """A bot that is not connected gets one slot; it forfeits if it does not come in time."""
        while True:
            if all(self._busy[bot] < self._capacity(bot) for bot in bots):
                self._busy.update(bots)
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), SLOT_POLL_S)

    def _capacity(self, bot: str) -> int:
        session = self._hub.get(bot)
        return session.capacity if session is not None else 1

    async def release(self, bots: Sequence[str], match_id: str) -> None:
        self._busy.subtract(bots)
        self._changed.set()
        self._changed = asyncio.Event()

    async def connected(self) -> list[Connected]:
        return [
            Connected(s.bot_id, s.capacity, self._busy[s.bot_id], self._replica)
            for s in self._hub.connected()
        ]
