"""A clock the test moves, for the pure parts that take time as an argument."""

from __future__ import annotations


class Clock:
    """Reads `now`; the test sets it."""

    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now
