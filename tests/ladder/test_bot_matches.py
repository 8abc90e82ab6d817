"""ladder.bot_matches on SQLite and PostgreSQL: a bot's recorded matches as its author
sees them, from matches stored with the referee's events (strikes with their reasons,
a forfeit, answer times per seat) and recorded."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import update

from ladder import authors, bot_matches, queries, recording
from ladder.models import ResultRow
from ladder.records import MatchRequest, MatchResult, Replay
from ladder.store import Store
from tests.support.ladder import fake_result

AT = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
ILLEGAL = "illegal answer index 9; legal: R1, G7, B10"
LATE = "no answer before the deadline and time bank ran out"


def action(seat: int, ms: float | None) -> dict[str, Any]:
    return {"type": "action", "game_index": 0, "seat": seat, "action": "R1", "ms": ms}


def strike(seat: int, bot: str, reason: str, strikes: int) -> dict[str, Any]:
    return {
        "type": "strike",
        "game_index": 0,
        "seat": seat,
        "bot": bot,
        "reason": reason,
        "strikes": strikes,
    }


def store_match(
    store: Store,
    match_id: str,
    game: str,
    bots: list[str],
    events: list[dict[str, Any]],
    minutes: int,
    challenger: str | None = None,
    forfeits: tuple[str, ...] = (),
) -> None:
    """A one-game match with these events, finished and recorded `minutes` after AT."""
    request = MatchRequest(
        id=match_id,
        game=game,
        players=len(bots),
        bot_ids=tuple(bots),
        seed=7,
        options={},
        duplicate=False,
        deadline_ms=200,
        challenger=challenger,
    )
    store.create_match(request)
    result = fake_result(game, bots, [[10 * (n + 1) for n in range(len(bots))]], forfeits)
    result["match_id"] = match_id
    start = {"type": "game_start", "game_index": 0, "seats": bots, "seed_commitment": "c"}
    end = {"type": "game_end", "game_index": 0, "scores": [0] * len(bots), "ranks": [1] * len(bots)}
    replay = Replay(0, tuple(bots), {}, [start, *events, end])
    store.finish_match(match_id, MatchResult.from_json(result), [replay])
    assert recording.record_match(store, match_id)
    with store.session() as session:
        session.execute(
            update(ResultRow)
            .where(ResultRow.match_id == match_id)
            .values(recorded_at=AT + timedelta(minutes=minutes))
        )


def test_strikes_forfeits_places_and_answer_times(store: Store) -> None:
    one, _ = authors.create_author(store, "one")
    two, _ = authors.create_author(store, "two")
    alice, _ = store.register_bot("alice", "1", ["golden10", "goof"], one.id)
    alice2, _ = store.register_bot("ALICE", "2", ["golden10", "goof"], one.id)
    bob, _ = store.register_bot("bob", "1", ["golden10", "goof"], two.id)
    carol, _ = store.register_bot("carol", "1", ["golden10", "goof"], two.id)

    # Golden 10, alice at seat 1: her 100 answers take 1..100 ms (in a shuffled order),
    # bob's are slower; two defaults after her strikes have no time.
    times = [float(ms) for ms in range(1, 101)]
    random.Random(3).shuffle(times)
    events: list[dict[str, Any]] = []
    for ms in times:
        events += [action(0, 500.0 + ms), action(1, ms)]
    events += [strike(1, alice.id, ILLEGAL, 1), action(1, None)]
    events += [strike(1, alice.id, LATE, 2), action(1, None), strike(0, bob.id, "bob's", 1)]
    store_match(store, "m-rated", "golden10", [bob.id, alice.id], events, 1)

    # Goof, a challenge of author two: alice2 at seat 2 forfeits; tick moves carry times.
    ticks = [
        {"type": "tick", "game_index": 0, "moves": [[2, "p1", True, 5.0], [0, "p2", True, 900.0]]},
        {"type": "tick", "game_index": 0, "moves": [[0, "p3", True, 1.0], [2, "p4", False, 7.0]]},
        {"type": "tick", "game_index": 0, "moves": [[1, "p5", True, 2.0], [2, "p6", True, None]]},
    ]
    forfeit = {
        "type": "forfeit",
        "game_index": 0,
        "seat": 2,
        "bot": alice2.id,
        "reason": "disconnected: the stream ended",
    }
    store_match(
        store,
        "m-challenge",
        "goof",
        [bob.id, carol.id, alice2.id],
        [*ticks, forfeit],
        2,
        challenger=two.id,
        forfeits=(alice2.id,),
    )
    # A match alice did not play.
    store_match(store, "m-other", "golden10", [bob.id, carol.id], [], 3)

    # A name is every version, in any spelling; newest first.
    every = bot_matches.versions(store, "Alice")
    assert every == bot_matches.Versions("alice", (alice.id, alice2.id))
    lines = bot_matches.bot_matches(store, every.bot_ids)
    assert [line.match_id for line in lines] == ["m-challenge", "m-rated"]
    challenge, rated = lines

    assert rated.bot_id == alice.id and rated.game == "golden10" and rated.players == 2
    assert (rated.place, rated.score) == (2, 20)  # Golden 10: fewer points win
    assert rated.challenger is None and rated.tournament_id is None
    assert [(s.seat, s.reason, s.strikes) for s in rated.strikes] == [
        (1, ILLEGAL, 1),
        (1, LATE, 2),
    ]
    assert not rated.forfeited and rated.forfeit_reason == ""
    assert rated.answers == bot_matches.AnswerTimes(100, 50.0, 99.0, 100.0)

    assert challenge.bot_id == alice2.id and challenge.challenger == "two"
    assert challenge.place == 3 and challenge.strikes == []
    assert challenge.forfeited and challenge.forfeit_reason == "disconnected: the stream ended"
    assert challenge.answers == bot_matches.AnswerTimes(2, 5.0, 7.0, 7.0)

    # An id or name@version is that version only; the limit keeps the newest.
    assert bot_matches.versions(store, alice.id) == bot_matches.Versions("alice", (alice.id,))
    assert bot_matches.versions(store, "ALICE@2") == bot_matches.Versions("ALICE", (alice2.id,))
    only = bot_matches.bot_matches(store, [alice.id])
    assert [line.match_id for line in only] == ["m-rated"]
    newest = bot_matches.bot_matches(store, [bob.id], limit=2)
    assert [line.match_id for line in newest] == ["m-other", "m-challenge"]
    assert bot_matches.bot_matches(store, [carol.id], limit=1)[0].answers.count == 0
    with pytest.raises(queries.UnknownBot):
        bot_matches.versions(store, "nobody")


def test_percentiles_are_nearest_rank() -> None:
    assert bot_matches.answer_times([]) == bot_matches.AnswerTimes()
    assert bot_matches.answer_times([4.0]) == bot_matches.AnswerTimes(1, 4.0, 4.0, 4.0)
    # 10 times: the 5th is the median, the 10th the 99th percentile.
    assert bot_matches.answer_times(
        [float(n) for n in range(10, 0, -1)]
    ) == bot_matches.AnswerTimes(10, 5.0, 10.0, 10.0)
    # 1000 times: the 990th is the 99th percentile.
    many = bot_matches.answer_times(float(n) for n in range(1, 1001))
    assert (many.p50_ms, many.p99_ms, many.max_ms) == (500.0, 990.0, 1000.0)
