"""ladder.standings_fit on SQLite and PostgreSQL: the ladder's fit of its rated games, stored."""

from __future__ import annotations

import dataclasses
import random
import threading
from datetime import datetime, timedelta

from sqlalchemy import func, select, update

from ladder import queries, recording, standings_fit, tournaments
from ladder.elo import PROVISIONAL_SE
from ladder.models import OPERATOR_AUTHOR, LadderRow, RatingRow, ResultRow
from ladder.records import MatchRequest
from ladder.store import Store
from tests.support.ladder import play, register

LADDER = "golden10-3p"


def _strengths(bots: list[str]) -> dict[str, int]:
    """Golden 10's points: fewer is better, so the first bot is the strongest."""
    return {bot: 10 * number for number, bot in enumerate(bots)}


def _round_robin(store: Store, bots: list[str], seed: int, luck: int = 0) -> None:
    """A duplicate round robin of `bots` at 3 seats, played and recorded: each match's points
    are the bots' strengths plus a draw of up to `luck` (seeded), in all its games."""
    rng = random.Random(seed)
    tid = tournaments.create_tournament(store, "golden10", 3, bots, seed=seed)
    for match_id in tournaments.pending_matches(store, tid):
        points = {bot: value + rng.randint(0, luck) for bot, value in _strengths(bots).items()}
        play(store, match_id, points)
        assert recording.record_match(store, match_id)


def _fits(store: Store) -> dict[str, tuple[float | None, float | None]]:
    with store.session() as session:
        return {
            row.bot_id: (row.fit_rating, row.fit_se)
            for row in session.scalars(select(RatingRow).where(RatingRow.ladder_id == LADDER))
        }


def _ladder(store: Store) -> LadderRow:
    with store.session() as session:
        row = session.get(LadderRow, LADDER)
        assert row is not None
        session.expunge(row)
        return row


def test_a_refresh_fits_every_rated_bot_the_stronger_higher(store: Store) -> None:
    bots = [register(store, "fit") for _ in range(4)]
    _round_robin(store, bots, seed=1)
    assert all(fit == (None, None) for fit in _fits(store).values())
    before = _ladder(store)
    assert (before.field_sd, before.fitted_at) == (None, None)

    assert standings_fit.refresh_fit(store, LADDER)
    fits = _fits(store)
    ratings = [fits[bot][0] for bot in bots]
    assert all(rating is not None for rating in ratings)
    assert ratings == sorted(ratings, reverse=True)  # type: ignore[type-var]
    assert all(se is not None and se > 0 for _, se in fits.values())
    after = _ladder(store)
    assert after.field_sd is not None and after.field_sd > 0 and after.fitted_at is not None

    # The standings follow the fit, best first, with the live Elo beside it.
    lines = queries.standings(store, LADDER)
    assert [line.bot_id for line in lines] == bots
    for line in lines:
        assert (line.rating, line.se) == fits[line.bot_id]
        assert line.elo != line.rating
    # A refresh with nothing new is stored too: the same games under the prior the last fit
    # learnt (one more step of its learning), in the same order.
    assert standings_fit.refresh_fit(store, LADDER)
    again = _fits(store)
    assert sorted(again, key=lambda bot: -again[bot][0]) == bots  # type: ignore[operator]
    assert _ladder(store).fitted_at > after.fitted_at  # type: ignore[operator]


def test_the_error_shrinks_with_games_and_provisional_follows_it(store: Store) -> None:
    bots = [register(store, "shrink") for _ in range(4)]
    # Mixed results (the luck is larger than the gaps), as real games have them.
    _round_robin(store, bots, seed=2, luck=25)
    assert standings_fit.refresh_fit(store, LADDER)
    first = _fits(store)
    for seed in range(3, 9):
        _round_robin(store, bots, seed=seed, luck=25)
    assert standings_fit.refresh_fit(store, LADDER)
    later = _fits(store)
    for bot in bots:
        assert later[bot][1] < first[bot][1]  # type: ignore[operator]

    # Provisional is the error above PROVISIONAL_SE, whatever the number of matches.
    sure, unsure = bots[1], bots[2]
    with store.session() as session:
        for bot, se in ((sure, PROVISIONAL_SE - 1), (unsure, PROVISIONAL_SE + 1)):
            session.execute(
                update(RatingRow)
                .where(RatingRow.ladder_id == LADDER, RatingRow.bot_id == bot)
                .values(fit_se=se)
            )
    lines = {line.bot_id: line for line in queries.standings(store, LADDER)}
    assert lines[sure].games == lines[unsure].games
    assert not lines[sure].provisional and lines[unsure].provisional


def test_before_the_first_fit_the_live_elo_ranks_and_all_are_provisional(store: Store) -> None:
    bots = [register(store, "unfitted") for _ in range(3)]
    _round_robin(store, bots, seed=3)
    lines = queries.standings(store, LADDER)
    assert [line.bot_id for line in lines] == bots
    assert all(line.rating == line.elo and line.se is None and line.provisional for line in lines)


def _ladder_match(store: Store, match_id: str, bots: list[str], challenger: str | None) -> None:
    request = MatchRequest(
        match_id, "golden10", 3, tuple(bots), None, {}, duplicate=False, deadline_ms=0
    )
    store.create_match(dataclasses.replace(request, challenger=challenger))
    # The weakest bot wins: were these games in the fit, it would rate first.
    play(store, match_id, {bot: -10 * number for number, bot in enumerate(bots)})


def test_practice_and_challenge_results_are_not_in_the_fit(store: Store) -> None:
    bots = [register(store, "rated") for _ in range(3)]
    _round_robin(store, bots, seed=4)
    rated = standings_fit.ladder_games(store, LADDER)
    assert rated.bots == sorted(bots) and len(rated.rankings) == 3  # one deal, 3 rotations
    newcomer = register(store, "newcomer")
    _ladder_match(store, "practice-1", [*bots[:2], newcomer], None)
    assert recording.record_match(store, "practice-1", practice_matches=5)
    for number in range(3):
        _ladder_match(store, f"challenge-{number}", bots[::-1], OPERATOR_AUTHOR)
        assert recording.record_match(store, f"challenge-{number}", practice_matches=0)
    assert standings_fit.ladder_games(store, LADDER) == rated
    assert standings_fit.refresh_fit(store, LADDER)
    fits = _fits(store)
    assert newcomer not in fits and all(fits[bot][0] is not None for bot in bots)
    assert [line.bot_id for line in queries.standings(store, LADDER)] == bots


def test_racing_refreshes_leave_the_newer_fit(store: Store) -> None:
    bots = [register(store, "race") for _ in range(4)]
    _round_robin(store, bots[:3], seed=5)
    older = standings_fit.read_fit(store, LADDER)
    assert older is not None and older.bots == sorted(bots[:3])
    _round_robin(store, bots, seed=6)
    newer = standings_fit.read_fit(store, LADDER)
    assert newer is not None and newer.read_at > older.read_at
    assert standings_fit.store_fit(store, newer)
    stored = _fits(store)
    # The older fit, finished last, is refused: it would hide the fourth bot's games.
    assert not standings_fit.store_fit(store, older)
    assert _fits(store) == stored
    line = newer.fit.bots[newer.bots.index(bots[3])]
    assert stored[bots[3]] == (line.rating, line.se)
    ladder = _ladder(store)
    assert (ladder.fitted_at, ladder.field_sd) == (newer.read_at, newer.fit.field_sd)


def test_the_sweep_finds_the_ladders_whose_fit_may_be_stale(store: Store) -> None:
    bots = [register(store, "stale") for _ in range(3)]
    _round_robin(store, bots, seed=7)
    assert standings_fit.stale_ladders(store) == [LADDER]
    assert standings_fit.refresh_fit(store, LADDER)
    # Its results are within the clocks' margin of the fit, but the ladder is still
    # playing: its next result's refresh fits them all again, not the sweep.
    assert standings_fit.stale_ladders(store) == []

    def back(by: timedelta, fitted_at: datetime) -> None:
        """The results (all at the newest's moment) and the fit (at `fitted_at`) as they
        would be `by` ago."""
        with store.session() as session:
            newest = session.scalar(select(func.max(ResultRow.recorded_at)))
            assert newest is not None
            session.execute(
                update(ResultRow)
                .where(ResultRow.ladder_id == LADDER)
                .values(recorded_at=newest - by)
            )
            session.execute(
                update(LadderRow).where(LadderRow.id == LADDER).values(fitted_at=fitted_at - by)
            )

    # Quiet since: the fit so close after its results may miss one, so it is looked at
    # again, once.
    back(2 * standings_fit.CLOCK_MARGIN, _ladder(store).fitted_at)  # type: ignore[arg-type]
    assert standings_fit.stale_ladders(store) == [LADDER]
    assert standings_fit.refresh_fit(store, LADDER)
    assert standings_fit.stale_ladders(store) == []
    # A fit well after the newest result has it: not stale, however recent.
    back(timedelta(0), _ladder(store).fitted_at + 2 * standings_fit.CLOCK_MARGIN)  # type: ignore[operator]
    assert standings_fit.stale_ladders(store) == []


def test_fits_stored_at_once_leave_the_newer(store: Store, db_url: str) -> None:
    bots = [register(store, "once") for _ in range(4)]
    _round_robin(store, bots[:3], seed=8)
    older = standings_fit.read_fit(store, LADDER)
    _round_robin(store, bots, seed=9)
    newer = standings_fit.read_fit(store, LADDER)
    assert older is not None and newer is not None
    others = [Store(db_url, upgrade=False) for _ in range(2)]
    try:
        for attempt in range(3):
            barrier = threading.Barrier(2)
            stored: dict[str, bool] = {}

            def put(
                which: Store,
                name: str,
                pending: standings_fit.PendingFit,
                barrier: threading.Barrier = barrier,
                stored: dict[str, bool] = stored,
            ) -> None:
                barrier.wait()
                stored[name] = standings_fit.store_fit(which, pending)

            threads = [
                threading.Thread(target=put, args=(others[0], "older", older)),
                threading.Thread(target=put, args=(others[1], "newer", newer)),
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            # Whichever went first, the newer fit is the one left: stored the first time
            # (over the older one if that went first), and neither stored again after.
            assert stored == {"newer": attempt == 0, "older": stored["older"]}
            assert attempt == 0 or not stored["older"]
            assert _ladder(store).fitted_at == newer.read_at
            line = newer.fit.bots[newer.bots.index(bots[3])]
            assert _fits(store)[bots[3]] == (line.rating, line.se)
    finally:
        for other in others:
            other.close()
