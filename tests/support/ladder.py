"""What the ladder's and the workers' tests share: bots, played matches, counts."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select

import games
from games.core import rank_scores
from ladder import queries, tournaments
from ladder.models import RatingRow, TournamentMatchRow
from ladder.records import MatchResult
from ladder.store import Store

ALL_GAMES = ("goodge", "golden10", "goof")

_names = itertools.count(1)


def register(store: Store, prefix: str = "bot", games_: Sequence[str] = ALL_GAMES) -> str:
    bot, _ = store.register_bot(f"{prefix}-{next(_names)}", "1", list(games_))
    return bot.id


def fake_result(
    game: str,
    bot_ids: Sequence[str],
    game_scores: Sequence[Sequence[int]],
    forfeits: Sequence[str] = (),
) -> dict[str, Any]:
    """A result as the referee writes it: game g seats the bots rotated by g."""
    n = len(bot_ids)
    spec = games.get(game)
    totals = [0] * n
    played = []
    for shift, scores in enumerate(game_scores):
        seats = [""] * n
        for entry, bot in enumerate(bot_ids):
            seats[(entry + shift) % n] = bot
        for entry in range(n):
            totals[entry] += scores[(entry + shift) % n]
        played.append(
            {
                "seed": 7,
                "seats": seats,
                "scores": list(scores),
                "ranks": list(rank_scores(scores, spec.higher_is_better)),
                "rounds": 3,
            }
        )
    playing = [e for e in range(n) if bot_ids[e] not in forfeits]
    ranks = [len(playing) + 1] * n
    for entry, rank in zip(
        playing, rank_scores([totals[e] for e in playing], spec.higher_is_better), strict=True
    ):
        ranks[entry] = rank
    return {
        "match_id": "",
        "game": game,
        "bots": list(bot_ids),
        "scores": totals,
        "ranks": ranks,
        "forfeits": sorted(set(forfeits)),
        "games": played,
    }


def play(
    store: Store,
    match_id: str,
    scores_of: dict[str, int] | None = None,
    forfeits: Sequence[str] = (),
) -> dict[str, Any]:
    """Play a planned match as the referee would: every game scores each bot `scores_of[bot]`."""
    request = tournaments.planned_request(store, match_id)
    assert request is not None
    store.create_match(request)
    n = request.players
    games_played = n if request.duplicate else 1
    scores_of = scores_of or {bot: 10 * i for i, bot in enumerate(request.bot_ids)}
    per_game = []
    for shift in range(games_played):
        seats = [""] * n
        for entry, bot in enumerate(request.bot_ids):
            seats[(entry + shift) % n] = bot
        per_game.append([scores_of[bot] for bot in seats])
    result = fake_result(request.game, request.bot_ids, per_game, forfeits)
    result["match_id"] = match_id
    store.finish_match(match_id, MatchResult.from_json(result), [])
    return result


def count(store: Store, model: Any, **where: Any) -> int:
    with store.session() as session:
        query = select(func.count()).select_from(model)
        for key, value in where.items():
            query = query.where(getattr(model, key) == value)
        return int(session.scalar(query) or 0)


def ratings_of(store: Store, lid: str) -> dict[str, tuple[float, int]]:
    with store.session() as session:
        return {
            row.bot_id: (row.rating, row.games)
            for row in session.scalars(select(RatingRow).where(RatingRow.ladder_id == lid))
        }


def plan_of(store: Store, tournament_id: str) -> list[TournamentMatchRow]:
    with store.session() as session:
        return list(
            session.scalars(
                select(TournamentMatchRow)
                .where(TournamentMatchRow.tournament_id == tournament_id)
                .order_by(TournamentMatchRow.number)
            )
        )


TABLE_ORDER = ("above", "measured", "below", "unmeasured")
"""How ladder.plackett_luce orders a table: bots bounded only from below, the measured ones by
rating, bots bounded only from above, then those with no comparison."""


def check_order(table: Sequence[queries.TableLine]) -> None:
    """`table` is in TABLE_ORDER, each measured rating inside its interval, each line that
    is not measured (or has no interval) says why."""
    kinds = [
        TABLE_ORDER.index("measured" if line.measured else line.bound or "unmeasured")
        for line in table
    ]
    assert kinds == sorted(kinds), table
    ratings = []
    for line in table:
        if line.measured:
            assert line.rating is not None and line.ci_low is not None
            assert line.ci_high is not None and line.ci_low <= line.rating <= line.ci_high
            # Only the lone measured bot, which the others are placed against, has none.
            assert line.ci_low < line.ci_high or line.reason, line
            ratings.append(line.rating)
        else:
            assert line.reason, line
    assert ratings == sorted(ratings, reverse=True), table
