"""Fixtures of the web app's tests: a store filled by playing, and the app on it.

The store is built once for the session by `tests.support.arena.fill`.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

with warnings.catch_warnings():
    # Starlette asks for httpx2 in its test client; httpx works the same for these tests.
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from fastapi.testclient import TestClient

from ladder.store import Store
from ladder.web import create_app
from tests.support.arena import Arena, fill


@pytest.fixture(scope="session")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Arena:
    """A SQLite store filled by playing (built once for the whole session)."""
    path: Path = tmp_path_factory.mktemp("web") / "arena.db"
    return fill(f"sqlite:///{path}")


@pytest.fixture(scope="session")
def store(arena: Arena) -> Iterator[Store]:
    opened = Store(arena.url)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture(scope="session")
def client(store: Store) -> Iterator[TestClient]:
    """The app as the tests' many quick requests see it: its API bound is far above
    theirs (one test client stands for every visitor; test_security checks the bound)."""
    with TestClient(create_app(store, api_rate=10_000, api_burst=10_000)) as test_client:
        yield test_client
