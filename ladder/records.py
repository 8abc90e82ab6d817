"""The values that cross a layer: match requests, results, replays, bots, notices.

Dependency-free (the standard library only), so the referee's runner, its
seat channels and its wire layer use them without the store's SQLAlchemy,
and so they travel between processes as JSON: `to_json()` gives the JSON
form used today (in the database, on the wire's `json` fields, in events)
and `from_json()` reads it back. Statuses and kinds are `StrEnum`s whose
values are the stored strings, so stored data needs no migration.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, assert_never

from ladder.fairness import commitment

JSONObject = dict[str, Any]


class MatchStatus(StrEnum):
    """Where a match stands."""

    RUNNING = "running"
    FINISHED = "finished"
    ABORTED = "aborted"


class TournamentStatus(StrEnum):
    """A tournament: a template waiting for its schedule, being played, or done."""

    SCHEDULED = "scheduled"
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"
    """By the operator: no more of its matches (or, for a template, runs) start."""


class TournamentFormat(StrEnum):
    """How a tournament seats its entrants."""

    ROUND_ROBIN = "round_robin"
    """Every combination of entrants once (or a balanced subset), planned at the start."""
    SWISS = "swiss"
    """Rounds in which every entrant sits at one table, each planned once the one before is
    recorded (`ladder.swiss`)."""


class PlanStatus(StrEnum):
    """A tournament's planned match."""

    PLANNED = "planned"
    STARTED = "started"
    """Stored on the referee: from now on it plays on and is recorded, whatever the
    tournament (a cancel no longer stops it)."""
    RECORDED = "recorded"
    FAILED = "failed"
    CANCELLED = "cancelled"
    """Its tournament was cancelled before the match started."""


class EventType(StrEnum):
    """The referee's events of a match (WatchMatch, replays' events)."""

    GAME_START = "game_start"
    ACTION = "action"
    TICK = "tick"
    STRIKE = "strike"
    FORFEIT = "forfeit"
    GAME_END = "game_end"
    MATCH_END = "match_end"
    MATCH_ABORTED = "match_aborted"


class StrikeKind(StrEnum):
    """Why a bot got a strike."""

    TIMEOUT = "timeout"
    ILLEGAL = "illegal"


@dataclass(frozen=True)
class Bot:
    """A registered bot version."""

    id: str
    name: str
    version: str
    games: tuple[str, ...]

    def to_json(self) -> JSONObject:
        return {
            "id": self.id,
            "name": self.name,
            "version": self.version,
            "games": list(self.games),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Bot:
        return cls(str(data["id"]), str(data["name"]), str(data["version"]), tuple(data["games"]))


@dataclass(frozen=True)
class MatchRequest:
    """What a caller asks to be played; the id makes the request idempotent.

    `seed` None asks the store to draw a secret one when it first stores
    the match; a stored match always has its seed.
    """

    id: str
    game: str
    players: int
    bot_ids: tuple[str, ...]
    seed: int | None
    options: dict[str, Any]
    duplicate: bool
    deadline_ms: int
    challenger: str | None = None
    """The id of the author who asked for it as a challenge (unrated); None when rated."""

    def to_json(self) -> JSONObject:
        """The request as JSON; the seed as decimal text (128 bits exceed JSON numbers)."""
        return {
            "id": self.id,
            "game": self.game,
            "players": self.players,
            "bot_ids": list(self.bot_ids),
            "seed": None if self.seed is None else str(self.seed),
            "options": dict(self.options),
            "duplicate": self.duplicate,
            "deadline_ms": self.deadline_ms,
            "challenger": self.challenger,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MatchRequest:
        seed = data["seed"]
        return cls(
            id=str(data["id"]),
            game=str(data["game"]),
            players=int(data["players"]),
            bot_ids=tuple(data["bot_ids"]),
            seed=None if seed is None else int(seed),
            options=dict(data["options"]),
            duplicate=bool(data["duplicate"]),
            deadline_ms=int(data["deadline_ms"]),
            challenger=data.get("challenger"),
        )


@dataclass(frozen=True)
class GameResult:
    """One game of a match: the bot at each seat, per-seat scores and ranks, rounds."""

    seed: int
    seats: tuple[str, ...]
    scores: tuple[int, ...]
    ranks: tuple[int, ...]
    rounds: int

    def to_json(self) -> JSONObject:
        return {
            "seed": str(self.seed),
            "seats": list(self.seats),
            "scores": list(self.scores),
            "ranks": list(self.ranks),
            "rounds": self.rounds,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GameResult:
        # Seeds stored before they had 128 bits are JSON numbers; newer ones decimal text.
        return cls(
            seed=int(data["seed"]),
            seats=tuple(data["seats"]),
            scores=tuple(int(score) for score in data["scores"]),
            ranks=tuple(int(rank) for rank in data["ranks"]),
            rounds=int(data["rounds"]),
        )


@dataclass(frozen=True)
class MatchResult:
    """A finished match: per entry of `bots`, scores summed over its games, and ranks.

    Forfeiting bots share the last rank; `forfeit_reasons` says why each
    forfeited, `strikes` counts every bot's strikes.
    """

    match_id: str
    game: str
    bots: tuple[str, ...]
    scores: tuple[int, ...]
    ranks: tuple[int, ...]
    forfeits: tuple[str, ...]
    games: tuple[GameResult, ...]
    forfeit_reasons: Mapping[str, str] = field(default_factory=dict)
    strikes: Mapping[str, int] = field(default_factory=dict)

    def to_json(self) -> JSONObject:
        return {
            "match_id": self.match_id,
            "game": self.game,
            "bots": list(self.bots),
            "scores": list(self.scores),
            "ranks": list(self.ranks),
            "forfeits": list(self.forfeits),
            "games": [game.to_json() for game in self.games],
            "forfeit_reasons": dict(self.forfeit_reasons),
            "strikes": dict(self.strikes),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MatchResult:
        return cls(
            match_id=str(data["match_id"]),
            game=str(data["game"]),
            bots=tuple(data["bots"]),
            scores=tuple(int(score) for score in data["scores"]),
            ranks=tuple(int(rank) for rank in data["ranks"]),
            forfeits=tuple(data.get("forfeits", ())),
            games=tuple(GameResult.from_json(game) for game in data.get("games", ())),
            forfeit_reasons=dict(data.get("forfeit_reasons") or {}),
            strikes={bot: int(count) for bot, count in (data.get("strikes") or {}).items()},
        )


@dataclass(frozen=True)
class Match:
    """A match as stored: its request, status and (once finished) result."""

    request: MatchRequest
    status: MatchStatus
    result: MatchResult | None
    reason: str

    def to_json(self) -> JSONObject:
        """The match as JSON, with its seed: for the referee's own processes, never public."""
        return {
            "request": self.request.to_json(),
            "status": str(self.status),
            "result": None if self.result is None else self.result.to_json(),
            "reason": self.reason,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Match:
        result = data["result"]
        return cls(
            MatchRequest.from_json(data["request"]),
            MatchStatus(data["status"]),
            None if result is None else MatchResult.from_json(result),
            str(data["reason"]),
        )

    @property
    def seed(self) -> int:
        """The seed of the match's deals: secret until the match has finished."""
        assert self.request.seed is not None, "a stored match always has its seed"
        return self.request.seed

    @property
    def seed_commitment(self) -> str:
        """The commitment to the seed, public from the start (ladder.fairness)."""
        return commitment(self.seed)


@dataclass(frozen=True)
class Replay:
    """One game of a match: who sat where, its engine log and the referee's events."""

    game_index: int
    seats: tuple[str, ...]
    log: dict[str, Any]
    events: list[Any]

    def to_json(self) -> JSONObject:
        return {
            "game_index": self.game_index,
            "seats": list(self.seats),
            "log": self.log,
            "events": self.events,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Replay:
        return cls(
            int(data["game_index"]), tuple(data["seats"]), dict(data["log"]), list(data["events"])
        )


# Notices: what a bot is told besides Act requests ----------------------------------------


class NoticeKind(StrEnum):
    """The kinds of notice, as their JSON `kind`."""

    GAME_START = "game_start"
    GAME_END = "game_end"
    MATCH_END = "match_end"
    STRIKE = "strike"
    FORFEIT = "forfeit"


@dataclass(frozen=True)
class GameStart:
    """A game of a match begins; `seat` is the bot's in it."""

    match_id: str
    game_index: int
    seat: int
    game: str
    seats: tuple[str, ...]
    options: Mapping[str, object]
    seed_commitment: str
    kind: NoticeKind = field(default=NoticeKind.GAME_START, init=False)


@dataclass(frozen=True)
class GameEnd:
    """A game ended: per-seat scores and ranks, rounds played."""

    match_id: str
    game_index: int
    seat: int
    scores: tuple[int, ...]
    ranks: tuple[int, ...]
    rounds: int
    kind: NoticeKind = field(default=NoticeKind.GAME_END, init=False)


@dataclass(frozen=True)
class MatchEnd:
    """The match ended, with its result (the seed revealed)."""

    match_id: str
    result: MatchResult
    kind: NoticeKind = field(default=NoticeKind.MATCH_END, init=False)


@dataclass(frozen=True)
class Strike:
    """A late or illegal answer: a default was played for the seat."""

    match_id: str
    game_index: int
    seat: int
    reason: str
    strikes: int
    max_strikes: int
    kind: NoticeKind = field(default=NoticeKind.STRIKE, init=False)


@dataclass(frozen=True)
class Forfeit:
    """The bot forfeited the match."""

    match_id: str
    game_index: int
    seat: int
    reason: str
    kind: NoticeKind = field(default=NoticeKind.FORFEIT, init=False)


Notice = GameStart | GameEnd | MatchEnd | Strike | Forfeit
"""Something a bot is told; every field is public to that bot."""


def notice_to_json(notice: Notice) -> JSONObject:
    """A notice as JSON, tagged with its `kind`."""
    data: JSONObject = {"kind": str(notice.kind)}
    for item in fields(notice):
        value = getattr(notice, item.name)
        if isinstance(value, MatchResult):
            value = value.to_json()
        elif isinstance(value, tuple):
            value = list(value)
        elif isinstance(value, Mapping):
            value = dict(value)
        data[item.name] = value
    return data


def notice_from_json(data: Mapping[str, Any]) -> Notice:
    """The notice `notice_to_json` wrote; ValueError for an unknown kind."""
    values = {key: value for key, value in data.items() if key != "kind"}
    kind = NoticeKind(data["kind"])
    if kind is NoticeKind.GAME_START:
        return GameStart(**{**values, "seats": tuple(values["seats"])})
    if kind is NoticeKind.GAME_END:
        return GameEnd(
            **{**values, "scores": tuple(values["scores"]), "ranks": tuple(values["ranks"])}
        )
    if kind is NoticeKind.MATCH_END:
        return MatchEnd(values["match_id"], MatchResult.from_json(values["result"]))
    if kind is NoticeKind.STRIKE:
        return Strike(**values)
    if kind is NoticeKind.FORFEIT:
        return Forfeit(**values)
    assert_never(kind)
