"""What the ladder shows: standings, bot histories, tournaments, matches.

Read-only functions over a `Store`; the CLI and the web call these. The
writes are in `ladder.tournaments`, `ladder.recording` and `ladder.tables`.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ladder.elo import PROVISIONAL_SE as PROVISIONAL_SE
from ladder.elo import uncertain
from ladder.models import (
    BotRow,
    LadderRow,
    MatchRow,
    RatingHistoryRow,
    RatingRow,
    ResultRow,
    TournamentMatchRow,
    TournamentRow,
)
from ladder.names import name_key
from ladder.records import PlanStatus, TournamentFormat, TournamentStatus
from ladder.store import PRESENCE_RENEW_S, NotFound, Store
from ladder.wording import bot_label


class UnknownBot(LookupError):
    """A bot reference (name, name@version or id) that matches nothing."""


@dataclass(frozen=True)
class BotRef:
    """A bot version as people name it."""

    id: str
    name: str
    version: str
    retired: bool = False


PRESENCE_STALE_S = 3 * PRESENCE_RENEW_S
"""A bot not seen for this long is offline, whatever `online` says (its replica died)."""


@dataclass(frozen=True)
class BotLine:
    """A bot version as `arena bot list` and the web show it."""

    id: str
    name: str
    version: str
    games: tuple[str, ...]
    online: bool
    last_seen_at: datetime | None
    retired: bool
    created_at: datetime

    @property
    def label(self) -> str:
        """How people name it: see `bot_label`."""
        return bot_label(self.name, self.version)


@dataclass(frozen=True)
class Standing:
    """One line of a ladder's standings."""

    rank: int
    bot_id: str
    bot: str
    version: str
    rating: float
    """The ladder's fit (`ladder.standings_fit`), or the live Elo before the bot's first fit."""
    se: float | None
    """The fit's standard error of `rating` (Elo); None before the bot's first fit."""
    elo: float
    """The live Elo, moved by each result."""
    games: int
    """Rated matches."""
    provisional: bool
    online: bool


@dataclass(frozen=True)
class PracticeLine:
    """A bot still playing its unrated practice matches on a ladder."""

    bot_id: str
    bot: str
    """`name` or `name@version`."""
    played: int
    """Practice matches recorded so far."""
    online: bool


@dataclass(frozen=True)
class TableLine:
    """One line of a tournament table (maximum-likelihood rating, 95% interval).

    A bot its games do not measure has `measured` False and the `reason`; with a
    one-sided `bound` ("below" or "above") `rating` is that bound and the
    interval's open end is None, without one all three numbers are None.
    """

    bot_id: str
    bot: str
    rating: float | None
    ci_low: float | None
    ci_high: float | None
    games: int
    measured: bool = True
    bound: str | None = None
    reason: str | None = None


@dataclass(frozen=True)
class TournamentView:
    """A tournament as `arena tournament show` and the web show it."""

    id: str
    name: str
    game: str
    players: int
    status: str
    schedule: str | None
    matches_total: int
    matches_finished: int
    table: list[TableLine]
    created_at: datetime
    finished_at: datetime | None
    entrants: list[str]
    """Names (`name` or `name@version`), in the order entered."""
    duplicate: bool
    deadline_ms: int
    options: dict[str, Any]
    parent_id: str | None
    """The scheduled template this tournament was started from."""
    matches_failed: int
    format: str = "round_robin"
    """`ladder.records.TournamentFormat`."""
    rounds: int = 1
    """A Swiss tournament's rounds (a round robin has one)."""
    round: int = 1
    """The round being played (the last one once finished)."""
    seeding: str | None = None
    """How a Swiss tournament's first round was seated: "draw" or "rating"."""

    @property
    def matches_in_all(self) -> int:
        """How many matches the tournament plays in all, what its progress counts to.

        `matches_total` is the matches planned so far: a Swiss tournament plans its rounds
        one by one, each seating every entrant but the byes (a remainder smaller than a
        table), so until its last round it plans fewer than it will play.
        """
        if self.format != TournamentFormat.SWISS or self.status == TournamentStatus.FINISHED:
            return self.matches_total
        return max(self.matches_total, len(self.entrants) // self.players * self.rounds)


@dataclass(frozen=True)
class PlannedMatch:
    """One match of a tournament's plan, as its page lists it."""

    match_id: str
    number: int
    bots: list[str]
    """Names, one per seat."""
    status: str
    round: int = 1


@dataclass(frozen=True)
class HistoryPoint:
    """A bot's rating after one recorded match."""

    ladder_id: str
    match_id: str
    rating: float
    games: int
    at: datetime


@dataclass(frozen=True)
class MatchLine:
    """A recorded match, as listed on a bot's page."""

    match_id: str
    ladder_id: str
    tournament_id: str | None
    bots: list[str]
    scores: list[int]
    ranks: list[int]
    recorded_at: datetime
    challenger_id: str | None = None
    """The author who asked for it as a challenge (unrated); None for a rated match."""


def ladder_id(game: str, players: int) -> str:
    """The id of the ladder of `game` at `players` players, e.g. `goodge-4p`."""
    return f"{game}-{players}p"


def shown_rating(row: RatingRow) -> tuple[float, float | None]:
    """A bot's rating on a ladder as the standings show it, and its standard error: the
    ladder's fit, which rates bots of fixed strength better than the live Elo
    (`ladder.ladder_fit`); the live Elo, with no error, before the bot's first fit."""
    if row.fit_rating is None:
        return row.rating, None
    return row.fit_rating, row.fit_se


def is_online(row: BotRow, now: datetime) -> bool:
    """Whether the bot holds a session `now` (the database's clock, which the referees
    write presence by), as far as a live referee has said recently."""
    if not row.online or row.last_seen_at is None:
        return False
    return now - row.last_seen_at < timedelta(seconds=PRESENCE_STALE_S)


def _bot_line(row: BotRow, now: datetime) -> BotLine:
    return BotLine(
        id=row.id,
        name=row.name,
        version=row.version,
        games=tuple(row.games),
        online=is_online(row, now),
        last_seen_at=row.last_seen_at,
        retired=row.retired_at is not None,
        created_at=row.created_at,
    )


def bot_lines(store: Store, *, retired: bool = False) -> list[BotLine]:
    """Every bot version by name, then newest version first; retired ones only if asked."""
    with store.session() as session:
        now = store.database_now(session)
        query = select(BotRow).order_by(BotRow.name, BotRow.created_at.desc())
        if not retired:
            query = query.where(BotRow.retired_at.is_(None))
        return [_bot_line(row, now) for row in session.scalars(query)]


def versions_of(store: Store, keys: Collection[str]) -> list[BotLine]:
    """Every version (retired ones too) of the bot names with these keys (`name_key`: a
    version may be registered under any look-alike spelling of its name), oldest first."""
    with store.session() as session:
        now = store.database_now(session)
        # Keys are made in Python, and the distinct spellings are few: matched here.
        spellings = [
            name
            for name in session.scalars(select(BotRow.name).distinct())
            if name_key(name) in keys
        ]
        rows = session.scalars(
            select(BotRow).where(BotRow.name.in_(spellings)).order_by(BotRow.created_at)
        )
        return [_bot_line(row, now) for row in rows]


def bot_line(store: Store, bot_id: str) -> BotLine:
    """One bot version by id; raises NotFound."""
    with store.session() as session:
        row = session.get(BotRow, bot_id)
        if row is None:
            raise NotFound(f"no bot with id {bot_id!r}")
        return _bot_line(row, store.database_now(session))


def resolve_bot(store: Store, ref: str) -> BotRef:
    """The bot version that `ref` names: an id, `name@version`, or a name (latest version)."""
    with store.session() as session:
        row = session.get(BotRow, ref)
        if row is None:
            name, _, version = ref.partition("@")
            query = select(BotRow).where(BotRow.name == name)
            if version:
                query = query.where(BotRow.version == version)
            row = session.scalars(query.order_by(BotRow.created_at.desc()).limit(1)).first()
        if row is None:
            raise UnknownBot(f"no bot {ref!r} (give an id, a name, or name@version)")
        return BotRef(row.id, row.name, row.version, row.retired_at is not None)


def ladders(store: Store) -> list[str]:
    """Every ladder that has rated games, by id."""
    with store.session() as session:
        return list(session.scalars(select(LadderRow.id).order_by(LadderRow.id)))


def standings(store: Store, ladder: str) -> list[Standing]:
    """The ladder's bots by rating (`shown_rating`), best first; the live Elo breaks ties."""
    with store.session() as session:
        now = store.database_now(session)
        rows = session.execute(
            select(RatingRow, BotRow)
            .join(BotRow, BotRow.id == RatingRow.bot_id)
            .where(RatingRow.ladder_id == ladder, BotRow.retired_at.is_(None))
            .order_by(
                func.coalesce(RatingRow.fit_rating, RatingRow.rating).desc(),
                RatingRow.rating.desc(),
                BotRow.name,
            )
        ).all()
        lines = []
        for number, (rating, bot) in enumerate(rows, start=1):
            shown, se = shown_rating(rating)
            lines.append(
                Standing(
                    rank=number,
                    bot_id=bot.id,
                    bot=bot.name,
                    version=bot.version,
                    rating=shown,
                    se=se,
                    elo=rating.rating,
                    games=rating.games,
                    provisional=uncertain(se),
                    online=is_online(bot, now),
                )
            )
        return lines


def in_practice(store: Store, ladder: str) -> list[PracticeLine]:
    """The ladder's bots with practice matches and no rating yet, most played first.

    A challenge is recorded as practice too (rating nobody), but it is no ladder
    match: it puts nobody in practice (see `ladder.challenges`).
    """
    with store.session() as session:
        now = store.database_now(session)
        rated = select(RatingRow.bot_id).where(RatingRow.ladder_id == ladder)
        rows = session.execute(
            select(BotRow, func.count())
            .join(ResultRow, ResultRow.bot_id == BotRow.id)
            .join(MatchRow, MatchRow.id == ResultRow.match_id)
            .where(
                ResultRow.ladder_id == ladder,
                ResultRow.practice.is_(True),
                MatchRow.challenger_id.is_(None),
                BotRow.retired_at.is_(None),
                BotRow.id.not_in(rated),
            )
            .group_by(BotRow.id)
            .order_by(func.count().desc(), BotRow.name)
        ).all()
        return [
            PracticeLine(bot.id, bot_label(bot.name, bot.version), played, is_online(bot, now))
            for bot, played in rows
        ]


def bot_history(store: Store, bot_id: str) -> list[HistoryPoint]:
    """The bot's rating after each recorded match, oldest first, on every ladder."""
    with store.session() as session:
        rows = session.scalars(
            select(RatingHistoryRow)
            .where(RatingHistoryRow.bot_id == bot_id)
            .order_by(RatingHistoryRow.at, RatingHistoryRow.id)
        )
        return [HistoryPoint(r.ladder_id, r.match_id, r.rating_after, r.games, r.at) for r in rows]


def recent_matches(store: Store, limit: int = 20) -> list[MatchLine]:
    """Recorded matches, newest first."""
    return matches_of(store, None, limit)


def matches_of(
    store: Store, bot_ids: Collection[str] | None = None, limit: int = 20
) -> list[MatchLine]:
    """Recorded matches, newest first; only those that one of `bot_ids` played, if given."""
    with store.session() as session:
        ids = select(ResultRow.match_id).group_by(ResultRow.match_id)
        if bot_ids is not None:
            ids = ids.where(ResultRow.bot_id.in_(set(bot_ids)))
        newest = (
            ids.add_columns(func.max(ResultRow.recorded_at).label("at"))
            .order_by(func.max(ResultRow.recorded_at).desc())
            .limit(limit)
        )
        match_ids = [row.match_id for row in session.execute(newest)]
        rows = session.scalars(
            select(ResultRow).where(ResultRow.match_id.in_(match_ids)).order_by(ResultRow.entry)
        ).all()
        challengers = dict(
            session.execute(
                select(MatchRow.id, MatchRow.challenger_id).where(MatchRow.id.in_(match_ids))
            ).all()
        )
        lines = []
        for match_id in match_ids:
            entries = [row for row in rows if row.match_id == match_id]
            first = entries[0]
            lines.append(
                MatchLine(
                    match_id=match_id,
                    ladder_id=first.ladder_id,
                    tournament_id=first.tournament_id,
                    bots=[row.bot_id for row in entries],
                    scores=[row.score for row in entries],
                    ranks=[row.rank for row in entries],
                    recorded_at=first.recorded_at,
                    challenger_id=challengers.get(match_id),
                )
            )
        return lines


def tournament(store: Store, tournament_id: str) -> TournamentView:
    """One tournament with its progress and (once finished) its table."""
    with store.session() as session:
        row = session.get(TournamentRow, tournament_id)
        if row is None:
            raise NotFound(f"no tournament with id {tournament_id!r}")
        return _view(session, row)


def tournament_status(store: Store, tournament_id: str) -> TournamentStatus:
    """Where one tournament stands: one column, for those who wait for it to finish."""
    with store.session() as session:
        status = session.scalar(
            select(TournamentRow.status).where(TournamentRow.id == tournament_id)
        )
    if status is None:
        raise NotFound(f"no tournament with id {tournament_id!r}")
    return TournamentStatus(status)


def tournaments(store: Store, limit: int = 50) -> list[TournamentView]:
    """Tournaments, newest first."""
    with store.session() as session:
        rows = session.scalars(
            select(TournamentRow).order_by(TournamentRow.created_at.desc()).limit(limit)
        ).all()
        return [_view(session, row) for row in rows]


def _view(session: Session, row: TournamentRow) -> TournamentView:
    counts = dict(
        session.execute(
            select(TournamentMatchRow.status, func.count())
            .where(TournamentMatchRow.tournament_id == row.id)
            .group_by(TournamentMatchRow.status)
        ).all()
    )
    names = _names(session, row.entrants)
    table = [
        TableLine(
            bot_id=line["bot_id"],
            bot=names.get(line["bot_id"], line["bot_id"]),
            rating=line["rating"],
            ci_low=line["ci_low"],
            ci_high=line["ci_high"],
            games=line["games"],
            # Tables stored before bounds existed measured every line.
            measured=line.get("measured", True),
            bound=line.get("bound"),
            reason=line.get("reason"),
        )
        for line in row.table or []
    ]
    return TournamentView(
        id=row.id,
        name=row.name,
        game=row.game,
        players=row.players,
        status=row.status,
        schedule=row.schedule,
        matches_total=sum(counts.values()),
        matches_finished=counts.get(PlanStatus.RECORDED, 0),
        table=table,
        created_at=row.created_at,
        finished_at=row.finished_at,
        entrants=[names.get(bot, bot) for bot in row.entrants],
        duplicate=row.duplicate,
        deadline_ms=row.deadline_ms,
        options=dict(row.options),
        parent_id=row.parent_id,
        matches_failed=counts.get(PlanStatus.FAILED, 0),
        format=row.format,
        rounds=row.rounds,
        round=row.round,
        seeding=row.seeding,
    )


def tournament_matches(store: Store, tournament_id: str) -> list[PlannedMatch]:
    """The tournament's planned matches in plan order, with their bots' names."""
    with store.session() as session:
        if session.get(TournamentRow, tournament_id) is None:
            raise NotFound(f"no tournament with id {tournament_id!r}")
        rows = session.scalars(
            select(TournamentMatchRow)
            .where(TournamentMatchRow.tournament_id == tournament_id)
            .order_by(TournamentMatchRow.number)
        ).all()
        names = _names(session, [bot for row in rows for bot in row.bot_ids])
        return [
            PlannedMatch(
                match_id=row.match_id,
                number=row.number,
                bots=[names.get(bot, bot) for bot in row.bot_ids],
                status=row.status,
                round=row.round,
            )
            for row in rows
        ]


def _names(session: Session, bot_ids: list[str]) -> dict[str, str]:
    """`name` (or `name@version` past version 1) of each of these bot ids."""
    return {
        bot.id: bot_label(bot.name, bot.version)
        for bot in session.scalars(select(BotRow).where(BotRow.id.in_(set(bot_ids))))
    }
