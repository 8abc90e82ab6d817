"""Every result, event and rules option typed through a referee process: StartMatch
reads option_values, GameStart sends them, and WatchMatch, GetReplay and GetMatch
give every event and the result typed.

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

from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import cards_pb2 as cards
from tests.support.referee import BotHandle, RefereeProc, records_until, result_of
from tests.support.wire_typed import check_typed, result_from_typed

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
