"""Every result and event typed: MatchResult.entries, MatchEvent's typed oneof and
GameReplay.events, in referee.wire_results.

The check throughout: the typed fields alone rebuild the JSON beside them, so a
client that ignores every JSON field reads everything.
"""

from __future__ import annotations

import json

from ladder.records import EventType, MatchResult, Replay
from referee import wire_results
from referee.runner import Event, Limits
from tests.referee.test_runner import (
    FakeSeat,
    faulty_at,
    gone,
    late,
    match_request,
    play,
    random_legal,
)
from tests.support.wire_typed import _ms, as_json, check_typed, event_from_typed, result_from_typed

# MatchResult.entries -----------------------------------------------------------------------


def test_result_entries_follow_the_bots_with_strikes_forfeits_and_a_duplicate_entry() -> None:
    """One EntryResult per entry of `bots`, in order: a bot entered twice has two
    entries sharing its strikes; a forfeit carries its reason, other entries none."""
    result = MatchResult(
        match_id="m1",
        game="golden10",
        bots=("a", "b", "a", "c"),
        scores=(12, 40, 7, 30),
        ranks=(2, 4, 1, 3),
        forfeits=("b",),
        games=(),
        forfeit_reasons={"b": "3 strikes"},
        strikes={"a": 1, "b": 3, "c": 0},
    )
    message = wire_results.result_message(result)
    assert [
        (e.bot_id, e.score, e.rank, e.strikes, e.forfeited, e.forfeit_reason)
        for e in message.entries
    ] == [
        ("a", 12, 2, 1, False, ""),
        ("b", 40, 4, 3, True, "3 strikes"),
        ("a", 7, 1, 1, False, ""),
        ("c", 30, 3, 0, False, ""),
    ]
    # The old fields are as they were.
    assert (list(message.scores), list(message.ranks), list(message.forfeits)) == (
        [12, 40, 7, 30],
        [2, 4, 1, 3],
        ["b"],
    )
    assert json.loads(message.json) == result.to_json()
    assert result_from_typed(message, "m1", "golden10") == result.to_json()


def test_result_entries_of_a_result_stored_without_reasons_or_strikes() -> None:
    """A result stored before forfeit reasons and strikes: no strikes, an empty reason."""
    stored = {
        "match_id": "old",
        "game": "goof",
        "bots": ["a", "b"],
        "scores": [3, 1],
        "ranks": [1, 2],
        "forfeits": ["b"],
        "games": [],
    }
    entries = wire_results.result_message(MatchResult.from_json(stored)).entries
    assert [(e.bot_id, e.strikes, e.forfeited, e.forfeit_reason) for e in entries] == [
        ("a", 0, False, ""),
        ("b", 0, True, ""),
    ]


def test_a_played_match_has_its_entries_as_in_its_json() -> None:
    """A real result (a strike-out forfeit, a disconnect forfeit, a duplicate entry):
    the entries rebuild its JSON."""
    seats = [
        FakeSeat("a", random_legal(1)),
        FakeSeat("b", late),
        FakeSeat("c", faulty_at({2}, gone, random_legal(3))),
    ]
    request = match_request(bots=("a", "b", "a", "c"), options={"rounds": 1})
    result, _, _ = play(request, seats, Limits(time_bank_ms=1000, max_strikes=2))
    assert result["forfeit_reasons"]["b"] == "2 strikes"
    assert result["forfeit_reasons"]["c"].startswith("disconnected: ")
    message = wire_results.result_message(MatchResult.from_json(result))
    assert [e.bot_id for e in message.entries] == ["a", "b", "a", "c"]
    assert result_from_typed(message, "m1", "golden10") == result


# MatchEvent: every kind typed --------------------------------------------------------------


def played_events() -> list[Event]:
    """The events of real matches, every kind: a Golden 10 match with strikes and a
    forfeit, a Goof match (ticks, some moves by stand-ins), its match_end, an abort."""
    golden10 = play(
        match_request(bots=("a", "b", "a"), options={"rounds": 1}),
        [FakeSeat("a", random_legal(1)), FakeSeat("b", faulty_at({1, 2}, late, random_legal(2)))],
        Limits(time_bank_ms=1000, max_strikes=2),
    )
    goof = play(
        match_request(
            "goof", ("a", "b", "c"), {"rounds": 1, "goof_pile": 3, "max_ticks": 300}, seed=4
        ),
        [
            FakeSeat("a", random_legal(1)),
            FakeSeat("b", random_legal(2)),
            FakeSeat("c", faulty_at({5}, gone, random_legal(3))),
        ],
    )
    events: list[Event] = []
    for result, _, played in (golden10, goof):
        events += [*played, {"type": EventType.MATCH_END, "result": result}]
    events.append({"type": EventType.MATCH_ABORTED, "reason": "the referee stopped"})
    return events


def test_every_event_kind_is_typed_as_its_json() -> None:
    """event_message keeps `type` and `json` and fills the typed field named by the
    type, whose fields say all the JSON says (ms unset where the JSON has null)."""
    events = played_events()
    assert {str(event["type"]) for event in events} == {str(kind) for kind in EventType}
    messages = [wire_results.event_message(event) for event in events]
    for event, message in zip(events, messages, strict=True):
        assert message.type == event["type"]
        assert json.loads(message.json) == as_json(event)
        assert event_from_typed(message) == as_json(event)
    ticks = [m.tick for m in messages if m.type == "tick"]
    moves = [move for tick in ticks for move in tick.moves]
    assert any(move.HasField("ms") for move in moves)
    assert any(not move.HasField("ms") for move in moves), "a stand-in's move has no ms"
    assert any(move.took_effect for move in moves) and any(not m.took_effect for m in moves)
    actions = [m.action for m in messages if m.type == "action"]
    assert any(not action.HasField("ms") for action in actions), "a default has no ms"
    strikes = [m.strike for m in messages if m.type == "strike"]
    assert [(s.bot, s.strikes) for s in strikes] == [("b", 1), ("b", 2)]
    ends = [m.match_end.result for m in messages if m.type == "match_end"]
    assert [(e.bot_id, e.forfeited) for e in ends[0].entries] == [
        ("a", False),
        ("b", True),
        ("a", False),
    ]


def test_hand_written_events_and_an_unknown_type() -> None:
    """Each kind from its documented keys; an event of another type (match_running)
    has its type and JSON and no typed field."""
    result = {
        "match_id": "m1",
        "game": "goof",
        "bots": ["a", "b"],
        "scores": [3, 1],
        "ranks": [2, 1],
        "forfeits": ["b"],
        "games": [
            {"seed": "5", "seats": ["a", "b"], "scores": [3, 1], "ranks": [2, 1], "rounds": 1}
        ],
        "forfeit_reasons": {"b": "disconnected: gone"},
        "strikes": {"a": 0, "b": 2},
    }
    events: list[Event] = [
        {"type": "game_start", "game_index": 1, "seats": ["b", "a"], "seed_commitment": "ab" * 32},
        {"type": "action", "game_index": 0, "seat": 2, "action": "bid:250", "ms": 6.199},
        {"type": "action", "game_index": 0, "seat": 1, "action": "pass", "ms": None},
        {
            "type": "tick",
            "game_index": 0,
            "moves": [[1, "play:7H@1:new", True, 3.5], [0, "wait", False, None]],
        },
        {"type": "strike", "game_index": 0, "seat": 1, "bot": "b", "reason": "late", "strikes": 2},
        {"type": "forfeit", "game_index": 1, "seat": 0, "bot": "b", "reason": "disconnected"},
        {"type": "game_end", "game_index": 1, "scores": [3, -1], "ranks": [1, 2]},
        {"type": "match_end", "result": result},
        {"type": "match_aborted", "reason": "relay unavailable"},
    ]
    for event in events:
        message = wire_results.event_message(event)
        assert event_from_typed(message) == event == json.loads(message.json)
    tick = wire_results.event_message(events[3]).tick
    assert [(m.seat, m.action, m.took_effect, _ms(m)) for m in tick.moves] == [
        (1, "play:7H@1:new", True, 3.5),
        (0, "wait", False, None),
    ]
    ended = wire_results.event_message(events[7]).match_end.result
    assert [(e.bot_id, e.strikes, e.forfeit_reason) for e in ended.entries] == [
        ("a", 0, ""),
        ("b", 2, "disconnected: gone"),
    ]
    running = wire_results.event_message({"type": "match_running", "reason": ""})
    assert running.type == "match_running" and running.WhichOneof("event") is None
    assert json.loads(running.json) == {"type": "match_running", "reason": ""}


# GameReplay.events ---------------------------------------------------------------------


def test_replay_events_are_the_events_json_typed() -> None:
    """GameReplay.events holds the same events as events_json, typed, in order."""
    result, replays, _ = play(
        match_request(bots=("a", "b", "c"), options={"rounds": 1}, duplicate=True),
        [FakeSeat("a", random_legal(1)), FakeSeat("b", late), FakeSeat("c", random_legal(3))],
    )
    # As stored: the replays' JSON read back.
    stored = [Replay.from_json(as_json(replay.to_json())) for replay in replays]
    message = wire_results.replay_message("m1", stored)
    assert len(message.games) == 3
    for replay, game in zip(stored, message.games, strict=True):
        listed = json.loads(game.events_json)
        assert listed == replay.events
        assert [json.loads(event.json) for event in game.events] == listed
        assert [event.type for event in game.events] == [event["type"] for event in listed]
        assert listed[0]["type"] == "game_start" and listed[-1]["type"] == "game_end"
        check_typed(list(game.events))
        assert json.loads(game.log_json) == replay.log
    kinds = {event.type for game in message.games for event in game.events}
    assert {"game_start", "action", "strike", "forfeit", "game_end"} <= kinds
    assert result["forfeits"] == ["b"]
