"""The hidden-card scan of a public stream (WatchPublic), shared by its tests.

`check_public_stream` checks public events against the cards some seat could not
see when each was sent (`hidden_by_step`, rebuilt from the finished match's
replay); `message_strings` gives every string a MatchEvent carried, typed fields
and JSON alike.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from google.protobuf.message import Message

import games
from cardarena_api.v1 import arena_pb2 as pb
from referee.public import VIEW
from tests.games.test_properties import string_leaves


def message_strings(message: Message) -> set[str]:
    """Every string in a message, nested messages included, and in its JSON fields."""
    found: set[str] = set()
    for field, value in message.ListFields():
        values = value if field.is_repeated else [value]
        for item in values:
            if isinstance(item, Message):
                found |= message_strings(item)
            elif isinstance(item, str):
                found.add(item)
                if field.name.endswith("json") and item:
                    found |= string_leaves(json.loads(item))
    return found


def states_by_step(replay: pb.Replay) -> dict[int, list[games.State]]:
    """Per game of a finished match, the game's state after each step (move or tick),
    rebuilt from its log."""
    states: dict[int, list[games.State]] = {}
    for game in replay.games:
        log = json.loads(game.log_json)
        state = games.get(log["game"]).new_game(
            log["players"], log["seed"], log["options"], log["deal"]
        )
        steps = [state.clone()]
        for move in log["moves"]:
            if isinstance(state, games.TickState) and state.spec.simultaneous:
                state.apply_tick({seat: action for seat, action in move}, [s for s, _ in move])
            else:
                state.apply(*move)
            steps.append(state.clone())
        states[game.game_index] = steps
    return states


def hidden_by_step(replay: pb.Replay) -> dict[int, list[set[str]]]:
    """Per game of a finished match, per step: the cards some seat could not see then."""
    return {
        game: [_hidden(state) for state in steps] for game, steps in states_by_step(replay).items()
    }


def _hidden(state: games.State) -> set[str]:
    return set().union(*(state.hidden_cards(seat) for seat in range(state.players)))


def check_public_stream(events: Sequence[dict[str, Any]], hidden: dict[int, list[set[str]]]) -> int:
    """No event shows a card hidden when it was sent; returns the number of views.

    `events` are public events as JSON with `strings`: every string the event carried.
    """
    game, step, views = 0, 0, 0
    for event in events:
        if event["type"] == "match_end":
            assert event is events[-1], "the stream ends with the match's end"
            continue
        game = event.get("game_index", game)
        if event["type"] == VIEW:
            step, views = event["step"], views + 1
        elif event["type"] == "game_start":
            step = 0
        assert event["type"] not in ("action", "tick"), "no move in a public stream"
        assert "reason" not in event or event["type"] == "match_aborted"
        leaked = event["strings"] & hidden[game][step]
        assert not leaked, f"{event['type']} at game {game} step {step} shows {sorted(leaked)}"
    assert events and events[-1]["type"] == "match_end"
    return views
