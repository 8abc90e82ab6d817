"""Fixtures for the workers' tests: a referee, bot processes, `arena worker`, Redis.

Everything runs as real processes over loopback (helpers in tests/support:
`processes`, `referee`, `workers`); every process is stopped when its test
ends and every wait is bounded.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.processes import Processes
from tests.support.referee import launch_referee
from tests.support.services import REDIS_URL, service_missing
from tests.support.workers import Arena


@pytest.fixture
def arena(tmp_path: Path) -> Iterator[Arena]:
    """A referee process on a fresh SQLite database; processes stopped at the end."""
    procs = Processes(tmp_path)
    try:
        referee = launch_referee(tmp_path, procs)
        arena = Arena(tmp_path, procs, referee)
        try:
            yield arena
        finally:
            arena.store.close()
            referee.channel.close()
    finally:
        procs.close()


@pytest.fixture
def redis_url() -> Iterator[str]:
    """A Redis database number of its own, empty, flushed before and after the test.

    The number is claimed with SET NX in database 0 (the suite runs in several processes at
    once): an empty database is not enough, two tests could both find it empty.
    """
    import redis

    try:
        client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2)
        client.ping()
    except redis.RedisError as error:
        service_missing(f"Redis at {REDIS_URL} is not reachable: {error}")
    numbers = list(range(1, 16))
    random.shuffle(numbers)
    claim = None
    for number in numbers:
        # Expires on its own should a test process be killed before it lets go.
        if client.set(f"arena:test:db:{number}", os.getpid(), nx=True, ex=3600):
            candidate = redis.Redis.from_url(f"{REDIS_URL}/{number}")
            if candidate.dbsize() == 0:
                claim = candidate, number
                break
            candidate.close()
            client.delete(f"arena:test:db:{number}")
    if claim is None:
        client.close()
        service_missing("no empty Redis database number (1..15) to test in")
    db, number = claim
    db.flushdb()
    try:
        yield f"{REDIS_URL}/{number}"
    finally:
        db.flushdb()
        db.close()
        client.delete(f"arena:test:db:{number}")
        client.close()
