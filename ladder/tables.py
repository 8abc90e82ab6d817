"""A tournament's table and head-to-head: from all its games, once they are recorded.

The table is maximum-likelihood Plackett-Luce ratings with 95% intervals
(`ladder.plackett_luce`), the way BayesElo and Ordo rate engine round robins; the
head-to-head is one bot's record against another with the likelihood of
superiority and an SPRT.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from enum import IntEnum
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from ladder import pairwise, plackett_luce
from ladder.errors import LeagueError
from ladder.models import ResultRow, SeatRow, TournamentMatchRow, TournamentRow
from ladder.queries import UnknownBot, resolve_bot
from ladder.records import TournamentStatus
from ladder.store import NotFound, Store, rows_changed
from ladder.tournaments import tournament_complete


class Finished(IntEnum):
    """What `finish_tournament` found; true once the tournament is finished (NOW or BEFORE)."""

    NOT = 0
    """Matches are outstanding, or the tournament ended otherwise (cancelled)."""
    NOW = 1
    """This call stored the table: the one that finished it."""
    BEFORE = 2
    """Finished already, by another call."""


def tournament_rankings(
    session: Session, tournament: TournamentRow
) -> tuple[list[str], list[list[tuple[int, int]]], list[str]]:
    """The entrants, every game of the tournament as a ranking over them, and its match.

    Per game the seats' ranks, except that a bot that forfeited the match is
    placed last in each of its games (as in the match result), the others
    keeping their order. The games of one match (the rotations of one deal)
    are not independent: their match id clusters them in the fit.
    """
    entrants: list[str] = list(tournament.entrants)
    index = {bot: number for number, bot in enumerate(entrants)}
    match_ids = select(TournamentMatchRow.match_id).where(
        TournamentMatchRow.tournament_id == tournament.id
    )
    forfeits = {
        (row.match_id, row.bot_id)
        for row in session.scalars(
            select(ResultRow).where(ResultRow.match_id.in_(match_ids), ResultRow.forfeit)
        )
    }
    seats = session.scalars(
        select(SeatRow)
        .where(SeatRow.match_id.in_(match_ids))
        .order_by(SeatRow.match_id, SeatRow.game_index, SeatRow.seat)
    ).all()
    rankings: list[list[tuple[int, int]]] = []
    matches: list[str] = []
    for (match_id, _), group in itertools.groupby(seats, key=lambda s: (s.match_id, s.game_index)):
        game = [(s.bot_id, s.rank, (s.match_id, s.bot_id) in forfeits) for s in group]
        rankings.append([(index[bot], rank) for bot, rank in forfeiters_last(game)])
        matches.append(match_id)
    return entrants, rankings, matches


def forfeiters_last(game: Sequence[tuple[str, int, bool]]) -> list[tuple[str, int]]:
    """One game's ranking from its seats, each (bot, rank in the game, forfeited the match):
    the seats' ranks, except that a bot that forfeited the match is placed last (as in the
    match result), the others keeping their order."""
    playing = [(bot, rank) for bot, rank, forfeit in game if not forfeit]
    ranking = [(bot, 1 + sum(1 for _, other in playing if other < rank)) for bot, rank in playing]
    ranking += [(bot, len(playing) + 1) for bot, _, forfeit in game if forfeit]
    return ranking


def _labels(keys: list[str]) -> list[int]:
    """One small int per distinct key, in order of first appearance."""
    numbers: dict[str, int] = {}
    return [numbers.setdefault(key, len(numbers)) for key in keys]


def finish_tournament(store: Store, tournament_id: str) -> Finished:
    """Store the tournament's table and mark it finished, once all its matches are recorded.

    The table is maximum-likelihood Plackett-Luce ratings with 95% intervals
    from all the tournament's games: a list of {"bot_id", "rating",
    "ci_low", "ci_high", "games", "measured", "bound", "reason"}
    (`ladder.plackett_luce.table_line`), best first. A bot the games cannot
    measure (last in every game, say) has "measured" false: a one-sided
    bound ("bound" "below": "rating" and "ci_high" are the bound, "ci_low"
    null) or none ("rating", "ci_low", "ci_high" null), and a "reason". Finished.NOW for
    the one call that finished it, BEFORE once it is finished, NOT while matches are
    outstanding. Idempotent: a finished tournament is left as it is.
    """
    with store.session() as session:
        tournament = session.get(TournamentRow, tournament_id)
        if tournament is None:
            raise NotFound(f"no tournament with id {tournament_id!r}")
        if tournament.status != TournamentStatus.RUNNING:
            return _ended(tournament.status)
    if not tournament_complete(store, tournament_id):
        return Finished.NOT
    with store.session() as session:
        finished = store.database_now(session)
        tournament = session.get(TournamentRow, tournament_id)
        assert tournament is not None
        if tournament.status == TournamentStatus.FINISHED:
            return Finished.BEFORE
        entrants, rankings, matches = tournament_rankings(session, tournament)
        fit = plackett_luce.plackett_luce(len(entrants), rankings, clusters=_labels(matches))
        ordered = sorted(
            zip(entrants, fit.items, strict=True),
            key=lambda pair: (plackett_luce.table_order(pair[1]), pair[0]),
        )
        table = [{"bot_id": bot, **plackett_luce.table_line(item, 2)} for bot, item in ordered]
        # Fenced: only a running tournament finishes. Of two workers finishing at once,
        # one stores the table and the other's UPDATE matches no row; an operator's
        # cancel that came first leaves it cancelled, with no table.
        stored = rows_changed(
            session,
            update(TournamentRow)
            .where(
                TournamentRow.id == tournament_id,
                TournamentRow.status == TournamentStatus.RUNNING,
            )
            .values(table=table, status=TournamentStatus.FINISHED, finished_at=finished)
            .execution_options(synchronize_session=False),
        )
        if stored:
            return Finished.NOW
        ended = session.scalar(
            select(TournamentRow.status).where(TournamentRow.id == tournament_id)
        )
    return _ended(ended)


def _ended(status: str | None) -> Finished:
    """A tournament no longer running: finished before this call, or ended otherwise."""
    return Finished.BEFORE if status == TournamentStatus.FINISHED else Finished.NOT


def tournament_los(store: Store, tournament_id: str, a: str, b: str) -> dict[str, Any]:
    """Is A stronger than B? Their games against each other in the tournament.

    A and B are bot references. The answer holds A's wins, draws and losses
    against B over the games both played (a win is a better rank, whatever
    the others did), the likelihood of superiority, and an SPRT of
    elo0 = 0 against elo1 = 10.
    """
    bots = []
    for ref in (a, b):
        try:
            bots.append(resolve_bot(store, ref))
        except UnknownBot as error:
            raise LeagueError(str(error)) from None
    with store.session() as session:
        tournament = session.get(TournamentRow, tournament_id)
        if tournament is None:
            raise NotFound(f"no tournament with id {tournament_id!r}")
        entrants, rankings, _ = tournament_rankings(session, tournament)
    for bot in bots:
        if bot.id not in entrants:
            raise LeagueError(f"bot {bot.name}@{bot.version} is not in tournament {tournament_id}")
    if bots[0].id == bots[1].id:
        raise LeagueError("A and B must be different bots")
    wins, draws, losses = pairwise.pairwise_record(
        rankings, entrants.index(bots[0].id), entrants.index(bots[1].id)
    )
    test = pairwise.sprt(wins, draws, losses)
    return {
        "tournament": tournament_id,
        "a": bots[0].id,
        "b": bots[1].id,
        "wins": wins,
        "draws": draws,
        "losses": losses,
        "los": pairwise.likelihood_of_superiority(wins, losses),
        "sprt": {
            "elo0": 0.0,
            "elo1": 10.0,
            "llr": test.llr,
            "lower": test.lower,
            "upper": test.upper,
            "decision": test.decision,
        },
    }
