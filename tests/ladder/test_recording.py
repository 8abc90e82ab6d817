"""ladder.recording on SQLite and PostgreSQL: every result exactly once, with its ratings."""

from __future__ import annotations

import itertools
import threading
from typing import Any

import pytest
from sqlalchemy import select, update

from ladder import elo, queries, recording, tables, tournaments
from ladder.models import GameRow, RatingHistoryRow, ResultRow, SeatRow, TournamentMatchRow
from ladder.records import PlanStatus
from ladder.store import Store
from tests.support.ladder import count, plan_of, play, ratings_of, register


def test_record_match_exactly_once(store: Store) -> None:
    bots = [register(store, "once") for _ in range(3)]
    tid = tournaments.create_tournament(store, "golden10", 3, bots, seed=1)
    (match_id,) = tournaments.pending_matches(store, tid)
    with pytest.raises(recording.NotFinished):
        store.create_match(tournaments.planned_request(store, match_id))  # type: ignore[arg-type]
        recording.record_match(store, match_id)
    result = play(store, match_id)
    assert recording.record_match(store, match_id) is True
    lid = "golden10-3p"
    after = ratings_of(store, lid)
    assert set(after) == set(bots) and all(games == 1 for _, games in after.values())
    deltas = elo.elo_update([1500.0] * 3, result["ranks"], [0, 0, 0], recording.ELO)
    for entry, bot in enumerate(result["bots"]):
        assert after[bot][0] == pytest.approx(1500.0 + deltas[entry])
    assert count(store, ResultRow, match_id=match_id) == 3
    assert count(store, GameRow, match_id=match_id) == 3  # duplicate: one game per rotation
    assert count(store, SeatRow, match_id=match_id) == 9
    assert count(store, RatingHistoryRow, match_id=match_id) == 3
    assert recording.is_recorded(store, match_id)
    assert plan_of(store, tid)[0].status == "recorded"
    assert tournaments.pending_matches(store, tid) == []
    with store.session() as session:
        rows = session.scalars(select(ResultRow).order_by(ResultRow.entry)).all()
        assert [r.bot_id for r in rows] == result["bots"]
        assert [r.rank for r in rows] == result["ranks"]
        assert all(r.tournament_id == tid and r.ladder_id == lid for r in rows)
        history = session.scalars(select(RatingHistoryRow)).all()
        assert {(h.bot_id, h.rating_before, h.games) for h in history} == {
            (b, 1500.0, 1) for b in bots
        }
        assert {h.bot_id: h.rating_after for h in history} == {b: r for b, (r, _) in after.items()}

    # Again: nothing is written, the ratings are unchanged.
    assert recording.record_match(store, match_id) is False
    assert ratings_of(store, lid) == after
    assert count(store, ResultRow) == 3 and count(store, RatingHistoryRow) == 3
    standings = queries.standings(store, lid)
    assert [s.bot_id for s in standings] == sorted(after, key=lambda b: -after[b][0])
    assert all(s.provisional for s in standings)


def test_racing_recorders_record_once(store: Store, db_url: str) -> None:
    bots = [register(store, "race") for _ in range(4)]
    tid = tournaments.create_tournament(store, "goodge", 3, bots, seed=2)
    match_ids = tournaments.pending_matches(store, tid)
    assert len(match_ids) == 4
    for match_id in match_ids:
        play(store, match_id)
    others = [Store(db_url, upgrade=False) for _ in range(2)]
    try:
        for match_id in match_ids:
            barrier = threading.Barrier(2)
            answers: list[bool] = []
            errors: list[BaseException] = []

            def record(
                which: Store,
                match_id: str = match_id,
                barrier: Any = barrier,
                answers: list[bool] = answers,
                errors: list[BaseException] = errors,
            ) -> None:
                try:
                    barrier.wait(5)
                    answers.append(recording.record_match(which, match_id))
                except BaseException as error:  # reported below
                    errors.append(error)

            threads = [threading.Thread(target=record, args=(s,)) for s in others]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(30)
            assert not errors, errors
            assert sorted(answers) == [False, True], match_id
    finally:
        for other in others:
            other.close()
    assert count(store, ResultRow) == 4 * 3
    assert count(store, RatingHistoryRow) == 4 * 3
    # Every bot played 3 of the 4 matches: no rating update was lost.
    assert {games for _, games in ratings_of(store, "goodge-3p").values()} == {3}


def test_different_matches_recorded_at_once_lose_no_update(store: Store, db_url: str) -> None:
    bots = [register(store, "par") for _ in range(5)]
    tid = tournaments.create_tournament(store, "goof", 4, bots, seed=3, duplicate=False)
    match_ids = tournaments.pending_matches(store, tid)
    for match_id in match_ids:
        play(store, match_id)
    stores = [Store(db_url, upgrade=False) for _ in match_ids]
    barrier = threading.Barrier(len(match_ids))
    answers: list[bool] = []
    errors: list[BaseException] = []

    def record(which: Store, match_id: str) -> None:
        try:
            barrier.wait(5)
            answers.append(recording.record_match(which, match_id))
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [
        threading.Thread(target=record, args=(s, m)) for s, m in zip(stores, match_ids, strict=True)
    ]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    finally:
        for other in stores:
            other.close()
    assert not errors, errors
    assert answers == [True] * 5
    assert {games for _, games in ratings_of(store, "goof-4p").values()} == {4}
    with store.session() as session:
        # Each bot's history chains: every change starts where the previous ended.
        for bot in bots:
            rows = session.scalars(
                select(RatingHistoryRow)
                .where(RatingHistoryRow.bot_id == bot)
                .order_by(RatingHistoryRow.games)
            ).all()
            assert [r.games for r in rows] == [1, 2, 3, 4]
            assert rows[0].rating_before == 1500.0
            for before, after in itertools.pairwise(rows):
                assert after.rating_before == pytest.approx(before.rating_after)


def test_forfeit_is_ranked_last(store: Store) -> None:
    bots = [register(store, "ff") for _ in range(3)]
    tid = tournaments.create_tournament(store, "goof", 3, bots, seed=4)
    (match_id,) = tournaments.pending_matches(store, tid)
    request = tournaments.planned_request(store, match_id)
    assert request is not None
    quitter = request.bot_ids[0]
    # The quitter scored most in every game, but forfeited the match.
    scores = {request.bot_ids[0]: 90, request.bot_ids[1]: 50, request.bot_ids[2]: 10}
    result = play(store, match_id, scores, forfeits=[quitter])
    assert result["ranks"] == [3, 1, 2]
    assert recording.record_match(store, match_id)
    with store.session() as session:
        row = session.get(ResultRow, (match_id, 0))
        assert row is not None and row.forfeit and row.rank == 3
    assert ratings_of(store, "goof-3p")[quitter][0] < 1500.0
    assert tables.finish_tournament(store, tid)
    table = queries.tournament(store, tid).table
    assert [line.bot_id for line in table][-1] == quitter


def test_recording_leaves_a_cancelled_plan_cancelled(store: Store) -> None:
    """A match played although its plan reads cancelled (a cancel and a start racing before
    the plan fenced them): its result is recorded, and the cancel its operator was told of
    stands."""
    bots = [register(store, "late") for _ in range(3)]
    tid = tournaments.create_tournament(store, "goof", 3, bots, seed=5)
    (match_id,) = tournaments.pending_matches(store, tid)
    play(store, match_id)
    with store.session() as session:
        session.execute(
            update(TournamentMatchRow)
            .where(TournamentMatchRow.match_id == match_id)
            .values(status=PlanStatus.CANCELLED)
        )
    assert recording.record_match(store, match_id)
    assert plan_of(store, tid)[0].status == "cancelled"
