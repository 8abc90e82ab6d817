"""The database fences the ownership of running matches (issue 22, defects 4 to 6).

Every transition of a running match is one conditional statement, so a
finish and an abort racing each other never both win; leases are renewed for
the matches a replica names, and measured by the database's clock, never by
a replica's own.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import TypeVar

import pytest
from sqlalchemy import select

from ladder import recording, tables, tournaments
from ladder.authors import create_author
from ladder.errors import LeagueError
from ladder.models import BotRow, MatchRow, TournamentMatchRow, TournamentRow
from ladder.store import Conflict, Lease, MatchCancelled, MatchRequest, NotFound, Store
from tests.support.clock import host_clock_off
from tests.support.ladder import play, register
from tests.support.stored_matches import expire, replays_for, request_for, result_for

pytestmark = pytest.mark.fresh_database

T = TypeVar("T")

ROUNDS = 50
SKEW = timedelta(seconds=10)


# Defect 4: one conditional statement per transition


def finish(store: Store, match_id: str, barrier: threading.Barrier) -> bool:
    """Replica a finishes its match; False if refused."""
    barrier.wait()
    try:
        store.finish_match(match_id, result_for((3, 2, 1), match_id), replays_for(3), "a")
    except Conflict:
        return False
    return True


def sweep(store: Store, match_id: str, barrier: threading.Barrier) -> bool | None:
    """Another replica's sweep; True if it says it aborted the match."""
    barrier.wait()
    return store.abort_abandoned("lease expired") == [match_id]


def stop(store: Store, match_id: str, barrier: threading.Barrier) -> bool | None:
    """Replica a's shutdown aborts its match; None: it does not say whether it did."""
    barrier.wait()
    store.abort_match(match_id, "the referee stopped", owner="a")
    return None


@pytest.mark.parametrize("abort", [sweep, stop], ids=["sweep", "shutdown"])
def test_a_finish_and_an_abort_racing_end_in_one_consistent_outcome(
    db_url: str, abort: Callable[[Store, str, threading.Barrier], bool | None]
) -> None:
    """Replica a finishes its match while another replica's sweep (a's lease having
    lapsed) or a's own shutdown aborts it: one of the two wins, wholly."""
    a, b = Store(db_url), Store(db_url, upgrade=False)
    barrier = threading.Barrier(2)
    outcomes: Counter[str] = Counter()
    try:
        with ThreadPoolExecutor(2) as pool:
            for n in range(ROUNDS):
                match_id = f"race{n}"
                a.create_match(request_for(match_id), Lease("a", 30))
                if abort is sweep:
                    expire(a, match_id)
                finishing = pool.submit(finish, a, match_id, barrier)
                aborting = pool.submit(abort, b, match_id, barrier)
                finished, aborted = finishing.result(), aborting.result()
                match, replays = a.match(match_id), a.replays(match_id)
                outcome = (match.status, len(replays), finished, aborted)
                if finished:
                    assert outcome in {("finished", 3, True, False), ("finished", 3, True, None)}
                else:
                    assert outcome in {("aborted", 0, False, True), ("aborted", 0, False, None)}
                outcomes[match.status] += 1
    finally:
        a.close()
        b.close()
    assert sum(outcomes.values()) == ROUNDS


def test_a_finished_match_is_final(store: Store) -> None:
    store.create_match(request_for(), Lease("a", 30))
    store.finish_match("m1", result_for((3, 2, 1)), replays_for(2), owner="a")
    store.abort_match("m1", "the referee stopped", owner="a")
    expire(store, "m1")
    assert store.abort_abandoned("lease expired") == []
    with pytest.raises(Conflict, match="it is finished"):
        store.finish_match("m1", result_for((1, 2, 3)), replays_for(1), owner="a")
    match = store.match("m1")
    assert (match.status, match.result) == ("finished", result_for((3, 2, 1)))
    assert store.replays("m1") == replays_for(2)


def test_an_aborted_match_is_not_finished_and_gets_no_replays(store: Store) -> None:
    store.create_match(request_for(), Lease("a", 30))
    expire(store, "m1")
    assert store.abort_abandoned("lease expired") == ["m1"]
    with pytest.raises(Conflict, match="it is aborted"):
        store.finish_match("m1", result_for((1, 2, 3)), replays_for(2), owner="a")
    with pytest.raises(Conflict, match="it is aborted"):
        store.finish_match("m1", result_for((1, 2, 3)), replays_for(2))
    match = store.match("m1")
    assert (match.status, match.reason, match.result) == ("aborted", "lease expired", None)
    assert store.replays("m1") == []
    with pytest.raises(NotFound):
        store.finish_match("nope", result_for((1, 2, 3), "nope"), [], owner="a")


# Defect 5: the leases renewed are those of the matches the replica plays


def test_only_the_matches_named_are_renewed(store: Store) -> None:
    """A replica renews the matches it plays; one it holds in the database but no
    longer plays is left to expire, and one taken from it is not renewed."""
    mine = Lease("a", 30)
    for match_id in ("playing", "forgotten", "taken"):
        store.create_match(request_for(match_id), mine)
        expire(store, match_id)
    store.abort_match("taken", "aborted by another replica's sweep")
    store.restart_match("taken", Lease("b", 30))
    expire(store, "taken")
    renewed = store.renew_leases(mine, ["playing", "taken", "unknown"])
    assert renewed == {"playing"}
    assert store.renew_leases(mine, []) == set()
    assert sorted(store.abort_abandoned("lease expired")) == ["forgotten", "taken"]
    assert store.match("playing").status == "running"


# Defect 6: the database's clock, not a replica's


def skewed(offset: timedelta, call: Callable[[], T]) -> T:
    """`call` made by a replica whose own clock is `offset` off."""
    with host_clock_off(offset):
        return call()


@pytest.mark.parametrize("offset", [SKEW, -SKEW], ids=["ahead", "behind"])
def test_a_replica_with_a_skewed_clock_changes_no_lease_outcome(
    store: Store, offset: timedelta
) -> None:
    """Replica a's clock is 10 s off; leases are 5 s. Neither replica's sweep aborts
    the other's live match, and each one's match, once expired, is aborted."""
    lease_a, lease_b = Lease("a", 5), Lease("b", 5)
    skewed(offset, lambda: store.create_match(request_for("a's"), lease_a))
    store.create_match(request_for("b's"), lease_b)
    assert skewed(offset, lambda: store.abort_abandoned("lease expired")) == []
    assert store.abort_abandoned("lease expired") == []
    assert skewed(offset, lambda: store.renew_leases(lease_a, ["a's"])) == {"a's"}
    assert store.renew_leases(lease_b, ["b's"]) == {"b's"}
    assert skewed(offset, lambda: store.abort_abandoned("lease expired")) == []
    assert store.abort_abandoned("lease expired") == []
    # A restart claims by the database's clock too.
    store.abort_match("b's", "the referee stopped", owner="b")
    skewed(offset, lambda: store.restart_match("b's", lease_a))
    assert store.abort_abandoned("lease expired") == []
    assert {store.match(m).status for m in ("a's", "b's")} == {"running"}
    # Expired, by the database's clock, whoever sweeps.
    expire(store, "a's")
    assert store.abort_abandoned("lease expired") == ["a's"]
    expire(store, "b's")
    assert skewed(offset, lambda: store.abort_abandoned("lease expired")) == ["b's"]


# A tournament's end: finished by the workers, or cancelled by the operator, not both


def test_a_finish_and_a_cancel_racing_end_a_tournament_one_way(db_url: str) -> None:
    """A worker finishes a tournament whose last match is recorded while the operator
    cancels it: it ends finished with its table, the cancel refused, or cancelled with
    no table, the finish storing nothing."""
    a, b = Store(db_url), Store(db_url, upgrade=False)
    bots = [register(a, "end") for _ in range(3)]
    barrier = threading.Barrier(2)

    def finishing(tournament_id: str) -> bool:
        barrier.wait()
        return bool(tables.finish_tournament(a, tournament_id))

    def cancelling(tournament_id: str) -> bool:
        barrier.wait()
        try:
            tournaments.cancel_tournament(b, tournament_id)
        except LeagueError:
            return False
        return True

    ends: Counter[str] = Counter()
    try:
        with ThreadPoolExecutor(2) as pool:
            for _ in range(ROUNDS // 2):
                tid = tournaments.create_tournament(a, "goof", 3, bots, duplicate=False)
                (match_id,) = tournaments.pending_matches(a, tid)
                play(a, match_id)
                assert recording.record_match(a, match_id)
                finished = pool.submit(finishing, tid)
                cancelled = pool.submit(cancelling, tid)
                outcome = (finished.result(), cancelled.result())
                with a.session() as session:
                    row = session.get(TournamentRow, tid)
                    assert row is not None
                    end = (row.status, row.table is not None)
                assert (end, outcome) in {
                    (("finished", True), (True, False)),
                    (("cancelled", False), (False, True)),
                }, (end, outcome)
                ends[row.status] += 1
    finally:
        a.close()
        b.close()
    assert sum(ends.values()) == ROUNDS // 2


# A tournament's match: started by a referee, or cancelled with its tournament, not both


def test_a_start_and_a_cancel_racing_never_both_win(db_url: str) -> None:
    """A referee stores a tournament's match (the worker found it not cancelled) while the
    operator cancels the tournament: the match is stored, its plan started and the cancel
    not naming it (it plays on and is recorded), or it is cancelled and never stored."""
    a, b = Store(db_url), Store(db_url, upgrade=False)
    bots = [register(a, "start") for _ in range(3)]
    barrier = threading.Barrier(2)

    def starting(request: MatchRequest) -> bool:
        barrier.wait()
        try:
            a.create_match(request, Lease("a", 30))
        except MatchCancelled:
            return False
        return True

    def cancelling(tournament_id: str) -> list[str]:
        barrier.wait()
        return tournaments.cancel_tournament(b, tournament_id)

    ends: Counter[tuple[bool, str, bool, bool]] = Counter()
    try:
        with ThreadPoolExecutor(2) as pool:
            for _ in range(ROUNDS):
                tid = tournaments.create_tournament(a, "goof", 3, bots, duplicate=False)
                (match_id,) = tournaments.pending_matches(a, tid)
                request = tournaments.planned_request(a, match_id)
                assert request is not None
                started = pool.submit(starting, request)
                cancelled = pool.submit(cancelling, tid)
                outcome = (started.result(), cancelled.result() == [match_id])
                with a.session() as session:
                    stored = session.get(MatchRow, match_id) is not None
                    plan = session.get(TournamentMatchRow, match_id)
                    assert plan is not None
                    ends[(stored, plan.status, *outcome)] += 1
    finally:
        a.close()
        b.close()
    assert set(ends) <= {(True, "started", True, False), (False, "cancelled", False, True)}, ends


def test_a_match_started_again_finds_its_started_plan(store: Store) -> None:
    """StartMatch asked again (a redelivered task, another replica), or after an abort: the
    plan started already is the same match's, found again and played again."""
    bots = [register(store, "again") for _ in range(3)]
    tid = tournaments.create_tournament(store, "goof", 3, bots, duplicate=False)
    (match_id,) = tournaments.pending_matches(store, tid)
    request = tournaments.planned_request(store, match_id)
    assert request is not None
    assert store.create_match(request)[1]
    assert not store.create_match(request)[1]
    store.abort_match(match_id, "the referee stopped")
    assert not store.create_match(request)[1]
    assert store.restart_match(match_id)[1]
    assert tournaments.cancel_tournament(store, tid) == []
    assert not store.create_match(request)[1]
    assert store.match(match_id).status == "running"


def test_a_cancelled_schedule_starts_no_run(store: Store) -> None:
    """Beat found runs due, then the operator cancelled the schedule: none is started."""
    bots = [register(store, "sched") for _ in range(3)]
    template = tournaments.create_tournament(store, "goof", 3, bots, schedule="* * * * *")
    due = tournaments.due_runs(store, store.database_now() + timedelta(minutes=1))
    assert due and {template_id for template_id, _ in due} == {template}
    assert tournaments.cancel_tournament(store, template) == []
    for template_id, minute in due:
        with pytest.raises(LeagueError, match="cancelled"):
            tournaments.start_scheduled_run(store, template_id, minute)
    with store.session() as session:
        runs = session.scalars(select(TournamentRow.id).where(TournamentRow.parent_id == template))
        assert list(runs) == []


# A name's versions: the one registered last is its latest


def test_versions_of_one_name_registered_at_once_never_tie(db_url: str) -> None:
    """Two replicas register versions of one name at the same moment: each version's moment
    is after every version committed before it, so the name's latest (`resolve_bot`, the
    bot list's order) is the one registered last, never a tie either could be."""
    a, b = Store(db_url), Store(db_url, upgrade=False)
    alice, _ = create_author(a, "alice")
    barrier = threading.Barrier(2)

    def registering(store: Store, name: str, version: str) -> str:
        barrier.wait()
        return store.register_bot(name, version, ["golden10"], alice.id)[0].id

    try:
        with ThreadPoolExecutor(2) as pool:
            for n in range(ROUNDS // 2):
                name = f"tie{n}"
                a.register_bot(name, "0", ["golden10"], alice.id)
                one = pool.submit(registering, a, name, "1")
                two = pool.submit(registering, b, name, "2")
                assert one.result() and two.result()
                with a.session() as session:
                    moments = session.scalars(
                        select(BotRow.created_at).where(BotRow.name == name)
                    ).all()
                assert len(set(moments)) == 3, moments
    finally:
        a.close()
        b.close()
