"""MatchManager's handling of a database that is down when a match ends."""

from __future__ import annotations

import asyncio
import sqlite3
from typing import Any

import pytest
from sqlalchemy.exc import OperationalError

from referee import matches
from referee.matches import MatchManager
from referee.metrics import RefereeMetrics
from referee.runner import Limits
from referee.seats import LocalSeats
from referee.sessions import SessionHub


class FlakyStore:
    """A store whose writes of a finished match fail `failures` times first."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.written: list[tuple[str, dict[str, Any]]] = []

    def finish_match(
        self, match_id: str, result: dict[str, Any], replays: list[Any], owner: str | None = None
    ) -> None:
        if self.failures:
            self.failures -= 1
            raise OperationalError(
                "UPDATE matches", {}, sqlite3.OperationalError("database is locked")
            )
        self.written.append((match_id, result))


def store_result(store: FlakyStore) -> None:
    async def run() -> None:
        manager = MatchManager(
            store, LocalSeats(SessionHub(), 1.0, "referee"), Limits(), RefereeMetrics.create()
        )  # type: ignore[arg-type]
        await manager._store_result("m1", {"scores": [1]}, [])

    asyncio.run(run())


def test_a_result_waits_for_the_database_instead_of_being_lost() -> None:
    store = FlakyStore(failures=2)
    store_result(store)
    assert store.written == [("m1", {"scores": [1]})]


def test_a_database_down_for_too_long_still_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(matches, "STORE_RETRY_S", 0.6)
    store = FlakyStore(failures=100)
    with pytest.raises(OperationalError):
        store_result(store)
    assert store.written == []
