"""ladder.store.Store on SQLite and PostgreSQL, and the migrations against the models.

PostgreSQL tests use a fresh schema per test (dropped afterwards) in the
database of ARENA_TEST_POSTGRES_URL (default postgres@127.0.0.1:5432/test).
They are skipped when PostgreSQL cannot be reached, unless
ARENA_REQUIRE_SERVICES=1, in which case they fail.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Any

import psycopg
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, func, inspect, select

from ladder.models import Base, BotRow, MatchRow, ReplayRow
from ladder.records import Replay
from ladder.store import Conflict, Lease, NotFound, Store, make_engine, migrate
from tests.support.services import POSTGRES_URL
from tests.support.stored_matches import expire, replays_for, request_for, result_for

pytestmark = pytest.mark.fresh_database


# Bots


def test_register_returns_the_token_once_and_stores_only_its_hash(store: Store) -> None:
    bot, token = store.register_bot("alpha", "1", ["goodge", "goof"])
    assert (bot.name, bot.version, bot.games) == ("alpha", "1", ("goodge", "goof"))
    assert len(token) >= 32
    with store.session() as session:
        row = session.get(BotRow, bot.id)
        assert row is not None
        assert row.token_hash == hashlib.sha256(token.encode()).hexdigest()
        stored = [str(getattr(row, column.key)) for column in BotRow.__table__.columns]
    assert not any(token in value for value in stored), "the token itself is stored"
    assert store.bot(bot.id) == bot
    assert store.bots() == [bot]


def test_bot_by_token_finds_only_the_right_bot(store: Store) -> None:
    first, first_token = store.register_bot("alpha", "1", ["goodge"])
    second, second_token = store.register_bot("alpha", "2", ["goodge"])
    assert first_token != second_token
    assert store.bot_by_token(first_token) == first
    assert store.bot_by_token(second_token) == second
    assert store.bot_by_token(first_token + "x") is None
    assert store.bot_by_token(first_token[:-1]) is None
    assert store.bot_by_token(hashlib.sha256(first_token.encode()).hexdigest()) is None
    assert store.bot_by_token("") is None


def test_the_same_name_and_version_registers_once(store: Store) -> None:
    store.register_bot("alpha", "1", ["goodge"])
    with pytest.raises(Conflict, match="alpha@1"):
        store.register_bot("alpha", "1", ["golden10"])
    store.register_bot("alpha", "1.1", ["golden10"])
    store.register_bot("beta", "1", ["golden10"])
    assert sorted((bot.name, bot.version) for bot in store.bots()) == [
        ("alpha", "1"),
        ("alpha", "1.1"),
        ("beta", "1"),
    ]


def test_an_unknown_bot_is_not_found(store: Store) -> None:
    with pytest.raises(NotFound):
        store.bot("b-nobody")


# Matches


def test_create_match_is_idempotent_by_id(store: Store) -> None:
    request = request_for()
    match, created = store.create_match(request)
    assert created
    assert (match.request, match.status, match.result, match.reason) == (
        request,
        "running",
        None,
        "",
    )
    again, created_again = store.create_match(request_for())
    assert not created_again
    assert again == match
    assert store.match("m1") == match
    with store.session() as session:
        assert session.scalar(select(func.count()).select_from(MatchRow)) == 1


@pytest.mark.parametrize(
    "change",
    [
        {"seed": 8},
        {"bot_ids": ("b2", "b1", "b3")},
        {"options": {"rounds": "3"}},
        {"duplicate": False},
        {"deadline_ms": 251},
        {"game": "goodge"},
    ],
)
def test_a_different_request_with_the_same_id_is_a_conflict(
    store: Store, change: dict[str, object]
) -> None:
    store.create_match(request_for())
    with pytest.raises(Conflict, match="m1"):
        store.create_match(request_for(**change))
    assert store.match("m1").request == request_for()


def test_an_unknown_match_is_not_found(store: Store) -> None:
    with pytest.raises(NotFound):
        store.match("nope")
    with pytest.raises(NotFound):
        store.replays("nope")
    with pytest.raises(NotFound):
        store.finish_match("nope", result_for((0, 0, 0), "nope"), [])
    with pytest.raises(NotFound):
        store.restart_match("nope")


def test_finish_match_stores_the_result_and_the_replays(store: Store) -> None:
    store.create_match(request_for())
    result = result_for((3, 2, 1))
    store.finish_match("m1", result, replays_for(3))
    match = store.match("m1")
    assert (match.status, match.result) == ("finished", result)
    assert store.replays("m1") == replays_for(3)
    # Finished is final: a late abort changes nothing, nor does asking to play it again.
    store.abort_match("m1", "too late")
    assert store.match("m1").status == "finished"
    again, created = store.create_match(request_for())
    assert not created and again.status == "finished"


def test_json_columns_keep_what_json_carries(store: Store) -> None:
    """A game's log holds the match's 128-bit seed (beyond orjson's integers: written by
    the json module), its events text in any script and floats (written by orjson);
    both read back as they were."""
    store.create_match(request_for())
    seed = 2**127 + 12345
    events: list[Any] = [{"type": "say", "text": "Ünïcödé ♠ 黒", "at": 0.1 + 0.2}] * 3000
    replay = Replay(0, ("b1", "b2", "b3"), {"game": "golden10", "seed": seed}, events)
    store.finish_match("m1", result_for((3, 2, 1)), [replay])
    assert store.replays("m1") == [replay]


def test_finish_match_is_atomic(store: Store) -> None:
    store.create_match(request_for())
    clashing = [*replays_for(2), replays_for(1)[0]]  # game index 0 twice
    with pytest.raises(Exception):  # noqa: B017 - whatever the driver raises
        store.finish_match("m1", result_for((1, 2, 3)), clashing)
    match = store.match("m1")
    assert (match.status, match.result) == ("running", None)
    assert store.replays("m1") == []
    with store.session() as session:
        assert session.scalar(select(func.count()).select_from(ReplayRow)) == 0
    # The same match can still be finished properly afterwards.
    store.finish_match("m1", result_for((1, 2, 3)), replays_for(2))
    assert store.match("m1").status == "finished"
    assert len(store.replays("m1")) == 2


def test_abort_abandoned_marks_only_running_matches(store: Store) -> None:
    for match_id in ("a", "b", "c"):
        store.create_match(request_for(match_id))
    store.finish_match("b", result_for((0, 0, 0), "b"), [])
    aborted = store.abort_abandoned("the referee restarted")
    assert sorted(aborted) == ["a", "c"]
    for match_id in ("a", "c"):
        match = store.match(match_id)
        assert (match.status, match.reason) == ("aborted", "the referee restarted")
    assert store.match("b").status == "finished"
    assert store.abort_abandoned("again") == []


def test_abort_match_and_restart_match(store: Store) -> None:
    store.create_match(request_for())
    store.abort_match("m1", "worker lost")
    aborted = store.match("m1")
    assert (aborted.status, aborted.reason) == ("aborted", "worker lost")
    # Asking again for an aborted match finds it aborted; the referee restarts it.
    found, created = store.create_match(request_for())
    assert not created and found.status == "aborted"
    restarted, won = store.restart_match("m1")
    assert (restarted.status, restarted.reason, won) == ("running", "", True)
    assert store.match("m1") == restarted
    # Restarting a running or finished match changes nothing: of two replicas racing
    # to restart one aborted match, only the first plays it.
    assert store.restart_match("m1") == (restarted, False)
    store.finish_match("m1", result_for((1, 1, 1)), replays_for(1))
    assert store.restart_match("m1")[0].status == "finished"
    assert store.match("m1").result == result_for((1, 1, 1))


def test_an_aborted_match_is_played_again_on_a_fresh_secret_seed(store: Store) -> None:
    """Its bots saw part of the aborted attempt's deal: played again on that deal, what they
    saw of the others' cards would be theirs to use. Asking again with the request of the
    first attempt (a tournament's plan keeps its seed) still finds the match."""
    first = store.create_match(request_for())[0].seed
    seeds = {first}
    for attempt in (2, 3):
        store.abort_match("m1", "its referee died")
        assert store.create_match(request_for())[0].status == "aborted"
        restarted, won = store.restart_match("m1")
        assert won and restarted.seed not in seeds and restarted.seed.bit_length() > 64
        seeds.add(restarted.seed)
        with store.session() as session:
            assert session.scalar(select(MatchRow.attempt).where(MatchRow.id == "m1")) == attempt
        assert store.match("m1").seed == restarted.seed
        # The first attempt's request, the match as it is now: neither is a conflict.
        assert store.create_match(request_for()) == (restarted, False)
        assert store.create_match(request_for(seed=None)) == (restarted, False)
        assert store.create_match(replace(request_for(), seed=restarted.seed))[1] is False
        with pytest.raises(Conflict, match="m1"):
            store.create_match(request_for(deadline_ms=251))
    assert len(seeds) == 3
    # Not restarted when running: the seed stays.
    assert store.restart_match("m1") == (store.match("m1"), False)
    assert store.match("m1").seed in seeds - {first}


def test_a_second_store_on_the_same_database_sees_the_same_data(db_url: str) -> None:
    first = Store(db_url)
    try:
        bot, token = first.register_bot("alpha", "1", ["goof"])
        first.create_match(request_for())
    finally:
        first.close()
    second = Store(db_url)  # migrating again is a no-op
    try:
        assert second.bot_by_token(token) == bot
        assert second.match("m1").request == request_for()
    finally:
        second.close()


# Migrations


def test_migrations_produce_exactly_the_models_schema(db_url: str) -> None:
    migrate(db_url)
    engine = create_engine(db_url)
    try:
        with engine.connect() as connection:
            differences = compare_metadata(MigrationContext.configure(connection), Base.metadata)
            tables = set(inspect(connection).get_table_names())
    finally:
        engine.dispose()
    assert differences == []
    assert tables == {"alembic_version", *Base.metadata.tables}


def test_only_abandoned_matches_are_aborted(store: Store) -> None:
    """A live replica's matches (lease renewed) stay running; an expired lease, no
    lease, or the restarting replica's own earlier matches are aborted."""
    live = Lease("a", 30)
    store.create_match(request_for("live"), live)
    store.create_match(request_for("expired"), Lease("b", 30))
    expire(store, "expired")
    store.create_match(request_for("legacy"))
    store.create_match(request_for("mine"), Lease("c", 30))
    assert sorted(store.abort_abandoned("lease expired")) == ["expired", "legacy"]
    assert store.abort_abandoned("restarted", earlier_run_of="c") == ["mine"]
    assert store.match("live").status == "running"
    # Renewing keeps a claim alive past its first lease; the other replica's stays expired.
    expire(store, "live")
    assert store.renew_leases(live, ["live"]) == {"live"}
    assert store.abort_abandoned("lease expired") == []
    restarted, won = store.restart_match("expired", live)
    assert (restarted.status, won) == ("running", True)
    assert store.renew_leases(live, ["live", "expired"]) == {"live", "expired"}


def test_a_replica_finishes_or_aborts_only_what_it_holds(store: Store) -> None:
    """A replica whose lease lapsed, its match taken over by another, neither
    finishes nor aborts that match any more."""
    store.create_match(request_for(), Lease("a", 30))
    expire(store, "m1")
    assert store.abort_abandoned("lease expired") == ["m1"]
    store.restart_match("m1", Lease("b", 30))
    with pytest.raises(Conflict, match="no longer a's"):
        store.finish_match("m1", result_for((1, 2, 3)), [], owner="a")
    store.abort_match("m1", "a's referee stopped", owner="a")
    assert store.match("m1").status == "running"
    store.finish_match("m1", result_for((1, 2, 3)), [], owner="b")
    assert store.match("m1").status == "finished"


class ClosedUnderPing:
    """A psycopg connection as its socket closes under SQLAlchemy's pre-ping: the ping
    fails OperationalError, and restoring autocommit after it fails ProgrammingError (the
    order a real closed socket gave once, under load, in the web's outage test). psycopg
    had not yet marked it closed or broken: SQLAlchemy's own check did not see the loss."""

    closed = False
    broken = False

    def __init__(self) -> None:
        self.pinged = False
        self._autocommit = False

    @property
    def autocommit(self) -> bool:
        return self._autocommit

    @autocommit.setter
    def autocommit(self, value: bool) -> None:
        if self.pinged:
            raise psycopg.ProgrammingError(
                "can't change 'autocommit' now: connection in transaction status ACTIVE"
            )
        self._autocommit = value

    def cursor(self) -> ClosedUnderPing:
        return self

    def execute(self, query: str) -> None:
        self.pinged = True
        raise psycopg.OperationalError("connection socket closed")

    def close(self) -> None:
        pass


def test_a_ping_that_a_lost_connection_failed_is_a_disconnect() -> None:
    """The pool takes it for a lost connection and connects anew (a database that went
    away is then unavailable, 503 on the web), not for a bug of ours (a 500)."""
    engine = make_engine(POSTGRES_URL)
    try:
        # The pool's own pre-ping step, given the connection in that state.
        assert engine.dialect._do_ping_w_event(ClosedUnderPing()) is False  # type: ignore[arg-type]
    finally:
        engine.dispose()
