"""The JSON shapes of the web API (and so of /openapi.json).

Every API route declares one of these as its response model, so the
OpenAPI description names each field and its type.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from ladder.author_queries import RECENT_MATCHES
from ladder.queries import PROVISIONAL_SE


class BotRefOut(BaseModel):
    """A bot version as people name it."""

    id: str
    name: str
    version: str


class BotOut(BotRefOut):
    """A registered bot version, the games it plays and whether a referee holds it now."""

    games: list[str]
    online: bool = Field(description="holds a session with a referee now")
    last_seen_at: datetime | None = Field(description="when a referee last saw it")
    retired: bool = Field(description="retired: kept with its history, out of the standings")


RATING = (
    "the rating the standings rank by: the ladder's Plackett-Luce fit of all its rated games "
    "(Elo scale), or the live Elo before the bot's first fit"
)
SE = "the fit's standard error of the rating (Elo); null before the bot's first fit"
ELO = "the live multiplayer Elo, moved by each rated result"
PROVISIONAL = f"the rating's standard error is above {PROVISIONAL_SE:.0f} Elo, or not known yet"
PROVISIONAL_SE_RULE = "a rating whose standard error (Elo) is above this is provisional"


class StandingOut(BaseModel):
    """One line of a ladder's standings: the fit's rating with its error, and the live Elo."""

    rank: int
    bot_id: str
    bot: str
    version: str
    rating: float = Field(description=RATING)
    se: float | None = Field(description=SE)
    elo: float = Field(description=ELO)
    games: int = Field(description="rated matches")
    provisional: bool = Field(description=PROVISIONAL)
    online: bool = Field(description="holds a session with a referee now")


class PracticeOut(BaseModel):
    """A bot still playing its first, unrated (practice) matches on a ladder."""

    bot_id: str
    bot: str
    practice_matches: int = Field(description="practice matches played so far")
    online: bool


class LadderOut(BaseModel):
    """One ladder (a game at a player count) and its standings, best first."""

    id: str = Field(examples=["goodge-4p"])
    game: str
    players: int
    standings: list[StandingOut]
    practice: list[PracticeOut] = Field(
        description="bots whose first ladder matches are practice: recorded, rating nobody"
    )


class LaddersOut(BaseModel):
    """Every ladder that has rated games."""

    ladders: list[LadderOut]
    provisional_se: float = Field(description=PROVISIONAL_SE_RULE)


class HistoryPointOut(BaseModel):
    """A bot's rating after one recorded match."""

    ladder_id: str
    match_id: str
    rating: float
    games: int
    at: datetime


class BotRatingOut(BaseModel):
    """A bot's rating on one ladder, with its error, and its live Elo."""

    ladder_id: str
    rank: int | None = Field(description="null once retired: the standings leave it out")
    rating: float = Field(description=RATING)
    se: float | None = Field(description=SE)
    elo: float = Field(description=ELO)
    games: int = Field(description="rated matches")
    provisional: bool = Field(description=PROVISIONAL)
    start_rating: float | None = Field(
        description="the live Elo before its first recorded match on this ladder"
    )


class MatchKindOut(BaseModel):
    """Whether a match is rated, or a challenge (and whose)."""

    rated: bool = Field(
        description="false for a challenge: it is recorded with its replay and rates nobody"
    )
    challenge: bool = Field(description="asked for by an author as a challenge (unrated)")
    challenger: str | None = Field(
        description="the name of the author who asked for the challenge; null when rated"
    )


class MatchLineOut(MatchKindOut):
    """A recorded match: per entry, the bot, its total score and rank."""

    match_id: str
    ladder_id: str
    tournament_id: str | None
    bots: list[BotRefOut]
    scores: list[int]
    ranks: list[int]
    strikes: list[int] = Field(description="per entry: late or illegal answers")
    forfeits: list[bool] = Field(description="per entry: whether it forfeited")
    recorded_at: datetime


class BotPageOut(BaseModel):
    """A bot's page: its author, ratings, rating history, recent matches and conduct."""

    bot: BotOut
    author: str | None = Field(
        description="the name of the author who owns the bot's name (its page: /authors/NAME)"
    )
    ratings: list[BotRatingOut]
    history: list[HistoryPointOut]
    matches: list[MatchLineOut]
    strikes: int = Field(description="strikes in all its recorded matches")
    forfeits: int = Field(description="recorded matches it forfeited")
    provisional_se: float = Field(description=PROVISIONAL_SE_RULE)


class AuthorOut(BaseModel):
    """An author: a person or team who owns bot names."""

    id: str
    name: str
    created_at: datetime


class AuthorVersionOut(BotOut):
    """A version of one of an author's bots, with its live rating on each ladder."""

    ratings: list[BotRatingOut]


class AuthorBotOut(BaseModel):
    """A bot name an author owns, with every version of it, newest first."""

    name: str
    accepts_challenges: bool = Field(description="whether other authors may challenge it")
    versions: list[AuthorVersionOut]


class AuthorPageOut(BaseModel):
    """An author's page: its bots, their ratings, and the recent matches they played."""

    author: AuthorOut
    bots: list[AuthorBotOut] = Field(description="by name")
    matches: list[MatchLineOut] = Field(
        description=f"recorded, newest first; at most {RECENT_MATCHES}"
    )
    provisional_se: float = Field(description=PROVISIONAL_SE_RULE)


class TableLineOut(BaseModel):
    """One line of a tournament table: maximum-likelihood rating and its 95% interval.

    A bot its games do not measure has `measured` false and the `reason`: with a
    one-sided `bound` ("below", "above") `rating` is the bound and the interval's
    open end null; without one, rating and interval are null.
    """

    bot_id: str
    bot: str
    rating: float | None
    ci_low: float | None
    ci_high: float | None
    games: int
    measured: bool
    bound: str | None
    reason: str | None
    rating_text: str = Field(description='the rating as shown: "1523", "below 1068", ...')
    interval_text: str = Field(description='the interval as shown: "[1400, 1650]", or why not')


class TournamentOut(BaseModel):
    """A tournament, its progress and (once computed) its table, best first."""

    id: str
    name: str
    game: str
    players: int
    ladder_id: str
    status: str
    schedule: str | None
    matches_total: int = Field(description="the matches planned so far")
    matches_in_all: int = Field(
        description="the matches it plays in all: a Swiss tournament plans its rounds one by "
        "one, so until its last round this is more than matches_total"
    )
    matches_finished: int
    table: list[TableLineOut]
    created_at: datetime
    finished_at: datetime | None
    entrants: list[str] = Field(description="bot names, in the order entered")
    duplicate: bool = Field(description="every deal played once per rotation of the seats")
    deadline_ms: int = Field(description="time for each move, in milliseconds")
    options: dict[str, Any] = Field(description="the game's rules options")
    parent_id: str | None = Field(description="the scheduled template it was started from")
    matches_failed: int
    format: str = Field(description='"round_robin" or "swiss"')
    rounds: int = Field(description="a Swiss tournament's rounds (a round robin has one)")
    round: int = Field(description="the round being played (the last once finished)")
    first_round: str | None = Field(
        description='how a Swiss tournament\'s first round was seated: "draw" (at random) or '
        '"rating" (by the ladder\'s ratings)'
    )


class PlannedMatchOut(BaseModel):
    """One planned match of a tournament."""

    match_id: str
    number: int
    bots: list[str] = Field(description="bot names, one per seat")
    status: str = Field(description="planned, started, recorded, failed or cancelled")
    round: int = Field(description="the round it belongs to (a round robin's are all 1)")
    match_status: str | None = Field(
        description="the referee's status of the match (running, finished, aborted); "
        "null until a referee starts it"
    )


class RoundOut(BaseModel):
    """One round of a Swiss tournament: its number and the entrants it does not seat."""

    number: int
    byes: list[str] = Field(description="bot names sitting this round out")


class StandingSoFarOut(BaseModel):
    """A bot in a running Swiss tournament's standing so far (what seats the next round)."""

    bot_id: str
    bot: str
    rating: float = Field(description="Plackett-Luce fit of the games recorded, Elo scale")
    se: float = Field(description="the rating's standard error (Elo)")
    games: int


class TournamentPageOut(TournamentOut):
    """A tournament with its planned matches in plan order; a Swiss tournament's rounds
    (their byes; the matches say their round) and, while it runs, its standing so far."""

    matches: list[PlannedMatchOut]
    rounds_seated: list[RoundOut] = Field(description="a Swiss tournament's rounds so far")
    standings: list[StandingSoFarOut] = Field(
        description="a running Swiss tournament's standing so far, best first"
    )


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


class MatchOut(MatchKindOut):
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
        "while it runs, and once aborted: a match is only ever shown a finished deal's seed)"
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
