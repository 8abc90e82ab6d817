"""What a bot's author sees of its recorded matches: place and score, every strike and
forfeit with its full reason, and its answer times at the referee.

The reasons and the times come from the stored replay events, the referee's full
log of each game (a strike's reason quotes the bot's legal actions, that is its
hand: the public view keeps reasons out, the stored log keeps them). The results
say which bot sat at each seat and how it placed. Read-only; the referee's
BotMatches call (referee.bot_views) decides who may ask.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Row, func, select

from ladder import queries
from ladder.models import AuthorRow, BotNameRow, MatchRow, ReplayRow, ResultRow
from ladder.names import name_key
from ladder.records import EventType, MatchStatus
from ladder.store import Store

DEFAULT_LIMIT = 20
"""Matches listed when the caller asks for no number."""
MAX_LIMIT = 200
"""The most matches one call lists."""


@dataclass(frozen=True)
class Versions:
    """What a bot reference names: the name's first spelling and the versions meant."""

    name: str
    bot_ids: tuple[str, ...]


@dataclass(frozen=True)
class StrikeLine:
    """One strike of the bot, as the referee gave it."""

    game_index: int
    seat: int
    reason: str
    strikes: int
    """The bot's strikes so far in the match, this one included."""


@dataclass(frozen=True)
class AnswerTimes:
    """The bot's answer times at the referee in one match, in ms (nearest-rank
    percentiles: each is one of the times measured); all 0 when it answered nothing."""

    count: int = 0
    p50_ms: float = 0.0
    p99_ms: float = 0.0
    max_ms: float = 0.0


@dataclass(frozen=True)
class BotMatch:
    """One recorded entry of the bot in a match, as its author sees it."""

    match_id: str
    game: str
    players: int
    recorded_at: datetime
    bot_id: str
    """The version that played."""
    place: int
    score: int
    challenger: str | None
    """The challenging author's name, for a challenge (unrated); None otherwise."""
    tournament_id: str | None
    strikes: list[StrikeLine]
    forfeited: bool
    forfeit_reason: str
    """Why it forfeited, as the referee said it; "" unless it forfeited."""
    answers: AnswerTimes


def versions(store: Store, ref: str) -> Versions:
    """The versions `ref` names: a name every version of it, in any spelling (a name is
    one name ignoring case and look-alikes); an id or `name@version` that one version.

    Raises queries.UnknownBot.
    """
    key = name_key(ref)
    with store.session() as session:
        owned = session.scalar(select(BotNameRow.name).where(BotNameRow.name_key == key))
    if owned is not None:
        ids = tuple(line.id for line in queries.versions_of(store, {key}))
        if ids:
            return Versions(owned, ids)
    bot = queries.resolve_bot(store, ref)
    return Versions(bot.name, (bot.id,))


def playing_replica(store: Store, match_id: str) -> str | None:
    """The referee replica that plays the match now; None when it is not running."""
    with store.session() as session:
        return session.scalar(
            select(MatchRow.owner).where(
                MatchRow.id == match_id, MatchRow.status == MatchStatus.RUNNING
            )
        )


def percentile(ordered: Sequence[float], percent: float) -> float:
    """The nearest-rank percentile of `ordered` (sorted, not empty): the smallest value
    with at least `percent`% of the values at or below it."""
    return ordered[max(1, math.ceil(percent / 100 * len(ordered))) - 1]


def answer_times(times: Iterable[float]) -> AnswerTimes:
    """The count, p50, p99 and slowest of these answer times."""
    ordered = sorted(times)
    if not ordered:
        return AnswerTimes()
    return AnswerTimes(len(ordered), percentile(ordered, 50), percentile(ordered, 99), ordered[-1])


def _seat_times(events: Iterable[dict[str, Any]], seats: set[int]) -> list[float]:
    """The answer times of these seats' moves in one game's events (a default or a
    stand-in's move has none)."""
    times: list[float] = []
    for event in events:
        if event["type"] == EventType.ACTION and event["seat"] in seats:
            if event["ms"] is not None:
                times.append(float(event["ms"]))
        elif event["type"] == EventType.TICK:
            times += [
                float(ms) for seat, _, _, ms in event["moves"] if seat in seats and ms is not None
            ]
    return times


def bot_matches(store: Store, bot_ids: Sequence[str], limit: int = DEFAULT_LIMIT) -> list[BotMatch]:
    """The recorded matches of these bot versions, newest first, at most `limit`
    entries: one per entry of one of them in a match (a bot entered twice has two,
    with its strikes and times over both its seats)."""
    with store.session() as session:
        entries = session.scalars(
            select(ResultRow)
            .where(ResultRow.bot_id.in_(set(bot_ids)))
            .order_by(ResultRow.recorded_at.desc(), ResultRow.match_id, ResultRow.entry)
            .limit(limit)
        ).all()
        match_ids = {entry.match_id for entry in entries}
        matches = {
            row.id: row
            for row in session.execute(
                select(
                    MatchRow.id,
                    MatchRow.game,
                    MatchRow.players,
                    # A challenger no author has any more is named by its id.
                    func.coalesce(AuthorRow.name, MatchRow.challenger_id).label("challenger"),
                )
                .outerjoin(AuthorRow, AuthorRow.id == MatchRow.challenger_id)
                .where(MatchRow.id.in_(match_ids))
            )
        }
        replays: dict[str, list[ReplayRow]] = {}
        for replay in session.scalars(
            select(ReplayRow)
            .where(ReplayRow.match_id.in_(match_ids))
            .order_by(ReplayRow.match_id, ReplayRow.game_index)
        ):
            replays.setdefault(replay.match_id, []).append(replay)
        return [
            _bot_match(entry, matches[entry.match_id], replays.get(entry.match_id, []))
            for entry in entries
        ]


def _bot_match(
    entry: ResultRow, match: Row[str, str, int, str | None], replays: list[ReplayRow]
) -> BotMatch:
    """`match`: its id, game, players and challenger's name (None: rated)."""
    bot = entry.bot_id
    strikes: list[StrikeLine] = []
    times: list[float] = []
    for replay in replays:
        seats = {seat for seat, sitting in enumerate(replay.seats) if sitting == bot}
        times += _seat_times(replay.events, seats)
        strikes += [
            StrikeLine(event["game_index"], event["seat"], event["reason"], event["strikes"])
            for event in replay.events
            if event["type"] == EventType.STRIKE and event["bot"] == bot
        ]
    forfeits = [
        str(event["reason"])
        for replay in replays
        for event in replay.events
        if event["type"] == EventType.FORFEIT and event["bot"] == bot
    ]
    return BotMatch(
        match_id=match.id,
        game=match.game,
        players=match.players,
        recorded_at=entry.recorded_at,
        bot_id=bot,
        place=entry.rank,
        score=entry.score,
        challenger=match.challenger,
        tournament_id=entry.tournament_id,
        strikes=strikes,
        forfeited=entry.forfeit,
        forfeit_reason=forfeits[0] if forfeits else "",
        answers=answer_times(times),
    )
