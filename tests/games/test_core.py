"""The shared pieces of every engine: ranks, options, specs, notation."""

from __future__ import annotations

import pytest

import games
from games.core import rank_scores


def test_ranks_share_ties_and_skip() -> None:
    assert rank_scores([10, 30, 30, 5]) == (3, 1, 1, 4)
    assert rank_scores([10, 30, 30, 5], higher_is_better=False) == (2, 3, 3, 1)
    assert rank_scores([0, 0]) == (1, 1)


def test_get_names_every_game_and_rejects_others() -> None:
    assert games.names() == ["goodge", "golden10", "goof"]
    with pytest.raises(ValueError, match="no game called 'chess'"):
        games.get("chess")


@pytest.mark.parametrize("name", ["goodge", "golden10", "goof"])
def test_specs_declare_players_and_options(name: str) -> None:
    spec = games.get(name)
    assert spec.name == name and spec.min_players >= 2 and spec.max_players >= spec.min_players
    assert spec.resolve_options(None, spec.min_players) == spec.defaults()
    with pytest.raises(ValueError, match="no option 'nonsense'"):
        spec.resolve_options({"nonsense": 1}, spec.min_players)
    with pytest.raises(ValueError, match="players"):
        spec.new_game(spec.max_players + 1, seed=1)


def test_documented_defaults() -> None:
    assert games.get("goodge").defaults() == {
        "one_high": True,
        "all_pass": "dealer_50",
        "max_rounds": 200,
    }
    golden = games.get("golden10").defaults()
    assert golden["yellow10_floor"] == "round" and golden["rounds"] == 6
    goof = games.get("goof").defaults()
    assert goof["goof_pile"] == 13 and goof["stall_limit"] == 20
    assert goof["rounds"] == 5 and goof["target_score"] is None


@pytest.mark.parametrize("name", ["goodge", "golden10", "goof"])
def test_notation_round_trips_for_every_action(name: str) -> None:
    spec = games.get(name)
    state = spec.new_game(spec.min_players, seed=3)
    sample = state.legal_actions(state.to_act()[0])[0]
    cls = type(sample)
    for number in range(len(cls.NAMES)):
        action = cls(number)
        assert spec.parse_action(str(action)) == action
    with pytest.raises(games.IllegalAction, match="not an action"):
        spec.parse_action("nonsense")


def test_option_pairs() -> None:
    assert games.parse_option_pairs(["a=1", "b=x=y"]) == {"a": "1", "b": "x=y"}
    with pytest.raises(ValueError, match="key=value"):
        games.parse_option_pairs(["flag"])
