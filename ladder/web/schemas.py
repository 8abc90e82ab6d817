"""The JSON shapes of the web API (and so of /openapi.json).

Every API route declares one of these as its response model, so the
OpenAPI description names each field and its type.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field


class BotRefOut(BaseModel):
    """A bot version as people name it."""

    id: str
    name: str
    version: str


class BotOut(BotRefOut):
    """A registered bot version and the games it plays."""

    games: list[str]


class StandingOut(BaseModel):
    """One line of a ladder's standings (live Elo)."""

    rank: int
    bot_id: str
    bot: str
    version: str
    rating: float
    games: int
    provisional: bool = Field(description="fewer rated games than the provisional threshold")


class LadderOut(BaseModel):
    """One ladder (a game at a player count) and its standings, best first."""

    id: str = Field(examples=["goodge-4p"])
    game: str
    players: int
    standings: list[StandingOut]


class LaddersOut(BaseModel):
    """Every ladder that has rated games."""

    ladders: list[LadderOut]


class HistoryPointOut(BaseModel):
    """A bot's rating after one recorded match."""

    ladder_id: str
    match_id: str
    rating: float
    games: int
    at: datetime


class BotRatingOut(BaseModel):
    """A bot's live rating on one ladder."""

    ladder_id: str
    rank: int
    rating: float
    games: int
    provisional: bool
    start_rating: float | None = Field(
        description="the rating before its first recorded match on this ladder"
    )


class MatchLineOut(BaseModel):
    """A recorded match: per entry, the bot, its total score and rank."""

    match_id: str
    ladder_id: str
    tournament_id: str | None
    bots: list[BotRefOut]
    scores: list[int]
    ranks: list[int]
    recorded_at: datetime


class BotPageOut(BaseModel):
    """A bot's page: its ratings, rating history and recent matches."""

    bot: BotOut
    ratings: list[BotRatingOut]
    history: list[HistoryPointOut]
    matches: list[MatchLineOut]


class TableLineOut(BaseModel):
    """One line of a tournament table: maximum-likelihood rating and its 95% interval."""

    bot_id: str
    bot: str
    rating: float
    ci_low: float
    ci_high: float
    games: int


class TournamentOut(BaseModel):
    """A tournament, its progress and (once computed) its table, best first."""

    id: str
    name: str
    game: str
    players: int
    ladder_id: str
    status: str
    schedule: str | None
    matches_total: int
    matches_finished: int
    table: list[TableLineOut]
    created_at: datetime
    finished_at: datetime | None


class TournamentsOut(BaseModel):
    """Tournaments, newest first."""

    tournaments: list[TournamentOut]


class GameResultOut(BaseModel):
    """One game of a match: who sat where (bot ids by seat) and the per-seat result."""

    index: int
    seed: str = Field(description="the game's seed, in decimal (too big for a JSON number)")
    seats: list[str]
    scores: list[int]
    ranks: list[int]
    rounds: int


class EntryOut(BaseModel):
    """One entry of a match: the bot, its total score and its rank."""

    bot: BotRefOut
    score: int | None
    rank: int | None
    forfeit: bool
    forfeit_reason: str | None
    strikes: int


class MatchOut(BaseModel):
    """A match as stored by the referee, with its result once finished."""

    match_id: str
    game: str
    players: int
    ladder_id: str
    status: str = Field(description="running, finished or aborted")
    reason: str
    duplicate: bool
    seed: str | None = Field(
        description="the match's seed, in decimal; only once the match has finished (null "
        "while it runs, and once aborted, since it is played again with the same seed)"
    )
    seed_commitment: str = Field(
        description="SHA-256 (hex) of the seed's decimal text, fixed before the deal: "
        "`arena match verify` checks the published seed against it"
    )
    entries: list[EntryOut]
    games: list[GameResultOut]
    replay_available: bool


class ZoneOut(BaseModel):
    """Cards in one place. `cards` are shown face up; `count` is how many lie there.

    For piles shown by their top card only, `cards` holds that card and
    `count` the whole pile.
    """

    name: str
    label: str
    cards: list[str]
    count: int


class SeatOut(BaseModel):
    """One seat in a frame: who plays it, their score and their cards."""

    seat: int
    bot_id: str
    bot: str
    score: int
    note: str
    zones: list[ZoneOut]


class PlayOut(BaseModel):
    """One action in a frame's trick or tick; `took` is False for a Goof move that failed."""

    seat: int
    action: str
    took: bool | None = None


class FrameOut(BaseModel):
    """One step of a replay: the table after it, and what happened."""

    index: int
    move: int = Field(description="how many moves of the log are applied (ticks in Goof)")
    round: int
    kind: Literal["deal", "bid", "discard", "trump", "trick", "round", "tick", "end"]
    title: str
    text: str = Field(description="what happened, in words")
    actor: int | None = Field(description="the seat that acted, if one did")
    plays: list[PlayOut] = Field(description="the trick in play order, or the tick's moves")
    winner: int | None = Field(description="the seat that took the trick")
    seats: list[SeatOut]
    table: list[ZoneOut]
    info: dict[str, str]


class FramesOut(BaseModel):
    """The frames of one game of a finished match, in order."""

    match_id: str
    game: str
    game_index: int
    games: int = Field(description="how many games the match has (duplicate rotations)")
    players: int
    seats: list[BotRefOut]
    moves: int = Field(description="moves (ticks in Goof) in the game's log")
    sampled: bool = Field(description="True if some Goof ticks were left out")
    frames: list[FrameOut]


class GameLogOut(BaseModel):
    """One game's log as the engine wrote it: seed, options and every action in order."""

    game_index: int
    seats: list[str] = Field(description="bot ids by seat")
    log: dict[str, Any]


class LogsOut(BaseModel):
    """The logs of a finished match's games: with the published seed, anyone can replay
    every game and check the result (`arena match verify --web`)."""

    match_id: str
    games: list[GameLogOut]


class HealthOut(BaseModel):
    """Liveness and database reachability."""

    status: Literal["ok", "unavailable"]
    database: bool


class ErrorOut(BaseModel):
    """An error: what went wrong, in words."""

    detail: str
