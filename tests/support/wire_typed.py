"""What the typed fields of results and events say, as their JSON says it.

The JSON of a MatchResult or a MatchEvent rebuilt from its typed fields alone,
for the tests that check a client ignoring every JSON field reads everything.
"""

from __future__ import annotations

import json
from typing import Any

from cardarena_api.v1 import arena_pb2 as pb


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
