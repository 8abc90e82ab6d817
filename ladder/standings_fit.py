"""A ladder's standings with uncertainty, refreshed from the store after each rated result.

`refresh_fit` reads every rated game of a ladder, fits them all with
`ladder.ladder_fit.fit_ladder` (the ladder's learnt `field_sd` as the prior)
and stores each bot's rating and standard error (`ratings.fit_rating`,
`ratings.fit_se`) with the spread the fit learnt and the moment its games
were read (`ladders.field_sd`, `ladders.fitted_at`). The live Elo
(`ladder.recording`) stays the per-result update beside it.

The unit of a ranking is a game (each seat rotation of a duplicate match),
not a match: `bench.ladder_sim` measured the fit on games, the tournament
table (`ladder.tables`) fits games too, and the rotations of a deal tell
more than the one sum of them (which bot beat which in every seat). The
errors take the rotations as independent games; they are not: a deal's
luck is shared and cancels out between rotations, so two bots' difference
varies less than over as many independent games (0.76 of it in
`bench.ladder_sim`'s games, about 0.7 in real Golden 10 games): the errors
err on the side of caution. A bot
that forfeited a match is placed last in each of its games, as in the match
result (`ladder.tables.forfeiters_last`). Rated means the results not marked
practice: practice and challenge matches rate nobody here either; tournament
matches count, as they do for the live Elo.

Refreshes may run at once (two workers recording two matches). Each reads
the database's clock first, then the games, so a fit holds every rated
result committed before its `fitted_at`; it is stored only by a conditional
UPDATE that wins while the stored fit is older, so a slow refresh never
writes its fit over a newer one. A refresh that fails leaves the last fit;
the next result's refresh repairs it, or, once the ladder has had no rated
result for `CLOCK_MARGIN`, the workers' sweep (`stale_ladders`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import and_, bindparam, func, or_, select, update
from sqlalchemy.orm import Session

from ladder.ladder_fit import FIELD_SD, LadderFit, fit_ladder
from ladder.models import LadderRow, RatingRow, ResultRow, SeatRow
from ladder.store import NotFound, Store, rows_changed
from ladder.tables import forfeiters_last

__all__ = [
    "CLOCK_MARGIN",
    "LadderGames",
    "PendingFit",
    "ladder_games",
    "rated",
    "read_fit",
    "refresh_fit",
    "stale_ladders",
    "store_fit",
]

CLOCK_MARGIN = timedelta(minutes=5)
"""How far the workers' clocks (a result's `recorded_at`) may be from the database's (a
fit's `fitted_at`): a fit this close after a rated result, or before it, may miss it."""


@dataclass(frozen=True)
class LadderGames:
    """A ladder's rated games as `fit_ladder` takes them: bots numbered in id order."""

    bots: list[str]
    rankings: list[list[tuple[int, int]]]


def ladder_games(store: Store, ladder: str) -> LadderGames:
    """Every rated game of `ladder`, one ranking per game, from one read of the store."""
    with store.session() as session:
        return _ladder_games(session, ladder)


def _ladder_games(session: Session, ladder: str) -> LadderGames:
    # One statement reads each seat with its bot's result in the match (one snapshot:
    # the seats and the forfeits agree).
    seats = session.execute(
        select(SeatRow.match_id, SeatRow.game_index, SeatRow.bot_id, SeatRow.rank)
        .add_columns(ResultRow.forfeit)
        .join(
            ResultRow,
            and_(ResultRow.match_id == SeatRow.match_id, ResultRow.bot_id == SeatRow.bot_id),
        )
        .where(ResultRow.ladder_id == ladder, ResultRow.practice.is_(False))
        .order_by(SeatRow.match_id, SeatRow.game_index, SeatRow.seat)
    ).all()
    bots = sorted({seat.bot_id for seat in seats})
    index = {bot: number for number, bot in enumerate(bots)}
    rankings = [
        [
            (index[bot], rank)
            for bot, rank in forfeiters_last([(s.bot_id, s.rank, s.forfeit) for s in game])
        ]
        for _, game in itertools.groupby(seats, key=lambda s: (s.match_id, s.game_index))
    ]
    return LadderGames(bots, rankings)


@dataclass(frozen=True)
class PendingFit:
    """A fit of a ladder's rated games, not stored yet: `read_at` is the database's clock
    before the games were read (every result committed before it is in them)."""

    ladder: str
    read_at: datetime
    bots: list[str]
    fit: LadderFit


def read_fit(store: Store, ladder: str) -> PendingFit | None:
    """Fit every rated game of `ladder`, the ladder's learnt spread as the prior; None while
    it has no rated game. Raises NotFound for a ladder that does not exist."""
    read_at = store.database_now()
    with store.session() as session:
        row = session.get(LadderRow, ladder)
        if row is None:
            raise NotFound(f"no ladder {ladder!r}")
        prior = row.field_sd or FIELD_SD
        games = _ladder_games(session, ladder)
    if not games.bots:
        return None
    fit = fit_ladder(len(games.bots), games.rankings, prior_sd=prior)
    return PendingFit(ladder, read_at, games.bots, fit)


def store_fit(store: Store, pending: PendingFit) -> bool:
    """Store the fit unless one of games read later is stored already; whether it was."""
    with store.session() as session:
        # The fence: one conditional UPDATE, which also takes the ladder's row lock (or
        # SQLite's write lock) until the ratings below are written with it.
        won = rows_changed(
            session,
            update(LadderRow)
            .where(
                LadderRow.id == pending.ladder,
                or_(LadderRow.fitted_at.is_(None), LadderRow.fitted_at < pending.read_at),
            )
            .values(fitted_at=pending.read_at, field_sd=pending.fit.field_sd)
            .execution_options(synchronize_session=False),
        )
        if not won:
            return False
        # One executemany for the whole field: this runs after every recorded match.
        # On the session's connection: the ORM would take the list for its bulk UPDATE by
        # primary key, which has no WHERE of its own.
        session.connection().execute(
            update(RatingRow)
            .where(RatingRow.ladder_id == pending.ladder, RatingRow.bot_id == bindparam("fitted"))
            .values(fit_rating=bindparam("fitted_rating"), fit_se=bindparam("fitted_se")),
            [
                {"fitted": bot, "fitted_rating": line.rating, "fitted_se": line.se}
                for bot, line in zip(pending.bots, pending.fit.bots, strict=True)
            ],
        )
    return True


def refresh_fit(store: Store, ladder: str) -> bool:
    """Fit all of `ladder`'s rated games and store the fit; whether it was stored.

    False when the ladder has no rated game yet, or when a fit of games read
    later is stored already (this one would be older). Safe to repeat: a
    refresh with nothing new fits the same games again, under the prior the
    last fit learnt. Raises NotFound for a ladder that does not exist.
    """
    pending = read_fit(store, ladder)
    return pending is not None and store_fit(store, pending)


def rated(store: Store, match_id: str) -> bool:
    """Whether the recorded match is one of the fit's: its results rated, neither practice
    nor a challenge (a match's results are all one or the other)."""
    with store.session() as session:
        practice = session.scalar(
            select(ResultRow.practice).where(ResultRow.match_id == match_id).limit(1)
        )
    return practice is False


def stale_ladders(store: Store) -> list[str]:
    """The ladders whose fit may miss a rated result: never fitted, or quiet (no rated
    result for `CLOCK_MARGIN`) with a rated result recorded after its fit or within
    `CLOCK_MARGIN` of it (the clocks may differ).

    A ladder that is still playing is left to the refresh after its next result, which
    fits every game: refitting it at every sweep too would double the work of a busy
    ladder for nothing. Once quiet, one refit (at least `CLOCK_MARGIN` after its newest
    result) leaves it not stale until it plays again.
    """
    now = store.database_now()
    with store.session() as session:
        newest = (
            select(ResultRow.ladder_id, func.max(ResultRow.recorded_at).label("newest"))
            .where(ResultRow.practice.is_(False))
            .group_by(ResultRow.ladder_id)
            .subquery()
        )
        rows = session.execute(
            select(LadderRow.id, LadderRow.fitted_at, newest.c.newest)
            .join(newest, newest.c.ladder_id == LadderRow.id)
            .order_by(LadderRow.id)
        ).all()
    return [lid for lid, fitted_at, newest_at in rows if _stale(fitted_at, newest_at, now)]


def _stale(fitted_at: datetime | None, newest: datetime, now: datetime) -> bool:
    if fitted_at is None:
        return True
    settled = newest + CLOCK_MARGIN
    return settled > fitted_at and settled <= now
