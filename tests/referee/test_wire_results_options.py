"""The typed rules options, in referee.wire_actions and wire_results: GameStart.option_values and
StartMatchRequest.option_values, one typed encoding both ways.
"""

from __future__ import annotations

import json

import pytest

import games
from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import cards_pb2 as cards
from ladder.records import GameStart
from referee import wire_actions, wire_results

# Options: one typed encoding both ways ---------------------------------------------------


def test_a_game_start_carries_every_resolved_option_typed() -> None:
    """GameStart.option_values: a flag, a number or a text per option, nothing set for
    an option that is off, per-seat values as their text; the JSON-encoded map stays."""
    resolved = games.get("goof").resolve_options(
        {"goof_pile": "4,3,4", "rounds": "2", "target_score": "none"}, 3
    )
    start = wire_results.referee_message(
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
    start = wire_results.referee_message(
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
    start = wire_results.referee_message(
        GameStart(
            "m", 0, 0, game=game, seats=("x",) * players, options=resolved, seed_commitment=""
        )
    ).game_start
    request = pb.StartMatchRequest(game=game, players=players, option_values=start.option_values)
    asked = wire_actions.requested_options(request)
    assert spec.resolve_options(asked, players) == resolved


def test_typed_options_merge_with_texts_as_python_values() -> None:
    """Typed values become Python values beside the texts; resolve_options reads both."""
    request = pb.StartMatchRequest(
        game="golden10",
        players=4,
        options={"yellow10_floor": "game"},
        option_values={"rounds": cards.OptionValue(number=1)},
    )
    asked = wire_actions.requested_options(request)
    assert asked == {"yellow10_floor": "game", "rounds": 1}
    assert games.get("golden10").resolve_options(asked, 4) == {
        "rounds": 1,
        "yellow10_floor": "game",
    }
    texts_only = pb.StartMatchRequest(game="golden10", players=4, options={"rounds": "2"})
    assert wire_actions.requested_options(texts_only) == {"rounds": "2"}


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
        wire_actions.requested_options(request)
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
    asked = wire_actions.requested_options(request)
    with pytest.raises(ValueError, match=message):
        games.get(game).resolve_options(asked, 3)
