"""Clocks for tests: one the test moves, for the pure parts that take time as an
argument; and this process's wall clock set off, as on a host whose clock is wrong."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

import time_machine


class Clock:
    """Reads `now`; the test sets it."""

    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@contextmanager
def host_clock_off(offset: timedelta) -> Iterator[None]:
    """This process's wall clock `offset` off, and ticking, meanwhile; a database's clock
    is not (PostgreSQL's is its server's, SQLite's is read in C, not through Python)."""
    with time_machine.travel(datetime.now(UTC) + offset, tick=True):
        yield
