"""ladder.continuous on SQLite and PostgreSQL: the continuous ladder's tables, by information."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select, update

from ladder import authors, continuous, recording, standings_fit
from ladder.matchmaking import MatchmakingConfig
from ladder.models import BotRow, LadderRow, RatingRow, ResultRow
from ladder.records import MatchRequest, MatchResult
from ladder.store import NotFound, Store
from tests.support.ladder import fake_result, register

GAME, PLAYERS = "golden10", 3
LADDER = "golden10-3p"


def _play(store: Store, request: MatchRequest, points: dict[str, int], practice: int = 0) -> None:
    """Play `request` as the referee would (every rotation scores each bot its `points`) and
    record it (a bot's first `practice` ladder matches are practice)."""
    store.create_match(request)
    n = request.players
    per_game = [
        [points[request.bot_ids[(seat - shift) % n]] for seat in range(n)] for shift in range(n)
    ]
    result = fake_result(request.game, request.bot_ids, per_game)
    result["match_id"] = request.id
    store.finish_match(request.id, MatchResult.from_json(result), [])
    assert recording.record_match(store, request.id, practice)


def _request(match_id: str, bots: Sequence[str]) -> MatchRequest:
    return MatchRequest(match_id, GAME, PLAYERS, tuple(bots), None, {}, True, 0)


def _played_field(store: Store, ratings: Sequence[float], se: Sequence[float]) -> list[str]:
    """Bots that have just played a ladder match each and are fitted at `ratings`, `se`."""
    bots = [register(store, "fld", [GAME]) for _ in ratings]
    for start in range(0, len(bots), PLAYERS):
        table = bots[start : start + PLAYERS]
        _play(store, _request(f"warm-{start}", table), {bot: 0 for bot in table})
    with store.session() as session:
        for bot, rating, error in zip(bots, ratings, se, strict=True):
            session.execute(
                update(RatingRow)
                .where(RatingRow.ladder_id == LADDER, RatingRow.bot_id == bot)
                .values(fit_rating=rating, fit_se=error)
            )
        session.execute(update(LadderRow).where(LadderRow.id == LADDER).values(field_sd=120.0))
    return bots


def test_tables_are_drawn_near_the_seed(store: Store) -> None:
    ratings = [1000.0 + 100.0 * number for number in range(12)]
    se = [200.0 if rating == 1500.0 else 50.0 for rating in ratings]
    bots = _played_field(store, ratings, se)
    rating_of = dict(zip(bots, ratings, strict=True))
    seed = bots[ratings.index(1500.0)]
    # The seed, most uncertain, draws its mates from the 2 x 2 bots nearest it.
    nearest = {bots[ratings.index(r)] for r in (1300.0, 1400.0, 1600.0, 1700.0)}
    for tick in range(20):
        first, *_ = continuous.plan_ladder_matches(store, LADDER, bots, f"t{tick}")
        assert seed in first.bot_ids and set(first.bot_ids) - {seed} <= nearest
    # A window of 150 Elo that hardly widens while the test runs: its two neighbours only.
    narrow = MatchmakingConfig(window_elo=150.0, window_doubling_s=3600.0)
    tables = continuous.plan_ladder_matches(store, LADDER, bots, "w", config=narrow)
    assert {rating_of[bot] for bot in tables[0].bot_ids} == {1400.0, 1500.0, 1600.0}
    # Every table of that window spans at most 300 Elo (mates within 150 of the seed),
    # where tables of fewest games first (everyone has one) would mix the whole field.
    assert tables and all(
        max(rating_of[b] for b in t.bot_ids) - min(rating_of[b] for b in t.bot_ids) <= 300.0
        for t in tables
    )
    assert all(t.game == GAME and t.players == PLAYERS and t.seed is None for t in tables)
    assert [t.id for t in tables] == [f"Lw-{LADDER}-{k}" for k in range(len(tables))]


def test_a_redelivered_tick_asks_for_the_same_tables(store: Store) -> None:
    bots = _played_field(store, [1200.0 + 40.0 * n for n in range(9)], [60.0] * 9)
    bots.append(register(store, "new", [GAME]))
    # The windows widen with the time since the bots played: one moment for every plan.
    now = store.database_now()
    first = continuous.plan_ladder_matches(store, LADDER, bots, "abc", deadline_ms=250, now=now)
    assert first and all(r.deadline_ms == 250 and r.duplicate for r in first)
    again = continuous.plan_ladder_matches(
        store, LADDER, bots[::-1], "abc", deadline_ms=250, now=now
    )
    assert again == first
    others = [
        continuous.plan_ladder_matches(store, LADDER, bots, f"x{n}", now=now) for n in range(8)
    ]
    tables = {frozenset(r.bot_ids) for plan in others for r in plan}
    assert len(tables) > 3  # another tick, another draw


def test_an_unfitted_bot_is_seated_first(store: Store) -> None:
    bots = _played_field(store, [1100.0 + 50.0 * n for n in range(9)], [80.0] * 8 + [110.0])
    new = register(store, "new", [GAME])
    # Never played: overdue, so the first seed.
    for tick in range(5):
        first = continuous.plan_ladder_matches(store, LADDER, [*bots, new], f"n{tick}")[0]
        assert new in first.bot_ids
    # In practice (played, no fit yet): the prior's spread (120 here) is the largest
    # uncertainty, above the fitted bot at 110, so still the first seed.
    _play(store, _request("practice-1", [new, *bots[:2]]), {new: 0, bots[0]: 1, bots[1]: 2}, 3)
    with store.session() as session:
        practised = session.scalars(select(ResultRow).where(ResultRow.bot_id == new)).one()
    assert practised.practice
    for tick in range(5):
        first = continuous.plan_ladder_matches(store, LADDER, [*bots, new], f"p{tick}")[0]
        assert new in first.bot_ids


def test_two_bots_of_one_author_never_share_a_table(store: Store) -> None:
    ann, _ = authors.create_author(store, "ann")
    bob, _ = authors.create_author(store, "bob")
    mine = [
        store.register_bot(f"{author.name}-{n}", "1", [GAME], author.id)[0].id
        for author in (ann, bob)
        for n in range(3)
    ]
    # A second version of ann's first name is ann's too.
    mine.append(store.register_bot("ann-0", "2", [GAME], ann.id)[0].id)
    house = [register(store, "house", [GAME]) for _ in range(6)]  # the operator's
    recording.ensure_ladder(store, GAME, PLAYERS)
    owner = {bot: "ann" for bot in mine[:3] + mine[6:]} | {bot: "bob" for bot in mine[3:6]}
    seated_house = 0
    for tick in range(30):
        for request in continuous.plan_ladder_matches(store, LADDER, mine + house, f"a{tick}"):
            counts = Counter(owner[bot] for bot in request.bot_ids if bot in owner)
            assert max(counts.values(), default=0) <= 1, request.bot_ids
            seated_house = max(seated_house, sum(bot in house for bot in request.bot_ids))
    assert seated_house == PLAYERS  # the operator's bots may sit together
    # ann's bots alone make no table; the operator's alone do.
    assert continuous.plan_ladder_matches(store, LADDER, mine[:3], "solo") == []
    assert len(continuous.plan_ladder_matches(store, LADDER, house[:3], "solo")) == 1


def test_only_free_bots_of_the_game_that_are_not_retired(store: Store) -> None:
    bots = [register(store, "g", [GAME]) for _ in range(3)]
    goof_only = register(store, "goof", ["goof"])
    with store.session() as session:
        session.execute(update(BotRow).where(BotRow.id == bots[0]).values(retired_at=func.now()))
    recording.ensure_ladder(store, GAME, PLAYERS)
    assert continuous.plan_ladder_matches(store, LADDER, [*bots, goof_only], "r") == []
    fresh = register(store, "g", [GAME])
    (only,) = continuous.plan_ladder_matches(store, LADDER, [*bots, goof_only, fresh], "r")
    assert set(only.bot_ids) == {*bots[1:], fresh}
    try:
        continuous.plan_ladder_matches(store, "golden10-9p", bots, "r")
    except NotFound:
        pass
    else:
        raise AssertionError("a ladder that does not exist is NotFound")


TICK = timedelta(seconds=30)
MATCH = timedelta(minutes=2)


# SQLite only: fairness over simulated time does not depend on the database, and every
# query of a tick runs on PostgreSQL in the tests above (the fit's fence in
# tests/ladder/test_standings_fit.py).
@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_simulated_ladder_plays_everyone_fairly(store: Store) -> None:
    """Ticks every 30 s for an hour and a half of simulated time: each tick seats the
    free bots (online with chance 0.8, not in a match); a match takes two minutes, then it
    is recorded (practice first, as the workers do), and the fit is refreshed after each
    tick's results. Nobody ends below half the mean games, the new bots all leave
    practice, and no author sits with itself."""
    rng = random.Random(5)
    ann, _ = authors.create_author(store, "ann")
    bob, _ = authors.create_author(store, "bob")
    field = [register(store, "sim", [GAME]) for _ in range(12)]
    for author in (ann, bob):
        field += [
            store.register_bot(f"{author.name}-{n}", "1", [GAME], author.id)[0].id for n in range(3)
        ]
    owner = {bot: "ann" for bot in field[12:15]} | {bot: "bob" for bot in field[15:]}
    # Golden 10: fewer points is better. One bot far above the rest, one far below.
    strength = {bot: 40 * n for n, bot in enumerate(field)}
    strength[field[0]], strength[field[-1]] = -2000, 4000
    recording.ensure_ladder(store, GAME, PLAYERS)
    start = datetime(2026, 6, 1, tzinfo=UTC)
    running: list[tuple[datetime, MatchRequest]] = []
    for tick in range(180):
        now = start + tick * TICK
        recorded = False
        for ends, request in [r for r in running if r[0] <= now]:
            points = {bot: strength[bot] + rng.randint(0, 150) for bot in request.bot_ids}
            _play(store, request, points, practice=3)
            with store.session() as session:
                session.execute(
                    update(ResultRow)
                    .where(ResultRow.match_id == request.id)
                    .values(recorded_at=ends)
                )
            running.remove((ends, request))
            recorded = True
        if recorded:
            standings_fit.refresh_fit(store, LADDER)
        busy = {bot for _, request in running for bot in request.bot_ids}
        free = [bot for bot in field if bot not in busy and rng.random() < 0.8]
        for request in continuous.plan_ladder_matches(store, LADDER, free, f"d{tick}", now=now):
            counts = Counter(owner[bot] for bot in request.bot_ids if bot in owner)
            assert max(counts.values(), default=0) <= 1, request.bot_ids
            running.append((now + MATCH, request))
    with store.session() as session:
        games = dict(
            session.execute(select(ResultRow.bot_id, func.count()).group_by(ResultRow.bot_id)).all()
        )
        fitted = session.scalars(
            select(RatingRow.bot_id).where(RatingRow.fit_rating.is_not(None))
        ).all()
    mean = sum(games.values()) / len(field)
    assert mean > 20, games  # the ladder kept the field busy
    assert min(games.get(bot, 0) for bot in field) >= mean / 2, games
    assert set(fitted) == set(field)  # every bot played its practice and was rated
