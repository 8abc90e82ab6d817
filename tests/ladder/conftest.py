"""Fixtures of the ladder's tests: a store on SQLite and on PostgreSQL.

PostgreSQL tests share one fresh schema for the test session (dropped at the
end), emptied before each test. They are skipped when PostgreSQL cannot be
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
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'arena.db'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    store = Store(db_url)
    if db_url.startswith("postgresql"):
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
