"""bots.observations: what a bot is handed equals the engine's observation, typed or JSON."""

from __future__ import annotations

import json
import random
from typing import Any

import orjson
import pytest

import games
from bots.observations import observation_view
from cardarena_api.v1 import cards_pb2 as cards
from referee import wire_observations

# Whole games with the rules' defaults (Goof: the smallest table, to keep ticks few).
TABLES = [("goodge", 3), ("goodge", 4), ("golden10", 3), ("golden10", 5), ("goof", 2), ("goof", 3)]


def every_step(game: str, players: int, seed: int) -> Any:
    """Each state of one random game from the deal to the end (the same object, moved on)."""
    spec = games.get(game)
    state = spec.new_game(players, seed)
    rng = random.Random(seed)
    yield state
    while not state.is_over():
        seats = state.to_act()
        if isinstance(state, games.TickState) and spec.simultaneous:
            state.apply_tick({seat: rng.choice(state.legal_actions(seat)) for seat in seats})
        else:
            state.apply(seats[0], rng.choice(state.legal_actions(seats[0])))
        yield state


@pytest.mark.parametrize(("game", "players"), TABLES, ids=[f"{g}-{p}p" for g, p in TABLES])
def test_the_typed_and_json_forms_equal_the_engines_observation_at_every_step(
    game: str, players: int
) -> None:
    steps = 0
    seen_last_round = False
    for state in every_step(game, players, seed=players):
        for seat in range(players):
            engine = orjson.loads(orjson.dumps(state.observation(seat)))
            typed = wire_observations.observation_message(state.observation(seat))
            assert not typed.json  # JSON only for a session that asks
            received = cards.Observation.FromString(typed.SerializeToString())
            assert observation_view(received) == engine
            with_json = wire_observations.observation_message(
                state.observation(seat), with_json=True
            )
            assert json.loads(with_json.json) == engine
            seen_last_round |= engine.get("last_round") is not None or bool(
                engine.get("past_rounds")
            )
        steps += 1
    assert state.is_over() and steps > 10
    assert seen_last_round, "the game never showed a finished round"


def test_an_observation_without_its_games_fields_is_refused() -> None:
    with pytest.raises(ValueError, match="without its game's fields"):
        observation_view(cards.Observation(game="goodge"))
