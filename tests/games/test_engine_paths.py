"""The engines' fast paths against the slow ones: rebuilt states and checked ticks.

A state rebuilt from an observation mid-trick keeps the trick's points, winner
and bidding floor apart from the cards, and a tick's seats are checked before
any of its actions, whichever way the actions are given.
"""

from __future__ import annotations

import random

import pytest

import games
from games import golden10, goof, sampling
from games.core import IllegalAction


def true_deal(state: games.State) -> dict[str, object]:
    """Where every card really is, in the shape `state_from_observation` takes."""
    zones = state.zones()
    hands = [zones[f"hand:{seat}"] for seat in range(state.players)]
    if isinstance(state, golden10.Golden10State):
        return {"hands": hands, "left_over": golden10._names(state._set_aside)}
    return {"hands": hands, "stash": zones["stash"]}


@pytest.mark.parametrize(("game", "players"), [("goodge", 3), ("goodge", 4), ("golden10", 5)])
def test_a_state_rebuilt_mid_round_plays_the_round_out_like_the_original(
    game: str, players: int
) -> None:
    rng = random.Random(5)
    for seed in range(6):
        state = games.get(game).new_game(players, seed)
        for _ in range(rng.randrange(1, 40)):  # somewhere in bidding or in a trick
            seat = state.to_act()[0]
            state.apply(seat, rng.choice(state.legal_actions(seat)))
        observation = state.observation(state.to_act()[0])
        rebuilt = sampling.state_from_observation(observation, true_deal(state), seed)
        round_number = state.round
        while state.round == round_number and not state.is_over():
            assert [rebuilt.observation(s) for s in range(players)] == [
                state.observation(s) for s in range(players)
            ]
            seat = state.to_act()[0]
            assert rebuilt.legal_actions(seat) == state.legal_actions(seat)
            action = rng.choice(state.legal_actions(seat))
            state.apply(seat, action)
            rebuilt.apply(seat, action)
        assert rebuilt.last_round == state.last_round  # type: ignore[attr-defined]


def test_a_tick_names_missing_seats_before_any_illegal_action() -> None:
    state = goof.new_game(2, 3)
    wait = state.legal_actions(0)[-1]  # an action object from the cached list
    message = "missing: \\[1\\], unknown seats: \\[2\\]"
    with pytest.raises(IllegalAction, match=message):
        state.apply_tick({0: "2S>p7", 2: "wait"})  # seat 0's action is illegal too
    with pytest.raises(IllegalAction, match=message):
        state.apply_tick({0: wait, 2: wait})
    with pytest.raises(IllegalAction, match="missing: \\[1\\], unknown seats: none"):
        state.apply_tick({0: wait})
    assert state.log()["moves"] == []
    assert [str(action) for _, action, _ in state.apply_tick({0: wait, 1: "wait"})] == [
        "wait",
        "wait",
    ]
