"""Swiss tournaments: the pure seating (ladder.swiss), and their rounds in the store on SQLite
and PostgreSQL (ladder.tournaments, ladder.swiss_rounds), the round fence raced."""

from __future__ import annotations

import itertools
import random
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import update

from ladder import queries, recording, swiss_rounds, tables, tournaments
from ladder.errors import LeagueError
from ladder.models import RatingRow, TournamentRow
from ladder.records import TournamentFormat
from ladder.store import Store
from ladder.swiss import (
    Seeding,
    meetings,
    repeats,
    round_rng,
    seat_round,
    standing_order,
)
from tests.support.ladder import plan_of, play, register

SWISS = TournamentFormat.SWISS

# The pure seating ------------------------------------------------------------------


def partitions(items: Sequence[str], size: int) -> Iterator[list[tuple[str, ...]]]:
    """Every way to cut `items` into tables of `size` (brute force)."""
    if not items:
        yield []
        return
    head, rest = items[0], items[1:]
    for mates in itertools.combinations(rest, size - 1):
        left = [item for item in rest if item not in mates]
        for tail in partitions(left, size):
            yield [(head, *mates), *tail]


def seating_key(
    tables: Sequence[Sequence[str]], met: Counter[frozenset[str]], order: Sequence[str]
) -> tuple[int, list[tuple[int, tuple[int, ...]]]]:
    """What the seating minimises: the repeat meetings, then table by table (the best bot's
    first) its repeats and its bots' places in the standing."""
    position = {bot: number for number, bot in enumerate(order)}
    ranked = sorted(tuple(sorted(position[bot] for bot in table)) for table in tables)
    per_table = [(repeats([[order[p] for p in table]], met), table) for table in ranked]
    return repeats(tables, met), per_table


def random_history(
    bots: list[str], size: int, rounds: int, rng: random.Random
) -> Counter[frozenset[str]]:
    """The meetings of `rounds` rounds seated from random standings."""
    met: Counter[frozenset[str]] = Counter()
    for _ in range(rounds):
        order = bots[:]
        rng.shuffle(order)
        met.update(meetings(seat_round(order, size, met, {}, rng).tables))
    return met


@pytest.mark.parametrize("trial", range(60))
def test_a_round_has_the_fewest_repeats_a_brute_force_finds(trial: int) -> None:
    """On small fields the seating is the best of all seatings (checked against every
    partition): the fewest repeat meetings, then the first in the standing's order."""
    rng = random.Random(trial)
    size = rng.choice([2, 3, 4])
    n = {2: rng.choice([6, 8, 10]), 3: rng.choice([6, 9, 12]), 4: rng.choice([8, 12])}[size]
    bots = [f"b{i}" for i in range(n)]
    met = random_history(bots, size, rng.randint(1, 4), rng)
    order = bots[:]
    rng.shuffle(order)
    seated = seat_round(order, size, met, {}, random.Random(trial)).tables
    best = min(seating_key(p, met, order) for p in partitions(order, size))
    assert seating_key(seated, met, order) == best
    assert best[0] == min(repeats(p, met) for p in partitions(order, size))


def test_every_entrant_is_seated_once_a_round_and_the_byes_go_round() -> None:
    """10 bots at tables of 4 for 5 rounds: 2 tables and 2 byes a round; the byes go to
    those who had fewest, the lowest in the standing among them, so each bot sits out once."""
    bots = [f"b{i}" for i in range(10)]
    rng = random.Random(4)
    met: Counter[frozenset[str]] = Counter()
    byes: Counter[str] = Counter()
    for _ in range(5):
        order = bots[:]
        rng.shuffle(order)
        seated = seat_round(order, 4, met, byes, rng)
        assert [len(table) for table in seated.tables] == [4, 4]
        everyone = [bot for table in seated.tables for bot in table] + list(seated.byes)
        assert sorted(everyone) == sorted(bots)
        fewest = min(byes[bot] for bot in bots)
        assert all(byes[bot] == fewest for bot in seated.byes)
        if all(byes[bot] == 0 for bot in bots):  # the first round: the standing's last two
            assert list(seated.byes) == order[-2:]
        met.update(meetings(seated.tables))
        byes.update(seated.byes)
    assert set(byes.values()) == {1}


def test_without_history_the_tables_are_the_standings_slices() -> None:
    order = [f"b{i}" for i in range(16)]
    seated = seat_round(order, 4, {}, {}, random.Random(1))
    assert [sorted(table, key=order.index) for table in seated.tables] == [
        order[0:4],
        order[4:8],
        order[8:12],
        order[12:16],
    ]
    # The next round: no repeat (one bot of each earlier table at each), each table led by
    # the best unseated bot, so the leaders stay together as far as they can.
    again = seat_round(order, 4, meetings(seated.tables), {}, random.Random(1))
    assert repeats(again.tables, meetings(seated.tables)) == 0
    heads = [min(order.index(bot) for bot in table) for table in again.tables]
    assert heads == [0, 1, 2, 3]
    assert sorted(order.index(bot) for bot in again.tables[0]) == [0, 4, 8, 12]


def test_the_seeded_draw_is_reproducible() -> None:
    bots = [f"b{i}" for i in range(16)]
    flat = dict.fromkeys(bots, 1500.0)

    def first_round(seed: int) -> tuple[tuple[str, ...], ...]:
        rng = round_rng(seed, 1)
        return seat_round(standing_order(bots, flat, rng), 4, {}, {}, rng).tables

    assert first_round(7) == first_round(7)
    assert len({first_round(seed) for seed in range(6)}) == 6
    by_rating = {bot: float(number) for number, bot in enumerate(bots)}
    assert standing_order(bots, by_rating, random.Random(1))[:3] == ["b15", "b14", "b13"]


def test_a_seating_needs_enough_distinct_entrants() -> None:
    with pytest.raises(ValueError, match="at least 4"):
        seat_round(["a", "b", "c"], 4, {}, {}, random.Random(1))
    with pytest.raises(ValueError, match="twice"):
        seat_round(["a", "b", "a", "c"], 2, {}, {}, random.Random(1))


def test_a_large_field_is_seated_without_repeats() -> None:
    """64 bots at tables of 4 for 6 rounds from random standings: no repeat is needed and
    none is made (the search on a field past its exact range)."""
    bots = [f"b{i}" for i in range(64)]
    rng = random.Random(11)
    met: Counter[frozenset[str]] = Counter()
    for _ in range(6):
        order = bots[:]
        rng.shuffle(order)
        seated = seat_round(order, 4, met, {}, rng)
        assert repeats(seated.tables, met) == 0
        met.update(meetings(seated.tables))


# In the store ------------------------------------------------------------------------


def record_round(store: Store, tid: str, strength: dict[str, int]) -> None:
    """Play and record every match of the tournament's current round (by `strength`)."""
    for match_id in tournaments.pending_matches(store, tid):
        play(store, match_id, strength)
        assert recording.record_match(store, match_id)


def test_a_swiss_tournament_plays_its_rounds(store: Store) -> None:
    bots = [register(store, "sw") for _ in range(10)]
    # Golden 10's lowest score wins: bots[-1] is the strongest.
    strength = {bot: 10 * (len(bots) - number) for number, bot in enumerate(bots)}
    tid = tournaments.create_tournament(
        store, "golden10", 4, bots, format=SWISS, rounds=3, seed=3, deadline_ms=100
    )
    view = queries.tournament(store, tid)
    assert (view.format, view.rounds, view.round, view.seeding) == ("swiss", 3, 1, "draw")
    assert view.name.startswith("golden10-4p Swiss ")
    first = plan_of(store, tid)
    assert [(m.round, m.number) for m in first] == [(1, 1), (1, 2)]
    assert swiss_rounds.next_round(store, tid) == []  # round 1 is not recorded
    assert swiss_rounds.standings(store, tid) == []  # nothing to stand on yet
    assert not tournaments.round_due(store, tid)
    seen: Counter[str] = Counter()
    for number in (1, 2, 3):
        plan = [m for m in plan_of(store, tid) if m.round == number]
        assert len(plan) == 2 and all(len(m.bot_ids) == 4 for m in plan)
        running = queries.tournament(store, tid)
        # Planned so far, and what its progress counts to: 2 tables a round, 3 rounds.
        assert (running.matches_total, running.matches_in_all) == (2 * number, 6)
        seated = [bot for m in plan for bot in m.bot_ids]
        assert len(set(seated)) == 8
        seen.update(bot for bot in bots if bot not in seated)
        record_round(store, tid, strength)
        if number < 3:
            assert tournaments.round_due(store, tid)
            assert not tournaments.ready_to_finish(store, tid)
            assert not tables.finish_tournament(store, tid)
            standing = swiss_rounds.standings(store, tid)
            assert standing[0].bot_id in bots[-4:]
            assert all(line.se > 0 for line in standing)
            created = swiss_rounds.next_round(store, tid)
            assert created == [f"{tid}-m{n:04d}" for n in (2 * number + 1, 2 * number + 2)]
            assert swiss_rounds.next_round(store, tid) == []  # once
    assert sorted(seen.values()) == [1] * 6  # 2 byes a round, 6 bots, never one twice
    assert not tournaments.round_due(store, tid)
    assert tournaments.ready_to_finish(store, tid)
    assert tables.finish_tournament(store, tid)
    view = queries.tournament(store, tid)
    assert (view.status, view.round, view.matches_total, view.matches_in_all) == (
        "finished", 3, 6, 6,
    )  # fmt: skip
    assert sorted(line.bot_id for line in view.table) == sorted(bots)
    games = {line.bot_id: line.games for line in view.table}
    assert sorted(games.values()) == [8] * 6 + [12] * 4  # 2 or 3 matches of 4 games
    shown = swiss_rounds.rounds(view, queries.tournament_matches(store, tid))
    assert [(r.number, len(r.matches), len(r.byes)) for r in shown] == [
        (n, 2, 2) for n in (1, 2, 3)
    ]


def test_swiss_refusals_and_the_round_robin_default(store: Store) -> None:
    bots = [register(store, "sr") for _ in range(5)]
    with pytest.raises(LeagueError, match=r"1\.\.64 rounds"):
        tournaments.create_tournament(store, "goodge", 4, bots, format=SWISS, rounds=0)
    with pytest.raises(LeagueError, match="rounds are for a Swiss"):
        tournaments.create_tournament(store, "goodge", 4, bots, rounds=2)
    tid = tournaments.create_tournament(store, "goodge", 4, bots, seed=1)
    view = queries.tournament(store, tid)
    assert (view.format, view.rounds, view.round, view.seeding) == ("round_robin", 1, 1, None)
    assert swiss_rounds.standings(store, tid) == []
    assert swiss_rounds.next_round(store, tid) == []


def test_the_first_round_by_ladder_rating(store: Store) -> None:
    """Seeded by rating: the ladder's fit where a bot has one, else its live Elo, else the
    start (1500); the best four sit at one table."""
    bots = [register(store, "rt") for _ in range(8)]
    recording.ensure_ladder(store, "goodge", 4)
    ratings = {  # bot: (live Elo, fit)
        bots[0]: (1000.0, 1900.0),
        bots[1]: (1800.0, None),
        bots[2]: (1500.0, 1700.0),
        bots[4]: (1600.0, None),
        bots[5]: (1950.0, 1000.0),
        bots[6]: (1400.0, None),
        bots[7]: (1300.0, None),
    }  # bots[3] has no rating: 1500
    with store.session() as session:
        for bot, (live, fit) in ratings.items():
            session.add(
                RatingRow(
                    ladder_id="goodge-4p",
                    bot_id=bot,
                    rating=live,
                    games=5,
                    updated_at=datetime.now(UTC),
                    fit_rating=fit,
                    fit_se=None if fit is None else 50.0,
                )
            )
    tid = tournaments.create_tournament(
        store, "goodge", 4, bots, format=SWISS, rounds=2, seeding=Seeding.RATING, seed=5
    )
    tables_ = [set(m.bot_ids) for m in plan_of(store, tid)]
    assert tables_ == [{bots[0], bots[1], bots[2], bots[4]}, {bots[3], bots[5], bots[6], bots[7]}]
    assert queries.tournament(store, tid).seeding == "rating"


def test_a_scheduled_swiss_run_is_swiss(store: Store) -> None:
    bots = [register(store, "ss") for _ in range(6)]
    template = tournaments.create_tournament(
        store, "goof", 3, bots, schedule="* * * * *", format=SWISS, rounds=4, seed=9
    )
    at = datetime.now(UTC) + timedelta(minutes=2)
    run = tournaments.start_scheduled_run(store, template, at)
    view = queries.tournament(store, run)
    assert (view.format, view.rounds, view.round, view.status) == ("swiss", 4, 1, "running")
    assert len(plan_of(store, run)) == 2  # 6 bots at tables of 3


def test_a_recorded_round_counts_for_the_sweep_as_due_not_finished(store: Store) -> None:
    bots = [register(store, "sp") for _ in range(6)]
    tid = tournaments.create_tournament(store, "goof", 3, bots, format=SWISS, rounds=2, seed=4)
    record_round(store, tid, {bot: n for n, bot in enumerate(bots)})
    later = datetime.now(UTC) + timedelta(minutes=1)
    assert tournaments.lost_matches(store, later) == ([], [tid])
    assert tournaments.round_due(store, tid) and not tournaments.ready_to_finish(store, tid)
    new = swiss_rounds.next_round(store, tid)
    assert len(new) == 2
    assert tournaments.lost_matches(store, later) == (new, [])
    # A cancelled Swiss tournament plans no more rounds.
    record_round(store, tid, {bot: n for n, bot in enumerate(bots)})
    with store.session() as session:
        session.execute(update(TournamentRow).where(TournamentRow.id == tid).values(rounds=3))
    tournaments.cancel_tournament(store, tid)
    assert not tournaments.round_due(store, tid)
    assert swiss_rounds.next_round(store, tid) == []


def test_the_round_fence_plans_a_round_once_when_two_workers_race(db_url: str) -> None:
    """Two workers (two stores, two threads) that recorded a round's last matches call
    next_round at the same moment, again and again: each round is planned exactly once."""
    a, b = Store(db_url), Store(db_url, upgrade=False)
    try:
        bots = [register(a, "fence") for _ in range(8)]
        strength = {bot: n for n, bot in enumerate(bots)}
        tid = tournaments.create_tournament(a, "golden10", 4, bots, format=SWISS, rounds=9, seed=1)
        barrier = threading.Barrier(2)

        def race(store: Store) -> list[str]:
            barrier.wait()
            return swiss_rounds.next_round(store, tid)

        with ThreadPoolExecutor(2) as pool:
            for number in range(2, 10):
                record_round(a, tid, strength)
                results = list(pool.map(race, [a, b]))
                assert sorted(len(created) for created in results) == [0, 2], results
                assert queries.tournament(a, tid).round == number
        assert [m.round for m in plan_of(a, tid)] == [n for n in range(1, 10) for _ in (0, 1)]
    finally:
        a.close()
        b.close()
