"""SQLAlchemy 2 typed models of the arena's store."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    DateTime,
    Dialect,
    ForeignKey,
    Integer,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    false,
    true,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


class SeedText(TypeDecorator[int]):
    """A seed of any size, stored as its decimal text.

    Drawn seeds have 128 bits, beyond every database's integer column; text
    keeps them exact everywhere (a NUMERIC column in SQLite would round them).
    """

    impl = String(80)
    cache_ok = True

    def process_bind_param(self, value: int | None, dialect: Dialect) -> str | None:
        return None if value is None else str(int(value))

    def process_result_value(self, value: str | None, dialect: Dialect) -> int | None:
        return None if value is None else int(value)


class UTCDateTime(TypeDecorator[datetime]):
    """A moment with its time zone, read back as UTC on every database.

    PostgreSQL keeps the zone; SQLite keeps none and hands back naive values: marked
    UTC here (the store writes UTC), so no reader has to guess.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None or value.tzinfo is not None:
            return value
        return value.replace(tzinfo=UTC)


class Base(DeclarativeBase):
    """The declarative base of every model."""

    type_annotation_map: ClassVar[dict[Any, Any]] = {dict[str, Any]: JSON, list[Any]: JSON}


OPERATOR_AUTHOR = "a-operator"
"""The author of the names registered with the admin token (and of every name a
database held before authors existed). It has no token: the admin token acts for it."""


class AuthorRow(Base):
    """A person or team who owns bot names: a name and a secret token (its hash)."""

    __tablename__ = "authors"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    name: Mapped[str] = mapped_column(String(64))
    name_key: Mapped[str] = mapped_column(Text, unique=True)
    """`ladder.names.name_key` of the name: authors are unique by it."""
    token_hash: Mapped[str | None] = mapped_column(String(64), unique=True, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    names: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    """How many bot names the author owns (its quota counts them)."""
    challenges_hour: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    """Challenges asked for since the quota's hour began (`hour_until` minus one hour)."""
    hour_until: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    """When the challenges-per-hour quota's hour ends (the database's clock)."""
    challenges_running: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    """The author's challenge matches running now (changed with each match's status)."""


class BotNameRow(Base):
    """A bot name and its owner: every version of the name belongs to that author."""

    __tablename__ = "bot_names"

    name_key: Mapped[str] = mapped_column(Text, primary_key=True)
    """`ladder.names.name_key` of the name: one owner for every look-alike spelling."""
    name: Mapped[str] = mapped_column(String(64))
    """The spelling it was first registered with."""
    author_id: Mapped[str] = mapped_column(ForeignKey("authors.id"), index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    versions_today: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    """Versions registered since the quota's day began (`day_until` minus one day)."""
    day_until: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    """When the versions-per-day quota's day ends (the database's clock)."""
    challenges: Mapped[bool] = mapped_column(default=True, server_default=true())
    """Every version of the name accepts challenges from other authors."""


class InviteRow(Base):
    """A code that lets its holder create an author (`--signup invite`)."""

    __tablename__ = "invites"

    code_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    uses_left: Mapped[int] = mapped_column(Integer)
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class BotRow(Base):
    """One version of a bot: a name, a version and the games it plays.

    The token is never stored, only its SHA-256 hash (tokens are random and
    long, so a fast hash is safe and lets the referee find the bot by it).
    """

    __tablename__ = "bots"
    __table_args__ = (UniqueConstraint("name", "version", name="uq_bots_name_version"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    name: Mapped[str] = mapped_column(String(64), index=True)
    version: Mapped[str] = mapped_column(String(64))
    games: Mapped[list[Any]]
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    # Presence, as the referee sees it: renewed while a session is open, so an
    # `online` left set by a replica that died goes stale (see ladder.presence).
    last_seen_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    online: Mapped[bool] = mapped_column(default=False, server_default=false())
    # The session (or the instance, shared by its sessions on every replica) `online` is by:
    # only its closing makes the bot offline.
    presence_session: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # A retired version keeps its history but leaves the standings and pairing.
    retired_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class MatchRow(Base):
    """One match: a full game (or its duplicate rotations) between bots.

    `id` is chosen by the caller, so asking twice for the same match finds
    this row instead of playing again.
    """

    __tablename__ = "matches"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    game: Mapped[str] = mapped_column(String(32))
    players: Mapped[int] = mapped_column(Integer)
    bot_ids: Mapped[list[Any]]
    seed: Mapped[int] = mapped_column(SeedText)
    options: Mapped[dict[str, Any]]
    duplicate: Mapped[bool]
    deadline_ms: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16), index=True)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    reason: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # The referee replica playing a running match, and until when its claim holds
    # unless renewed: only an expired claim lets another replica abort the match.
    owner: Mapped[str | None] = mapped_column(String(128), nullable=True)
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # The author who asked for the match as a challenge: unrated. None for a rated match.
    challenger_id: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    # How many times the match was started: an aborted match played again is dealt from a
    # fresh seed (its bots saw part of the old deal).
    attempt: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    replays: Mapped[list[ReplayRow]] = relationship(
        back_populates="match", order_by="ReplayRow.game_index", cascade="all, delete-orphan"
    )


class ReplayRow(Base):
    """The event log of one game of a match, from which it replays exactly."""

    __tablename__ = "replays"

    match_id: Mapped[str] = mapped_column(ForeignKey("matches.id"), primary_key=True)
    game_index: Mapped[int] = mapped_column(Integer, primary_key=True)
    seats: Mapped[list[Any]]
    log: Mapped[dict[str, Any]]
    events: Mapped[list[Any]]
    match: Mapped[MatchRow] = relationship(back_populates="replays")


class LadderRow(Base):
    """One ladder: one game at one player count, e.g. `goodge-4p`."""

    __tablename__ = "ladders"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    game: Mapped[str] = mapped_column(String(32))
    players: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    field_sd: Mapped[float | None] = mapped_column(nullable=True)
    """The spread of the field (Elo) the last fit learnt: the next fit's prior."""
    fitted_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class RatingRow(Base):
    """A bot version's live Elo on one ladder, and its rating in the ladder's fit."""

    __tablename__ = "ratings"

    ladder_id: Mapped[str] = mapped_column(ForeignKey("ladders.id"), primary_key=True)
    bot_id: Mapped[str] = mapped_column(ForeignKey("bots.id"), primary_key=True)
    rating: Mapped[float]
    games: Mapped[int] = mapped_column(Integer)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())
    fit_rating: Mapped[float | None] = mapped_column(nullable=True)
    """The ladder's Plackett-Luce fit of all its rated games (`ladder.ladder_fit`), Elo scale."""
    fit_se: Mapped[float | None] = mapped_column(nullable=True)
    """That rating's standard error (Elo); None until the ladder's first fit."""


class RatingHistoryRow(Base):
    """One rating change, caused by one recorded match (at most once per match)."""

    __tablename__ = "rating_history"
    __table_args__ = (
        UniqueConstraint("ladder_id", "bot_id", "match_id", name="uq_rating_history_once"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    ladder_id: Mapped[str] = mapped_column(ForeignKey("ladders.id"), index=True)
    bot_id: Mapped[str] = mapped_column(ForeignKey("bots.id"), index=True)
    match_id: Mapped[str] = mapped_column(String(64))
    rating_before: Mapped[float]
    rating_after: Mapped[float]
    games: Mapped[int] = mapped_column(Integer)
    at: Mapped[datetime] = mapped_column(UTCDateTime())


class TournamentRow(Base):
    """A tournament: a round robin or a Swiss tournament of duplicate matches between entrants.

    A tournament with a `schedule` (cron) is a template: beat starts a new
    tournament from it (with `parent_id` set) at every tick of the schedule.
    """

    __tablename__ = "tournaments"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    name: Mapped[str] = mapped_column(String(128))
    game: Mapped[str] = mapped_column(String(32))
    players: Mapped[int] = mapped_column(Integer)
    entrants: Mapped[list[Any]]
    duplicate: Mapped[bool]
    deadline_ms: Mapped[int] = mapped_column(Integer)
    options: Mapped[dict[str, Any]]
    seed: Mapped[int] = mapped_column(SeedText)
    # True when the operator chose `seed` (plans and deals derive from it, so
    # it is theirs to keep or publish); else every match's seed is drawn
    # secretly on its own and `seed` only orders the plan.
    seed_chosen: Mapped[bool] = mapped_column(default=False, server_default=false())
    status: Mapped[str] = mapped_column(String(16), index=True)
    format: Mapped[str] = mapped_column(
        String(16), default="round_robin", server_default="round_robin"
    )
    """`ladder.records.TournamentFormat`: "round_robin" or "swiss"."""
    rounds: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    """A Swiss tournament's rounds (a round robin has one)."""
    round: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    """The round being played: the next is planned when it is all recorded, by the one
    conditional UPDATE of this column that wins (`ladder.swiss_rounds.next_round`)."""
    seeding: Mapped[str | None] = mapped_column(String(16), nullable=True)
    """A Swiss tournament's first round: `ladder.swiss.Seeding` ("draw" or "rating")."""
    schedule: Mapped[str | None] = mapped_column(String(64), nullable=True)
    parent_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    table: Mapped[list[Any] | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class TournamentMatchRow(Base):
    """One planned match of a tournament; its id is the referee's match id."""

    __tablename__ = "tournament_matches"

    match_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    tournament_id: Mapped[str] = mapped_column(ForeignKey("tournaments.id"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    bot_ids: Mapped[list[Any]]
    seed: Mapped[int] = mapped_column(SeedText)
    status: Mapped[str] = mapped_column(String(16))
    round: Mapped[int] = mapped_column(Integer, default=1, server_default="1")


class ResultRow(Base):
    """A recorded match result, per entry (bot) of the match.

    The primary key makes recording happen at most once per match: a second
    attempt collides and rolls back with everything else it tried to write.
    """

    __tablename__ = "results"

    match_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    entry: Mapped[int] = mapped_column(Integer, primary_key=True)
    bot_id: Mapped[str] = mapped_column(ForeignKey("bots.id"), index=True)
    ladder_id: Mapped[str] = mapped_column(ForeignKey("ladders.id"), index=True)
    tournament_id: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    score: Mapped[int] = mapped_column(Integer)
    rank: Mapped[int] = mapped_column(Integer)
    forfeit: Mapped[bool]
    # A practice result counts for the bot's record, never for a rating.
    practice: Mapped[bool] = mapped_column(default=False, server_default=false())
    recorded_at: Mapped[datetime] = mapped_column(UTCDateTime())


class GameRow(Base):
    """One recorded game of a match (one rotation of a duplicate match)."""

    __tablename__ = "games"

    match_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    game_index: Mapped[int] = mapped_column(Integer, primary_key=True)
    seed: Mapped[int] = mapped_column(SeedText)
    rounds: Mapped[int] = mapped_column(Integer)


class SeatRow(Base):
    """Who sat where in one recorded game, and how that seat did."""

    __tablename__ = "seats"

    match_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    game_index: Mapped[int] = mapped_column(Integer, primary_key=True)
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    bot_id: Mapped[str] = mapped_column(ForeignKey("bots.id"), index=True)
    score: Mapped[int] = mapped_column(Integer)
    rank: Mapped[int] = mapped_column(Integer)
