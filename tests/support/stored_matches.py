"""A match the store's own tests store and fence: its request, result, replays, and an
expired lease (tests/ladder/test_store.py and test_fencing.py)."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import update

from ladder.models import MatchRow
from ladder.records import GameResult, MatchResult
from ladder.store import MatchRequest, Replay, Store


def request_for(match_id: str = "m1", **changes: object) -> MatchRequest:
    """A duplicate match of golden10 between bots b1, b2 and b3 (ids the store does not
    check), with a seed that needs a BIGINT; `changes` replace its fields."""
    fields: dict[str, object] = {
        "id": match_id,
        "game": "golden10",
        "players": 3,
        "bot_ids": ("b1", "b2", "b3"),
        "seed": 2**40 + 7,  # needs a BIGINT
        "options": {"rounds": "2"},
        "duplicate": True,
        "deadline_ms": 250,
    }
    fields.update(changes)
    return MatchRequest(**fields)  # type: ignore[arg-type]


def expire(store: Store, match_id: str) -> None:
    """Let the match's lease run out, as if its replica had stopped renewing it long ago."""
    with store.session() as session:
        session.execute(
            update(MatchRow)
            .where(MatchRow.id == match_id)
            .values(lease_until=datetime(2000, 1, 1, tzinfo=UTC))
        )


def result_for(scores: tuple[int, ...], match_id: str = "m1") -> MatchResult:
    """A result of request_for's match: one game with these per-seat scores."""
    ranks = tuple(1 + sum(other > own for other in scores) for own in scores)
    return MatchResult(
        match_id=match_id,
        game="golden10",
        bots=("b1", "b2", "b3"),
        scores=scores,
        ranks=ranks,
        forfeits=(),
        games=(GameResult(2**40 + 7, ("b1", "b2", "b3"), scores, ranks, 2),),
        forfeit_reasons={"b2": "disconnected: 'x'"},
        strikes={"b1": 0, "b2": 1, "b3": 0},
    )


def replays_for(count: int) -> list[Replay]:
    """`count` games' replays of request_for's match, each seated one rotation on."""
    return [
        Replay(
            game_index=index,
            seats=("b1", "b2", "b3")[index:] + ("b1", "b2", "b3")[:index],
            log={"game": "golden10", "moves": [[0, "3R"], [1, "14R"]], "index": index},
            events=[{"type": "strike", "seat": 1, "reason": "late", "game_index": index}],
        )
        for index in range(count)
    ]
