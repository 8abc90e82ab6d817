"""ladder.league on SQLite and PostgreSQL: plans, recording exactly once, tables, schedules.

PostgreSQL tests share one fresh schema for the test session (dropped at the
end), emptied before each test. They are skipped when PostgreSQL cannot be
reached, unless ARENA_REQUIRE_SERVICES=1.
"""

from __future__ import annotations

import itertools
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select, text

import games
from games.core import rank_scores
from ladder import league, queries, ratings
from ladder.models import (
    Base,
    GameRow,
    LadderRow,
    RatingHistoryRow,
    RatingRow,
    ResultRow,
    SeatRow,
    TournamentMatchRow,
    TournamentRow,
)
from ladder.records import MatchResult
from ladder.store import Store
from tests.conftest import postgres_schema

ALL_GAMES = ("goodge", "golden10", "goof")


# fixtures ---------------------------------------------------------------------


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
        # One schema per session: empty every table before each test.
        names = ", ".join(f'"{table.name}"' for table in Base.metadata.sorted_tables)
        with store.engine.begin() as connection:
            connection.execute(text(f"TRUNCATE {names} RESTART IDENTITY CASCADE"))
    try:
        yield store
    finally:
        store.close()


# helpers ----------------------------------------------------------------------

_names = itertools.count(1)


def register(store: Store, prefix: str = "bot", games_: Sequence[str] = ALL_GAMES) -> str:
    bot, _ = store.register_bot(f"{prefix}-{next(_names)}", "1", list(games_))
    return bot.id


def fake_result(
    game: str,
    bot_ids: Sequence[str],
    game_scores: Sequence[Sequence[int]],
    forfeits: Sequence[str] = (),
) -> dict[str, Any]:
    """A result as the referee writes it: game g seats the bots rotated by g."""
    n = len(bot_ids)
    spec = games.get(game)
    totals = [0] * n
    played = []
    for shift, scores in enumerate(game_scores):
        seats = [""] * n
        for entry, bot in enumerate(bot_ids):
            seats[(entry + shift) % n] = bot
        for entry in range(n):
            totals[entry] += scores[(entry + shift) % n]
        played.append(
            {
                "seed": 7,
                "seats": seats,
                "scores": list(scores),
                "ranks": list(rank_scores(scores, spec.higher_is_better)),
                "rounds": 3,
            }
        )
    playing = [e for e in range(n) if bot_ids[e] not in forfeits]
    ranks = [len(playing) + 1] * n
    for entry, rank in zip(
        playing, rank_scores([totals[e] for e in playing], spec.higher_is_better), strict=True
    ):
        ranks[entry] = rank
    return {
        "match_id": "",
        "game": game,
        "bots": list(bot_ids),
        "scores": totals,
        "ranks": ranks,
        "forfeits": sorted(set(forfeits)),
        "games": played,
    }


def play(
    store: Store,
    match_id: str,
    scores_of: dict[str, int] | None = None,
    forfeits: Sequence[str] = (),
) -> dict[str, Any]:
    """Play a planned match as the referee would: every game scores each bot `scores_of[bot]`."""
    request = league.planned_request(store, match_id)
    assert request is not None
    store.create_match(request)
    n = request.players
    games_played = n if request.duplicate else 1
    scores_of = scores_of or {bot: 10 * i for i, bot in enumerate(request.bot_ids)}
    per_game = []
    for shift in range(games_played):
        seats = [""] * n
        for entry, bot in enumerate(request.bot_ids):
            seats[(entry + shift) % n] = bot
        per_game.append([scores_of[bot] for bot in seats])
    result = fake_result(request.game, request.bot_ids, per_game, forfeits)
    result["match_id"] = match_id
    store.finish_match(match_id, MatchResult.from_json(result), [])
    return result


def count(store: Store, model: Any, **where: Any) -> int:
    with store.session() as session:
        query = select(func.count()).select_from(model)
        for key, value in where.items():
            query = query.where(getattr(model, key) == value)
        return int(session.scalar(query) or 0)


def ratings_of(store: Store, lid: str) -> dict[str, tuple[float, int]]:
    with store.session() as session:
        return {
            row.bot_id: (row.rating, row.games)
            for row in session.scalars(select(RatingRow).where(RatingRow.ladder_id == lid))
        }


def plan_of(store: Store, tournament_id: str) -> list[TournamentMatchRow]:
    with store.session() as session:
        return list(
            session.scalars(
                select(TournamentMatchRow)
                .where(TournamentMatchRow.tournament_id == tournament_id)
                .order_by(TournamentMatchRow.number)
            )
        )


# plans (no database) ----------------------------------------------------------


def test_round_robin_plays_every_combination_once_with_seeded_seats() -> None:
    entrants = ["a", "b", "c", "d", "e", "f"]
    plan = league.plan_round_robin(entrants, 4, seed=3)
    assert len(plan) == 15
    assert sorted(tuple(sorted(m)) for m in plan) == sorted(itertools.combinations(entrants, 4))
    assert plan == league.plan_round_robin(entrants, 4, seed=3)
    assert plan != league.plan_round_robin(entrants, 4, seed=4)  # seats shuffled by the seed
    assert {m[0] for m in plan} != {plan[0][0]}  # not always the same first seat


@pytest.mark.parametrize(
    ("n", "players", "limit"), [(9, 3, 30), (12, 4, 200), (10, 5, 7), (30, 2, 100)]
)
def test_balanced_subset_above_max_matches(n: int, players: int, limit: int) -> None:
    entrants = [f"bot{i}" for i in range(n)]
    plan = league.plan_round_robin(entrants, players, seed=11, max_matches=limit)
    assert len(plan) == limit
    groups = [frozenset(m) for m in plan]
    assert len(set(groups)) == limit, "no combination twice"
    assert all(len(g) == players for g in groups)
    played = Counter(bot for m in plan for bot in m)
    assert set(played) == set(entrants)
    assert max(played.values()) - min(played.values()) <= 1
    assert plan == league.plan_round_robin(entrants, players, seed=11, max_matches=limit)


def test_cron_schedules() -> None:
    at = datetime(2026, 3, 2, 3, 0, tzinfo=UTC)  # a Monday
    assert league.is_due("0 3 * * *", at)
    assert not league.is_due("0 3 * * *", at + timedelta(minutes=1))
    assert league.is_due("*/15 * * * 1", at + timedelta(minutes=45))
    assert not league.is_due("*/15 * * * 0", at)
    assert league.is_due("* * * * *", at + timedelta(seconds=59))
    for bad in ("", "* * * *", "61 * * * *", "* * * * * *", "x y z w v"):
        with pytest.raises(league.LeagueError):
            league.cron(bad)
    assert league.scheduled_run_id("tabc", at) == "tabc-2603020300"


# tournaments ------------------------------------------------------------------


def test_create_tournament_plans_its_matches(store: Store) -> None:
    bots = [register(store, "rr") for _ in range(5)]
    names = [store.bot(b).name for b in bots]
    refs = [bots[0], names[1], f"{names[2]}@1", names[3], bots[4]]
    tid = league.create_tournament(store, "goodge", 4, refs, deadline_ms=200, seed=5)
    view = queries.tournament(store, tid)
    assert (view.status, view.matches_total, view.matches_finished) == ("running", 5, 0)
    plan = plan_of(store, tid)
    assert [m.match_id for m in plan] == [f"{tid}-m{i:04d}" for i in range(1, 6)]
    assert sorted(tuple(sorted(m.bot_ids)) for m in plan) == sorted(
        itertools.combinations(sorted(bots), 4)
    )
    assert len({m.seed for m in plan}) == 5
    assert all(m.status == "planned" for m in plan)
    assert queries.ladders(store) == ["goodge-4p"]
    request = league.planned_request(store, plan[0].match_id)
    assert request is not None
    assert (request.game, request.players, request.duplicate, request.deadline_ms) == (
        "goodge",
        4,
        True,
        200,
    )
    assert request.bot_ids == tuple(plan[0].bot_ids) and request.seed == plan[0].seed
    assert league.pending_matches(store, tid) == [m.match_id for m in plan]
    assert league.tournament_of(store, plan[0].match_id) == tid
    assert league.tournament_of(store, "nope") is None
    assert league.planned_request(store, "nope") is None


def test_create_tournament_refuses_bad_requests(store: Store) -> None:
    bots = [register(store, "bad") for _ in range(3)]
    golden_only = register(store, "g10", ["golden10"])
    cases: list[tuple[dict[str, Any], str]] = [
        ({"game": "chess"}, "no game"),
        ({"players": 9}, "played by"),
        ({"entrants": bots[:2]}, "at least 3"),
        ({"entrants": [*bots[:2], "ghost"]}, "no bot 'ghost'"),
        ({"entrants": [bots[0], bots[0], bots[1]]}, "twice"),
        ({"entrants": [*bots[:2], golden_only]}, "does not play goodge"),
        ({"schedule": "every day"}, "cron"),
        ({"options": {"colour": "red"}}, "no option"),
        ({"deadline_ms": 0}, "deadline_ms"),
    ]
    for change, message in cases:
        kwargs: dict[str, Any] = {"game": "goodge", "players": 3, "entrants": bots, **change}
        with pytest.raises(league.LeagueError, match=message):
            league.create_tournament(store, **kwargs)
    assert count(store, TournamentRow) == 0


# recording --------------------------------------------------------------------


def test_record_match_exactly_once(store: Store) -> None:
    bots = [register(store, "once") for _ in range(3)]
    tid = league.create_tournament(store, "golden10", 3, bots, seed=1)
    (match_id,) = league.pending_matches(store, tid)
    with pytest.raises(league.NotFinished):
        store.create_match(league.planned_request(store, match_id))  # type: ignore[arg-type]
        league.record_match(store, match_id)
    result = play(store, match_id)
    assert league.record_match(store, match_id) is True
    lid = "golden10-3p"
    after = ratings_of(store, lid)
    assert set(after) == set(bots) and all(games == 1 for _, games in after.values())
    deltas = ratings.elo_update([1500.0] * 3, result["ranks"], [0, 0, 0], league.ELO)
    for entry, bot in enumerate(result["bots"]):
        assert after[bot][0] == pytest.approx(1500.0 + deltas[entry])
    assert count(store, ResultRow, match_id=match_id) == 3
    assert count(store, GameRow, match_id=match_id) == 3  # duplicate: one game per rotation
    assert count(store, SeatRow, match_id=match_id) == 9
    assert count(store, RatingHistoryRow, match_id=match_id) == 3
    assert league.is_recorded(store, match_id)
    assert plan_of(store, tid)[0].status == "recorded"
    assert league.pending_matches(store, tid) == []
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
    assert league.record_match(store, match_id) is False
    assert ratings_of(store, lid) == after
    assert count(store, ResultRow) == 3 and count(store, RatingHistoryRow) == 3
    standings = queries.standings(store, lid)
    assert [s.bot_id for s in standings] == sorted(after, key=lambda b: -after[b][0])
    assert all(s.provisional for s in standings)


def test_racing_recorders_record_once(store: Store, db_url: str) -> None:
    bots = [register(store, "race") for _ in range(4)]
    tid = league.create_tournament(store, "goodge", 3, bots, seed=2)
    match_ids = league.pending_matches(store, tid)
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
                    answers.append(league.record_match(which, match_id))
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
    tid = league.create_tournament(store, "goof", 4, bots, seed=3, duplicate=False)
    match_ids = league.pending_matches(store, tid)
    for match_id in match_ids:
        play(store, match_id)
    stores = [Store(db_url, upgrade=False) for _ in match_ids]
    barrier = threading.Barrier(len(match_ids))
    answers: list[bool] = []
    errors: list[BaseException] = []

    def record(which: Store, match_id: str) -> None:
        try:
            barrier.wait(5)
            answers.append(league.record_match(which, match_id))
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
    tid = league.create_tournament(store, "goof", 3, bots, seed=4)
    (match_id,) = league.pending_matches(store, tid)
    request = league.planned_request(store, match_id)
    assert request is not None
    quitter = request.bot_ids[0]
    # The quitter scored most in every game, but forfeited the match.
    scores = {request.bot_ids[0]: 90, request.bot_ids[1]: 50, request.bot_ids[2]: 10}
    result = play(store, match_id, scores, forfeits=[quitter])
    assert result["ranks"] == [3, 1, 2]
    assert league.record_match(store, match_id)
    with store.session() as session:
        row = session.get(ResultRow, (match_id, 0))
        assert row is not None and row.forfeit and row.rank == 3
    assert ratings_of(store, "goof-3p")[quitter][0] < 1500.0
    assert league.finish_tournament(store, tid)
    table = queries.tournament(store, tid).table
    assert [line.bot_id for line in table][-1] == quitter


def test_finish_tournament_stores_the_table(store: Store) -> None:
    bots = [register(store, "fin") for _ in range(5)]
    strength = {bot: 10 * i for i, bot in enumerate(bots)}  # bots[-1] is strongest
    tid = league.create_tournament(store, "goodge", 4, bots, seed=6)
    match_ids = league.pending_matches(store, tid)
    for match_id in match_ids[:-1]:
        play(store, match_id, strength)
        assert league.record_match(store, match_id)
    assert not league.tournament_complete(store, tid)
    assert not league.ready_to_finish(store, tid)
    assert league.finish_tournament(store, tid) is False
    assert queries.tournament(store, tid).status == "running"
    play(store, match_ids[-1], strength)
    assert league.record_match(store, match_ids[-1])
    assert league.ready_to_finish(store, tid)
    assert league.finish_tournament(store, tid) is True
    view = queries.tournament(store, tid)
    assert (view.status, view.matches_total, view.matches_finished) == ("finished", 5, 5)
    assert view.finished_at is not None
    with store.session() as session:
        row = session.get(TournamentRow, tid)
        assert row is not None and row.table is not None
        stored = row.table
    assert [set(line) for line in stored] == [
        {"bot_id", "rating", "ci_low", "ci_high", "games"}
    ] * 5
    assert [line["bot_id"] for line in stored] == list(reversed(bots))
    for line in stored:
        assert line["ci_low"] < line["rating"] < line["ci_high"]
        assert line["games"] == 16  # 4 duplicate matches of 4 games each
    ratings_ = [line["rating"] for line in stored]
    assert ratings_ == sorted(ratings_, reverse=True)
    assert min(ratings_) < 1500.0 < max(ratings_)
    # Idempotent.
    finished_at = view.finished_at
    assert league.finish_tournament(store, tid) is True
    again = queries.tournament(store, tid)
    assert again.finished_at == finished_at and again.table == view.table
    assert not league.ready_to_finish(store, tid)

    los = league.tournament_los(store, tid, bots[-1], store.bot(bots[0]).name)
    assert (los["a"], los["b"]) == (bots[-1], bots[0])
    assert (los["wins"], los["draws"], los["losses"]) == (12, 0, 0)  # 3 matches x 4 games
    assert los["los"] > 0.99
    assert los["sprt"]["decision"] in ("H0", "H1", "continue")
    with pytest.raises(league.LeagueError, match="different"):
        league.tournament_los(store, tid, bots[0], bots[0])
    with pytest.raises(league.LeagueError, match="no bot"):
        league.tournament_los(store, tid, bots[0], "ghost")


def test_scheduled_template_runs_once_per_minute(store: Store) -> None:
    bots = [register(store, "sch") for _ in range(3)]
    tid = league.create_tournament(
        store, "golden10", 3, bots, schedule="*/10  *  * * *", name="nightly", seed=9
    )
    view = queries.tournament(store, tid)
    assert (view.status, view.schedule, view.matches_total) == ("scheduled", "*/10 * * * *", 0)
    with store.session() as session:
        template = session.get(TournamentRow, tid)
        assert template is not None
        created = template.created_at.replace(tzinfo=template.created_at.tzinfo or UTC)
    # The first due minute from the template's creation on.
    minute = created.replace(second=0, microsecond=0)
    while not league.is_due("*/10 * * * *", minute):
        minute += timedelta(minutes=1)
    assert league.due_runs(store, minute + timedelta(seconds=30)) == [(tid, minute)]
    assert league.due_runs(store, minute + timedelta(minutes=5)) == []
    assert league.due_runs(store, minute - timedelta(days=1)) == []  # before it existed

    run = league.start_scheduled_run(store, tid, minute + timedelta(seconds=30))
    assert run == league.scheduled_run_id(tid, minute)
    assert league.start_scheduled_run(store, tid, minute) == run  # same minute, same run
    assert league.due_runs(store, minute + timedelta(seconds=30)) == []
    runs = [v for v in queries.tournaments(store) if v.id != tid]
    assert [v.id for v in runs] == [run]
    with store.session() as session:
        row = session.get(TournamentRow, run)
        assert row is not None
        assert (row.parent_id, row.status, row.schedule) == (tid, "running", None)
        assert row.entrants == bots and row.name.startswith("nightly ")
    assert len(plan_of(store, run)) == 1
    assert queries.tournament(store, tid).status == "scheduled"
    # The next tick makes another run.
    later = minute + timedelta(minutes=10)
    assert league.due_runs(store, later) == [(tid, later)]
    second = league.start_scheduled_run(store, tid, later)
    assert second != run and len(plan_of(store, second)) == 1
    assert plan_of(store, second)[0].match_id != plan_of(store, run)[0].match_id
    with pytest.raises(league.LeagueError, match="no schedule"):
        league.start_scheduled_run(store, run, later)


def test_ladder_matches_pick_the_least_played_first(store: Store) -> None:
    bots = [register(store, "lad") for _ in range(6)]
    golden_only = register(store, "g10only", ["golden10"])
    tid = league.create_tournament(store, "goof", 3, bots[:3], seed=1)
    (match_id,) = league.pending_matches(store, tid)
    play(store, match_id)
    assert league.record_match(store, match_id)  # bots[:3] have one game on goof-3p
    requests = league.plan_ladder_matches(
        store, "goof-3p", [*bots, golden_only], tick="42", deadline_ms=250
    )
    assert [r.id for r in requests] == ["L42-goof-3p-0", "L42-goof-3p-1"]
    assert set(requests[0].bot_ids) == set(bots[3:])  # never played: first
    assert set(requests[1].bot_ids) == set(bots[:3])
    assert all(r.game == "goof" and r.players == 3 and r.deadline_ms == 250 for r in requests)
    assert requests == league.plan_ladder_matches(
        store, "goof-3p", [*bots, golden_only], tick="42", deadline_ms=250
    )
    assert league.plan_ladder_matches(store, "goof-3p", bots[:2], tick="1") == []
    with store.session() as session:
        assert session.get(LadderRow, "goof-3p") is not None
