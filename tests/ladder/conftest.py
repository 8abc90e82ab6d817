"""Fixtures of the ladder's tests: a store on SQLite and on PostgreSQL.

PostgreSQL tests share one fresh schema for the test session (dropped at the
end), emptied before each test; a module marked `fresh_database` gets a schema
of its own per test. They are skipped when PostgreSQL cannot be
reached, unless ARENA_REQUIRE_SERVICES=1.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import delete, text

from ladder.models import OPERATOR_AUTHOR, AuthorRow, Base
from ladder.store import Store
from tests.support.services import postgres_schema


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A URL whose connections use a schema made for this test session; dropped afterwards."""
    with postgres_schema("arena_league_") as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database of each kind: on PostgreSQL the session's schema, or with the
    `fresh_database` mark (the store's own tests: its migrations, its fencing) a schema
    made for the test alone, dropped after it."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'arena.db'}"
    elif request.node.get_closest_marker("fresh_database") is not None:
        with postgres_schema() as url:
            yield url
    else:
        yield request.getfixturevalue("postgres_url")


@pytest.fixture
def store(db_url: str, request: pytest.FixtureRequest) -> Iterator[Store]:
    store = Store(db_url)
    shared = request.node.get_closest_marker("fresh_database") is None
    if shared and db_url.startswith("postgresql"):
        # One schema per session: empty every table before each test, but for the
        # operator's author, which the migration made and every database has.
        tables = [t for t in Base.metadata.sorted_tables if t.name != "authors"]
        names = ", ".join(f'"{table.name}"' for table in tables)
        with store.engine.begin() as connection:
            connection.execute(text(f"TRUNCATE {names} RESTART IDENTITY CASCADE"))
            connection.execute(delete(AuthorRow).where(AuthorRow.id != OPERATOR_AUTHOR))
    try:
        yield store
    finally:
        store.close()
