"""Shared test helpers: real services (Redis, PostgreSQL) that a test may need.

A test that needs a service it cannot reach is skipped, unless
ARENA_REQUIRE_SERVICES=1 (CI), in which case it fails: a missing service
must not pass silently where it is supposed to be there.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

REQUIRE_SERVICES = os.environ.get("ARENA_REQUIRE_SERVICES") == "1"

POSTGRES_URL = os.environ.get(
    "ARENA_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
REDIS_URL = os.environ.get("ARENA_TEST_REDIS_URL", "redis://127.0.0.1:6379")


def service_missing(message: str) -> NoReturn:
    """Skip the test because a service is unreachable, or fail under ARENA_REQUIRE_SERVICES=1."""
    if REQUIRE_SERVICES:
        pytest.fail(f"{message} (ARENA_REQUIRE_SERVICES=1)")
    pytest.skip(message)
