"""The JSON shapes of Play's API (`ladder.web.play_api`), and so of /openapi.json."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

MAX_NAME = 32
"""A guest name's longest length (characters)."""


class PlayGameOut(BaseModel):
    """A game a person may play, and how long a game of it may be asked for."""

    game: str
    title: str
    min_players: int
    max_players: int
    max_rounds: int = Field(description="the most rounds a person may ask for")
    deadline_ms: int = Field(description="the person's time for a move (Goof: for a tick)")


class OpponentOut(BaseModel):
    """A bot a person may play against: online now and accepting challenges."""

    id: str
    name: str
    version: str
    label: str = Field(description="how the pages name it: name, or name@version")
    games: list[str]


class PlayChoicesOut(BaseModel):
    """What /play offers now: the games, the opponents online, and the server's bounds."""

    games: list[PlayGameOut]
    opponents: list[OpponentOut]
    at_once: int = Field(description="games people play at once on this server")
    per_address: int = Field(description="games one client address plays at once")


class PlayIn(BaseModel):
    """A person's game: which, against whom, and the name the page calls the person."""

    game: str = Field(max_length=32, description="goodge, golden10 or goof")
    players: int = Field(ge=1, le=8, description="seats at the table, the person's included")
    opponents: list[str] = Field(
        max_length=7, description="the ids of players - 1 bots among the opponents offered"
    )
    name: str = Field(
        default="guest",
        max_length=MAX_NAME,
        description="a guest name, shown on the person's page only",
    )
    rounds: int = Field(default=1, ge=1, le=100, description="rounds to play (Goodge: at most)")


class PlayStartedOut(BaseModel):
    """A game started: its secret play id, known only to the browser that started it, and
    where its seat is reached. The match id is public (its live table, then its replay)."""

    play_id: str
    url: str = Field(description="the seat's page")
    events: str = Field(description="the seat's server-sent events")
    answer: str = Field(description="where the seat's moves are sent (POST)")
    match_id: str


class PlayOut(BaseModel):
    """A person's game as it stands (the seat's own page asks for it)."""

    match_id: str
    game: str
    players: int
    name: str
    bot_id: str = Field(description="the play bot's id: the person's seat in the match")
    status: str = Field(description="playing, finished or aborted")
    rated: bool = Field(default=False, description="always false: a person's game rates nobody")
    challenge: bool = Field(default=True, description="always true: it is played as a challenge")
    result: dict[str, Any] | None = Field(description="the match's result once finished")


class AnswerIn(BaseModel):
    """The person's move: one of the legal actions of the open request."""

    request_id: str = Field(max_length=100)
    action: str = Field(max_length=100, description="the action's text, as in `legal`")


class AnswerOut(BaseModel):
    """The move was sent to the referee."""

    request_id: str
    action: str
