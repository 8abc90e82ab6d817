"""Every result and event typed: MatchResult.entries, MatchEvent's typed oneof,
GameReplay.events and the typed rules options (GameStart.option_values,
StartMatchRequest.option_values), in referee.wire and through a referee process.

The check throughout: the typed fields alone rebuild the JSON beside them, so a
client that ignores every JSON field reads everything.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable
from typing import Any

import grpc
import pytest

import games
from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import cards_pb2 as cards
from ladder.records import EventType, GameStart, MatchResult, Replay
from referee import wire
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
from tests.support.referee import BotHandle, RefereeProc, records_until, result_of

# What the typed fields say, as the JSON says it ------------------------------------------


def _ms(message: pb.ActionEvent | pb.TickMove) -> float | None:
    return message.ms if message.HasField("ms") else None


def result_from_typed(result: pb.MatchResult, match_id: str, game: str) -> dict[str, Any]:
    """The result's JSON rebuilt from its typed fields alone (`match_id` and `game` are
    the match's own, not the result's)."""
    entries = result.entries
    return {
        "match_id": match_id,
        "game": game,
        "bots": [entry.bot_id for entry in entries],
        "scores": [entry.score for entry in entries],
        "ranks": [entry.rank for entry in entries],
        "forfeits": sorted({entry.bot_id for entry in entries if entry.forfeited}),
        "games": [
            {
                "seed": one.seed_decimal,
                "seats": list(one.seats),
                "scores": list(one.scores),
                "ranks": list(one.ranks),
                "rounds": one.rounds,
            }
            for one in result.games
        ],
        "forfeit_reasons": {e.bot_id: e.forfeit_reason for e in entries if e.forfeited},
        "strikes": {entry.bot_id: entry.strikes for entry in entries},
    }


def event_from_typed(message: pb.MatchEvent) -> dict[str, Any]:
    """The event's JSON rebuilt from `type` and the typed oneof alone."""
    kind = message.WhichOneof("event")
    assert kind == message.type, f"a {message.type} event has its typed field {kind}"
    if kind == "game_start":
        start = message.game_start
        return {
            "type": kind,
            "game_index": start.game_index,
            "seats": list(start.seats),
            "seed_commitment": start.seed_commitment,
        }
    if kind == "action":
        action = message.action
        return {
            "type": kind,
            "game_index": action.game_index,
            "seat": action.seat,
            "action": action.action,
            "ms": _ms(action),
        }
    if kind == "tick":
        tick = message.tick
        return {
            "type": kind,
            "game_index": tick.game_index,
            "moves": [[m.seat, m.action, m.took_effect, _ms(m)] for m in tick.moves],
        }
    if kind == "strike":
        strike = message.strike
        return {
            "type": kind,
            "game_index": strike.game_index,
            "seat": strike.seat,
            "bot": strike.bot,
            "reason": strike.reason,
            "strikes": strike.strikes,
        }
    if kind == "forfeit":
        forfeit = message.forfeit
        return {
            "type": kind,
            "game_index": forfeit.game_index,
            "seat": forfeit.seat,
            "bot": forfeit.bot,
            "reason": forfeit.reason,
        }
    if kind == "game_end":
        end = message.game_end
        return {
            "type": kind,
            "game_index": end.game_index,
            "scores": list(end.scores),
            "ranks": list(end.ranks),
        }
    if kind == "match_end":
        told = json.loads(message.json)["result"]
        result = message.match_end.result
        assert json.loads(result.json) == told
        return {"type": kind, "result": result_from_typed(result, told["match_id"], told["game"])}
    if kind == "match_aborted":
        return {"type": kind, "reason": message.match_aborted.reason}
    raise AssertionError(f"an event of type {message.type} with no typed field")


def check_typed(messages: list[pb.MatchEvent]) -> None:
    """Each event's typed form says what its JSON says."""
    for message in messages:
        assert event_from_typed(message) == json.loads(message.json), message.type


def as_json(value: Any) -> Any:
    """What the JSON of `value` reads back as (StrEnums become plain texts)."""
    return json.loads(json.dumps(value))


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
    message = wire.result_message(result)
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
    entries = wire.result_message(MatchResult.from_json(stored)).entries
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
    message = wire.result_message(MatchResult.from_json(result))
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
    messages = [wire.event_message(event) for event in events]
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
        message = wire.event_message(event)
        assert event_from_typed(message) == event == json.loads(message.json)
    tick = wire.event_message(events[3]).tick
    assert [(m.seat, m.action, m.took_effect, _ms(m)) for m in tick.moves] == [
        (1, "play:7H@1:new", True, 3.5),
        (0, "wait", False, None),
    ]
    ended = wire.event_message(events[7]).match_end.result
    assert [(e.bot_id, e.strikes, e.forfeit_reason) for e in ended.entries] == [
        ("a", 0, ""),
        ("b", 2, "disconnected: gone"),
    ]
    running = wire.event_message({"type": "match_running", "reason": ""})
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
    message = wire.replay_message("m1", stored)
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


# Options: one typed encoding both ways ---------------------------------------------------


def test_a_game_start_carries_every_resolved_option_typed() -> None:
    """GameStart.option_values: a flag, a number or a text per option, nothing set for
    an option that is off, per-seat values as their text; the JSON-encoded map stays."""
    resolved = games.get("goof").resolve_options(
        {"goof_pile": "4,3,4", "rounds": "2", "target_score": "none"}, 3
    )
    start = wire.referee_message(
        GameStart(
            "m1", 0, 1, game="goof", seats=("a", "b", "c"), options=resolved, seed_commitment="c"
        )
    ).game_start
    typed = dict(start.option_values)
    assert set(typed) == set(resolved)
    assert typed["goof_pile"] == cards.OptionValue(text="4,3,4")
    assert typed["rounds"] == cards.OptionValue(number=2)
    assert typed["target_score"] == cards.OptionValue()
    assert typed["target_score"].WhichOneof("value") is None
    assert typed["stall_limit"] == cards.OptionValue(number=20)
    assert dict(start.options) == {name: json.dumps(v) for name, v in resolved.items()}
    goodge = games.get("goodge").resolve_options({}, 4)
    start = wire.referee_message(
        GameStart("m1", 0, 1, game="goodge", seats=("a",) * 4, options=goodge, seed_commitment="c")
    ).game_start
    assert dict(start.option_values) == {
        "one_high": cards.OptionValue(flag=True),
        "all_pass": cards.OptionValue(text="dealer_50"),
        "max_rounds": cards.OptionValue(number=200),
    }


OPTION_SETS = [
    ("goodge", 4, {}),
    ("goodge", 3, {"one_high": False, "all_pass": "redeal", "max_rounds": 7}),
    ("golden10", 5, {"rounds": 1, "yellow10_floor": "game"}),
    ("goof", 4, {"goof_pile": "13,10,13,9", "target_score": 50, "rounds": 2}),
    ("goof", 2, {"goof_pile": 6, "target_score": None}),
]


@pytest.mark.parametrize(("game", "players", "options"), OPTION_SETS)
def test_the_options_a_game_start_gives_can_be_asked_for_as_they_are(
    game: str, players: int, options: dict[str, object]
) -> None:
    """One encoding both ways: GameStart.option_values sent back in a
    StartMatchRequest are read as the same resolved options."""
    spec = games.get(game)
    resolved = spec.resolve_options(options, players)
    start = wire.referee_message(
        GameStart(
            "m", 0, 0, game=game, seats=("x",) * players, options=resolved, seed_commitment=""
        )
    ).game_start
    request = pb.StartMatchRequest(game=game, players=players, option_values=start.option_values)
    asked = wire.requested_options(request)
    assert spec.resolve_options(asked, players) == resolved


def test_typed_options_merge_with_texts_as_python_values() -> None:
    """Typed values become Python values beside the texts; resolve_options reads both."""
    request = pb.StartMatchRequest(
        game="golden10",
        players=4,
        options={"yellow10_floor": "game"},
        option_values={"rounds": cards.OptionValue(number=1)},
    )
    asked = wire.requested_options(request)
    assert asked == {"yellow10_floor": "game", "rounds": 1}
    assert games.get("golden10").resolve_options(asked, 4) == {
        "rounds": 1,
        "yellow10_floor": "game",
    }
    texts_only = pb.StartMatchRequest(game="golden10", players=4, options={"rounds": "2"})
    assert wire.requested_options(texts_only) == {"rounds": "2"}


@pytest.mark.parametrize(
    ("game", "options", "values", "message"),
    [
        ("golden10", {}, {"rounds": cards.OptionValue(text="1")}, "option rounds takes a number"),
        (
            "goodge",
            {},
            {"one_high": cards.OptionValue(text="true")},
            "option one_high takes a flag",
        ),
        ("goof", {}, {"goof_pile": cards.OptionValue(text="5")}, "option goof_pile takes a number"),
        (
            "golden10",
            {"rounds": "1"},
            {"rounds": cards.OptionValue(number=1)},
            "option rounds is given in both options and option_values",
        ),
    ],
    ids=["text-for-number", "text-for-flag", "text-for-one-size", "both"],
)
def test_typed_options_of_the_wrong_kind_or_given_twice_are_refused(
    game: str, options: dict[str, str], values: dict[str, cards.OptionValue], message: str
) -> None:
    request = pb.StartMatchRequest(game=game, players=3, options=options, option_values=values)
    with pytest.raises(ValueError, match=message) as refused:
        wire.requested_options(request)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(
    ("game", "values", "message"),
    [
        ("golden10", {"rounds": cards.OptionValue(flag=True)}, "option rounds: must be an integer"),
        ("golden10", {"rounds": cards.OptionValue()}, "option rounds: must be an integer"),
        (
            "golden10",
            {"yellow10_floor": cards.OptionValue(number=1)},
            "option yellow10_floor: must be one of",
        ),
        ("goodge", {"one_high": cards.OptionValue(number=1)}, "option one_high: must be true or"),
        ("golden10", {"rounds": cards.OptionValue(number=0)}, "option rounds: must be an integer"),
        ("golden10", {"nope": cards.OptionValue(number=1)}, "golden10 has no option 'nope'"),
    ],
    ids=[
        "flag-for-number",
        "nothing-for-number",
        "number-for-choice",
        "number-for-flag",
        "range",
        "unknown",
    ],
)
def test_typed_options_the_game_refuses_fail_its_own_check(
    game: str, values: dict[str, cards.OptionValue], message: str
) -> None:
    """A value the option refuses whatever its kind is left to the game's
    resolve_options, which checks typed values and texts alike."""
    request = pb.StartMatchRequest(game=game, players=3, option_values=values)
    asked = wire.requested_options(request)
    with pytest.raises(ValueError, match=message):
        games.get(game).resolve_options(asked, 3)


# Through a referee process --------------------------------------------------------------


@pytest.fixture(scope="module")
def players(referee: RefereeProc) -> list[BotHandle]:
    """A recording badbot (random play, every message written down), then three
    `arena bot run random` processes."""
    recorder = referee.run_badbot("record", referee.register("recorder"), "--seed", "3", wait=False)
    randoms = [referee.run_bot("random", referee.register("random"), capacity=8) for _ in range(3)]
    handles = [recorder, *randoms]
    referee.wait_connected(handles)
    return handles


def start(
    referee: RefereeProc,
    game: str,
    bots: list[BotHandle],
    *,
    values: dict[str, cards.OptionValue],
    options: dict[str, str] | None = None,
    seed: int = 9,
    match_id: str | None = None,
) -> str:
    match_id = match_id or f"typed-{game}-" + uuid.uuid4().hex[:8]
    referee.matches.StartMatch(
        pb.StartMatchRequest(
            match_id=match_id,
            game=game,
            players=len(bots),
            bot_ids=[bot.bot_id for bot in bots],
            seed=seed,
            deadline_ms=1000,
            options=options or {},
            option_values=values,
        ),
        timeout=30,
    )
    return match_id


def game_starts(bot: BotHandle, match_id: str) -> list[dict[str, Any]]:
    return [
        m["game_start"]
        for m in bot.received("game_start")
        if m["game_start"]["match_id"] == match_id
    ]


def test_start_match_reads_option_values_and_game_start_sends_them(
    referee: RefereeProc, players: list[BotHandle]
) -> None:
    """option_values are applied (Golden 10 rounds=1 plays one round) and every bot's
    GameStart carries the resolved options typed, and JSON-encoded as before."""
    recorder = players[0]
    match_id = start(
        referee,
        "golden10",
        players,
        values={
            "rounds": cards.OptionValue(number=1),
            "yellow10_floor": cards.OptionValue(text="game"),
        },
    )
    result = result_of(referee.wait_match(match_id))
    assert [one["rounds"] for one in result["games"]] == [1]
    log = json.loads(referee.replay(match_id).games[0].log_json)
    assert log["options"] == {"rounds": 1, "yellow10_floor": "game"}
    (told,) = records_until(recorder, lambda _: game_starts(recorder, match_id), "its GameStart")
    # As badbot records it: MessageToDict, field names kept, int64 as a string.
    assert told["option_values"] == {"rounds": {"number": "1"}, "yellow10_floor": {"text": "game"}}
    assert told["options"] == {"rounds": "1", "yellow10_floor": '"game"'}


def test_start_match_reads_typed_values_beside_texts(
    referee: RefereeProc, players: list[BotHandle]
) -> None:
    """The old text options keep working beside typed values (one option in each)."""
    match_id = start(
        referee,
        "golden10",
        players[1:],
        values={"rounds": cards.OptionValue(number=2)},
        options={"yellow10_floor": "game"},
    )
    result = result_of(referee.wait_match(match_id))
    assert [one["rounds"] for one in result["games"]] == [2]
    log = json.loads(referee.replay(match_id).games[0].log_json)
    assert log["options"] == {"rounds": 2, "yellow10_floor": "game"}


@pytest.mark.parametrize(
    ("values", "options", "named"),
    [
        ({"rounds": cards.OptionValue(text="1")}, {}, "option rounds takes a number"),
        ({"rounds": cards.OptionValue(flag=True)}, {}, "option rounds: must be an integer"),
        ({"yellow10_floor": cards.OptionValue(number=2)}, {}, "option yellow10_floor: must be"),
        (
            {"rounds": cards.OptionValue(number=1)},
            {"rounds": "1"},
            "option rounds is given in both options and option_values",
        ),
    ],
    ids=["text-for-number", "flag-for-number", "number-for-choice", "both"],
)
def test_start_match_refuses_typed_options_of_the_wrong_kind_or_given_twice(
    referee: RefereeProc,
    players: list[BotHandle],
    values: dict[str, cards.OptionValue],
    options: dict[str, str],
    named: str,
) -> None:
    """INVALID_ARGUMENT, one line naming the option; no match is stored."""
    match_id = "refused-" + uuid.uuid4().hex[:8]
    with pytest.raises(grpc.RpcError) as refused:
        start(referee, "golden10", players, values=values, options=options, match_id=match_id)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    details = refused.value.details() or ""
    assert named in details and "\n" not in details, details
    with pytest.raises(grpc.RpcError) as missing:
        referee.matches.GetMatch(pb.GetMatchRequest(match_id=match_id), timeout=10)
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND


def watch_live(referee: RefereeProc, match_id: str) -> Callable[[], list[pb.MatchEvent]]:
    """WatchMatch from now in a thread; the returned call waits for the stream's end."""
    events: list[pb.MatchEvent] = []
    failed: list[BaseException] = []

    def follow() -> None:
        try:
            events.extend(
                referee.matches.WatchMatch(pb.GetMatchRequest(match_id=match_id), timeout=90)
            )
        except BaseException as error:  # handed to the test
            failed.append(error)

    thread = threading.Thread(target=follow, daemon=True)
    thread.start()

    def done() -> list[pb.MatchEvent]:
        thread.join(95)
        assert not thread.is_alive() and not failed, failed
        return events

    return done


def test_watch_match_replay_and_result_are_typed_through_the_referee(
    referee: RefereeProc, players: list[BotHandle], badbot: Callable[..., BotHandle]
) -> None:
    """A match with a late bot (three strikes, a forfeit): WatchMatch, live and after
    the end, GetReplay and GetMatch give every event and the result typed, the typed
    fields saying all their JSON says."""
    slow = badbot("late", "--delay-ms", "900")
    seats = [players[1], slow, players[2], players[3]]
    match_id = "typed-late-" + uuid.uuid4().hex[:8]
    referee.matches.StartMatch(
        pb.StartMatchRequest(
            match_id=match_id,
            game="golden10",
            players=4,
            bot_ids=[bot.bot_id for bot in seats],
            seed=5,
            deadline_ms=200,
            option_values={"rounds": cards.OptionValue(number=1)},
        ),
        timeout=30,
    )
    live = watch_live(referee, match_id)
    match = referee.wait_match(match_id)
    result = result_of(match)
    watched = live()
    assert [event.type for event in watched][-1] == "match_end"
    kinds = {event.type for event in watched}
    assert {"game_start", "action", "strike", "forfeit", "game_end", "match_end"} <= kinds
    check_typed(watched)
    assert [e.strike.strikes for e in watched if e.type == "strike"] == [1, 2, 3]
    assert [e.forfeit.bot for e in watched if e.type == "forfeit"] == [slow.bot_id]

    # The result, typed: in the match_end event and in GetMatch alike.
    entries = [(e.bot_id, e.strikes, e.forfeited, e.forfeit_reason) for e in match.result.entries]
    assert entries == [
        (players[1].bot_id, 0, False, ""),
        (slow.bot_id, 3, True, "3 strikes"),
        (players[2].bot_id, 0, False, ""),
        (players[3].bot_id, 0, False, ""),
    ]
    assert [e.rank for e in match.result.entries] == result["ranks"]
    assert [e.score for e in match.result.entries] == result["scores"]
    assert result_from_typed(match.result, match_id, "golden10") == result
    assert watched[-1].match_end.result == match.result

    # After the end: the stored events, the same, typed the same.
    after = list(referee.matches.WatchMatch(pb.GetMatchRequest(match_id=match_id), timeout=30))
    assert [json.loads(e.json) for e in after] == [json.loads(e.json) for e in watched]
    check_typed(after)

    (game,) = referee.replay(match_id).games
    listed = json.loads(game.events_json)
    assert [json.loads(event.json) for event in game.events] == listed
    assert listed == [json.loads(e.json) for e in watched[:-1]]
    check_typed(list(game.events))


def test_goof_ticks_and_per_seat_options_are_typed_through_the_referee(
    referee: RefereeProc, players: list[BotHandle]
) -> None:
    """Goof with per-seat goof piles given typed (a text) and a number: the game is
    played with them, and its tick events' moves arrive as TickMove messages."""
    match_id = "typed-goof-" + uuid.uuid4().hex[:8]
    start(
        referee,
        "goof",
        players[1:],
        values={
            "goof_pile": cards.OptionValue(text="4,3,4"),
            "rounds": cards.OptionValue(number=1),
        },
        match_id=match_id,
    )
    result = result_of(referee.wait_match(match_id))
    assert [one["rounds"] for one in result["games"]] == [1]
    (game,) = referee.replay(match_id).games
    assert json.loads(game.log_json)["options"]["goof_pile"] == [4, 3, 4]
    watched = list(referee.matches.WatchMatch(pb.GetMatchRequest(match_id=match_id), timeout=30))
    check_typed(watched)
    ticks = [event.tick for event in watched if event.type == "tick"]
    assert ticks and all(len(tick.moves) == 3 for tick in ticks)
    assert {move.seat for tick in ticks for move in tick.moves} == {0, 1, 2}
    assert any(move.took_effect for tick in ticks for move in tick.moves)
    assert all(move.HasField("ms") for tick in ticks for move in tick.moves), "bots chose"
    check_typed(list(game.events))
