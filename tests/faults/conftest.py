"""Fixtures of the process-fault tests: the whole arena (`tests.support.faults.FaultArena`)
on a Redis server of the test's own (tests/conftest.py), with its slow bots.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.faults import FaultArena
from tests.support.processes import Processes
from tests.support.referee import launch_referee
from tests.support.services import RedisServer


@pytest.fixture
def fault_arena(tmp_path: Path, redis_server: RedisServer) -> Iterator[FaultArena]:
    """A referee on a fresh SQLite database, 4 slow bots, our own Redis; no worker yet."""
    procs = Processes(tmp_path)
    try:
        referee = launch_referee(tmp_path, procs)
        arena = FaultArena(tmp_path, procs, referee, redis_server)
        try:
            arena.slow_bots()
            yield arena
        finally:
            arena.close()
    finally:
        procs.close()
