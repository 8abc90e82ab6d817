"""Shared test helpers: real services (Redis, PostgreSQL) that a test may need.

A test that needs a service it cannot reach is skipped, unless
ARENA_REQUIRE_SERVICES=1 (CI), in which case it fails: a missing service
must not pass silently where it is supposed to be there.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn
from urllib.parse import quote

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import OperationalError

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


@contextmanager
def postgres_schema(prefix: str = "arena_test_") -> Iterator[str]:
    """A PostgreSQL URL whose connections use a new, empty schema; dropped afterwards."""
    admin = create_engine(
        POSTGRES_URL, connect_args={"connect_timeout": 3}, isolation_level="AUTOCOMMIT"
    )
    schema = prefix + uuid.uuid4().hex[:12]
    try:
        with admin.connect() as connection:
            connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    except OperationalError as error:
        admin.dispose()
        service_missing(f"PostgreSQL at {POSTGRES_URL} is not reachable: {error.orig}")
    sep = "&" if "?" in POSTGRES_URL else "?"
    try:
        yield f"{POSTGRES_URL}{sep}options={quote(f'-csearch_path={schema}')}"
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()
