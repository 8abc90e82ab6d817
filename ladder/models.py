"""SQLAlchemy 2 typed models of the arena's store."""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    BigInteger,
    DateTime,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


class Base(DeclarativeBase):
    """The declarative base of every model."""

    type_annotation_map: ClassVar[dict[Any, Any]] = {dict[str, Any]: JSON, list[Any]: JSON}


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
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


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
    seed: Mapped[int] = mapped_column(BigInteger)
    options: Mapped[dict[str, Any]]
    duplicate: Mapped[bool]
    deadline_ms: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16), index=True)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    reason: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
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
