"""The engines' observations from their typed messages: what the SDK hands a bot.

The referee sends each observation typed (`cards.Observation`); a bot gets
it back as the engine's own TypedDict (`games.goodge.GoodgeObservation`
and the others), equal to what `arena play` hands it, so a bot plays the
same locally and against a referee. The protocol's conventions are undone
here: -1 for "no seat", 0 for "no bid", UNSPECIFIED for "no suit", an unset
message for "nothing yet".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal

from cardarena_api.v1 import cards_pb2 as cards
from cardarena_api.v1.notation import GOLDEN10_LETTERS, GOODGE_LETTERS, GOOF_LETTERS
from games.core import JSON


def _seat(value: int) -> int | None:
    """A seat field: -1 means none."""
    return None if value < 0 else value


def _plays(plays: Iterable[cards.GoodgePlay | cards.Golden10Play]) -> list[list[Any]]:
    return [[play.seat, play.card.text] for play in plays]


def _option(value: cards.OptionValue) -> JSON:
    which = value.WhichOneof("value")
    if which is None:
        raise ValueError("an option value without a value")
    result: JSON = getattr(value, which)
    return result


def _goodge(typed: cards.GoodgeObservation) -> dict[str, Any]:
    last = typed.last_round if typed.HasField("last_round") else None
    return {
        "phase": typed.phase,
        "to_act": _seat(typed.to_act),
        "options": {name: _option(value) for name, value in typed.options.items()},
        "target": typed.target,
        "hand": [card.text for card in typed.hand],
        "hand_sizes": list(typed.hand_sizes),
        "bids": [[bid.seat, f"bid:{bid.bid}" if bid.bid else "pass"] for bid in typed.bids],
        "passed": list(typed.passed),
        "high_bid": typed.high_bid or None,
        "high_bidder": _seat(typed.high_bidder),
        "goodge": _seat(typed.goodge),
        "bid": typed.bid or None,
        "trump": GOODGE_LETTERS.get(typed.trump),
        "stash_size": typed.stash_size,
        "stash": [card.text for card in typed.stash] if typed.stash_known else None,
        "tricks": [
            {
                "leader": trick.leader,
                "cards": _plays(trick.plays),
                "winner": trick.winner,
                "points": trick.points,
            }
            for trick in typed.tricks
        ],
        "trick": _plays(typed.trick.plays),
        "lead_suit": GOODGE_LETTERS.get(typed.lead_suit),
        "taken": list(typed.taken),
        "tricks_won": list(typed.tricks_won),
        "last_round": None if last is None else _goodge_round_end(last),
    }


def _goodge_round_end(end: cards.GoodgeRoundEnd) -> dict[str, Any]:
    if end.redeal:
        return {"round": end.round, "redeal": True, "deltas": list(end.deltas)}
    return {
        "round": end.round,
        "redeal": False,
        "goodge": end.goodge,
        "bid": end.bid,
        "made": end.made,
        "points": list(end.points),
        "deltas": list(end.deltas),
    }


def _golden10(typed: cards.Golden10Observation) -> dict[str, Any]:
    last = typed.last_round if typed.HasField("last_round") else None
    return {
        "rounds": typed.rounds,
        "yellow10_floor": typed.yellow10_floor,
        "phase": typed.phase,
        "to_act": _seat(typed.to_act),
        "hand": [card.text for card in typed.hand],
        "hand_sizes": list(typed.hand_sizes),
        "led_colour": GOLDEN10_LETTERS.get(typed.led_colour),
        "trick": _plays(typed.trick.plays),
        "tricks": [
            {"leader": trick.leader, "cards": _plays(trick.plays), "winner": trick.winner}
            for trick in typed.tricks
        ],
        "red_points_taken": list(typed.red_points_taken),
        "yellow10_taken_by": _seat(typed.yellow10_taken_by),
        "left_over_count": typed.left_over_count,
        "left_over_taker": _seat(typed.left_over_taker),
        "last_round": None
        if last is None
        else {
            "round": last.round,
            "red_points": list(last.red_points),
            "yellow10": last.yellow10,
            "score_change": list(last.score_change),
            "scores": list(last.scores),
        },
    }


def _goof_card(typed: cards.GoofTableau, name: Literal["waste_top", "back_three"]) -> str | None:
    return getattr(typed, name).text if typed.HasField(name) else None


def _goof(typed: cards.GoofObservation) -> dict[str, Any]:
    return {
        "phase": typed.phase,
        "tick": typed.tick,
        "tableau": [
            {
                "seat": row.seat,
                "goof_pile": row.goof_pile,
                "line": [card.text for card in row.line],
                "stock": row.stock,
                "waste": row.waste,
                "waste_top": _goof_card(row, "waste_top"),
                "back_three": _goof_card(row, "back_three"),
                "area_cards": row.area_cards,
                "full_pass": row.full_pass,
            }
            for row in typed.tableau
        ],
        "piles": [
            {
                "id": pile.id,
                "suit": GOOF_LETTERS[pile.suit],
                "top": pile.top.text,
                "size": pile.size,
            }
            for pile in typed.piles
        ],
        "removed_piles": list(typed.removed_piles),
        "one_unders": typed.one_unders,
        "last_tick": [[move.seat, move.action, move.took_effect] for move in typed.last_tick],
        "past_rounds": [
            {"scores": list(past.scores), "goof": _seat(past.goof), "end": past.end}
            for past in typed.past_rounds
        ],
    }


_DETAILS: dict[str, Callable[[Any], dict[str, Any]]] = {
    "goodge": _goodge,
    "golden10": _golden10,
    "goof": _goof,
}
"""Per game (the name of its field in `Observation.detail`), its own keys."""


def observation_view(message: cards.Observation) -> dict[str, Any]:
    """The engine's observation that `message` carries (as its JSON would read)."""
    which = message.WhichOneof("detail")
    if which is None:
        raise ValueError(f"an observation of {message.game!r} without its game's fields")
    return {
        "game": message.game,
        "seat": message.seat,
        "players": message.players,
        "round": message.round,
        "dealer": message.dealer,
        "scores": list(message.scores),
        **_DETAILS[which](getattr(message, which)),
    }
