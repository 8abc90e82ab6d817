"""Swiss tournaments in the store: the next round, planned once a round is recorded, and the
rounds and standings so far as `arena tournament show` and the web show them.

The standing that seats a round is the Plackett-Luce fit of the tournament's
games so far with the ladder's Gaussian prior (`ladder.ladder_fit`): the
model of the final table (`ladder.tables`), so a round seats together the
bots the final table would put near each other, and the prior keeps a bot
that won (or lost) all its few games finite. Summed places were the other
choice; they ignore whom a bot met, which a Swiss tournament, where the
leaders meet the leaders, makes matter: two bots on the same points, one of
which beat the leaders, are not alike, and the fit tells them apart.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from ladder.ladder_fit import LadderRating, fit_ladder
from ladder.models import BotRow, TournamentMatchRow, TournamentRow
from ladder.queries import PlannedMatch, TournamentView
from ladder.records import TournamentFormat
from ladder.store import NotFound, Store, rows_changed
from ladder.swiss import meetings, round_rng, seat_round, standing_order
from ladder.tables import tournament_rankings
from ladder.tournaments import add_plan, due_round
from ladder.wording import bot_label


@dataclass(frozen=True)
class RoundView:
    """One round of a Swiss tournament: its tables (matches) and the bots with a bye."""

    number: int
    matches: list[PlannedMatch]
    byes: list[str]
    """Names."""


@dataclass(frozen=True)
class StandingLine:
    """A bot's standing so far: its rating in the fit of the games recorded (Elo scale) and
    that rating's standard error."""

    bot_id: str
    bot: str
    rating: float
    se: float
    games: int


def next_round(store: Store, tournament_id: str) -> list[str]:
    """Plan the next round of a Swiss tournament whose current round is all recorded; the
    new matches' ids, or [] when none is due or another worker planned it.

    Fenced: the transaction begins with one conditional UPDATE of the tournament's
    round (from the round read, while it is due); of two workers that recorded a
    round's last matches at once, one moves the round on and plans it in the same
    transaction, the other's UPDATE changes no row. (First, so that SQLite takes its
    write lock before this transaction reads anything.)
    """
    with store.session() as session:
        current = session.scalar(
            select(TournamentRow.round).where(TournamentRow.id == tournament_id)
        )
    if current is None:
        raise NotFound(f"no tournament with id {tournament_id!r}")
    with store.session() as session:
        moved = rows_changed(
            session,
            update(TournamentRow)
            .where(due_round(tournament_id), TournamentRow.round == current)
            .values(round=current + 1)
            .execution_options(synchronize_session=False),
        )
        if moved != 1:
            return []
        tournament = session.get(TournamentRow, tournament_id)
        assert tournament is not None
        earlier = session.scalars(
            select(TournamentMatchRow).where(TournamentMatchRow.tournament_id == tournament_id)
        ).all()
        byes: Counter[str] = Counter()
        for number in range(1, current + 1):
            seated = {bot for row in earlier if row.round == number for bot in row.bot_ids}
            byes.update(bot for bot in tournament.entrants if bot not in seated)
        fit = _fit_so_far(session, tournament)
        rng = round_rng(tournament.seed, current + 1)
        seating = seat_round(
            standing_order(
                tournament.entrants, {bot: line.rating for bot, line in fit.items()}, rng
            ),
            tournament.players,
            meetings(row.bot_ids for row in earlier),
            byes,
            rng,
        )
        return add_plan(
            session,
            tournament_id,
            tournament.seed if tournament.seed_chosen else None,
            seating.tables,
            round_number=current + 1,
            first_number=len(earlier) + 1,
        )


def _fit_so_far(session: Session, tournament: TournamentRow) -> dict[str, LadderRating]:
    """Each entrant's rating in the fit of the tournament's games recorded so far."""
    entrants, rankings, _ = tournament_rankings(session, tournament)
    fit = fit_ladder(len(entrants), rankings)
    return dict(zip(entrants, fit.bots, strict=True))


def standings(store: Store, tournament_id: str) -> list[StandingLine]:
    """A Swiss tournament's standing so far (the one the next round is seated by), best
    first; [] before its first game is recorded, and for a round robin (its table comes
    at the end)."""
    with store.session() as session:
        tournament = session.get(TournamentRow, tournament_id)
        if tournament is None:
            raise NotFound(f"no tournament with id {tournament_id!r}")
        if tournament.format != TournamentFormat.SWISS:
            return []
        fit = _fit_so_far(session, tournament)
        names = {
            bot.id: bot_label(bot.name, bot.version)
            for bot in session.scalars(select(BotRow).where(BotRow.id.in_(list(fit))))
        }
    if not any(line.games for line in fit.values()):
        return []
    lines = [
        StandingLine(bot, names.get(bot, bot), line.rating, line.se, line.games)
        for bot, line in fit.items()
    ]
    return sorted(lines, key=lambda line: (-line.rating, line.bot))


def rounds(view: TournamentView, planned: Sequence[PlannedMatch]) -> list[RoundView]:
    """The tournament's planned matches by round, each round with its byes (the entrants
    it does not seat); a round robin is one round."""
    numbers = sorted({match.round for match in planned})
    shown = []
    for number in numbers:
        matches = [match for match in planned if match.round == number]
        seated = {bot for match in matches for bot in match.bots}
        shown.append(RoundView(number, matches, [e for e in view.entrants if e not in seated]))
    return shown
