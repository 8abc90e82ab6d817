"""When this process's event loop stood still: the time no bot is charged for.

A loop held up (a paused or CPU-starved process, a long collection) delays
everything a move's clock counts: the Act's write, the read of the answer,
the hand-over to the match. Whether the stall made the deadline's own timer
late is luck; a stall that ended before it was due is as much the referee's.
So a beat every BEAT_S notes how late it ran; a lateness over STALL_S is a
stall, kept for KEPT_S, and a move's clock leaves out the stalls that
overlap it (`referee.sessions.Deadline`).
"""

from __future__ import annotations

import asyncio
import weakref
from collections import deque

__all__ = ["BEAT_S", "KEPT_S", "STALL_S", "LoopWatch"]

STALL_S = 0.02
"""How late the loop may run before the referee counts itself stalled (held up), not
merely busy."""
BEAT_S = 0.01
"""How often the watch looks: a stall shows as one beat late by as long as it lasted."""
KEPT_S = 600.0
"""How long a stall is remembered: longer than any move's time and bank."""

_watches: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LoopWatch] = (
    weakref.WeakKeyDictionary()
)


class LoopWatch:
    """The stalls of one event loop, in its own clock (`loop.time()`)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._stalls: deque[tuple[float, float]] = deque()
        self._ran = loop.time()
        self._handle = loop.call_at(self._ran + BEAT_S, self._beat)

    @classmethod
    def of(cls, loop: asyncio.AbstractEventLoop) -> LoopWatch:
        """The watch of `loop`, started on first use (one per loop)."""
        watch = _watches.get(loop)
        if watch is None:
            watch = _watches[loop] = cls(loop)
        return watch

    def _beat(self) -> None:
        now = self._loop.time()
        self._note(now)
        while self._stalls and self._stalls[0][1] < now - KEPT_S:
            self._stalls.popleft()
        self._ran = now
        self._handle = self._loop.call_at(now + BEAT_S, self._beat)

    def _note(self, now: float) -> None:
        """Keep the stall that makes the beat late at `now`, if it is one. It is counted
        from the beat before, when the loop last ran for certain: a stall is the loop's,
        so the doubt goes to the bot."""
        if now - self._ran - BEAT_S <= STALL_S:
            return
        if self._stalls and self._stalls[-1][0] == self._ran:
            self._stalls[-1] = (self._ran, now)  # the same stall, seen again
        else:
            self._stalls.append((self._ran, now))

    def stalled_s(self, since: float) -> float:
        """How long the loop stood still from `since` to now: the stalls kept, and the one
        under way if the beat is late now (whoever asks may run before the beat, in the
        turn that ends the stall)."""
        self._note(self._loop.time())
        stalled = 0.0
        for start, end in reversed(self._stalls):
            if end <= since:
                break
            stalled += end - max(start, since)
        return stalled
