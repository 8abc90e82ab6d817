"""The public view of every game (`public_observation`) under random legal play.

At every step of seeded random games, at every player count, the public view
holds no card that any seat cannot see, names no seat and no hand, and is
JSON-ready; and it is what each seat's own observation holds besides its own.
"""

from __future__ import annotations

import json
import random

import pytest

import games
from tests.games.test_properties import CASES, PLAY_OPTIONS, string_leaves

SEEDS = range(2)

PRIVATE_KEYS = {"seat", "hand", "stash"}
"""What only one seat may know (its seat is what makes an observation its own)."""


def hidden_from_someone(state: games.State) -> set[str]:
    return set().union(*(state.hidden_cards(seat) for seat in range(state.players)))


def check_public(state: games.State) -> None:
    view = state.public_observation()
    json.dumps(view)
    assert not PRIVATE_KEYS & set(view), f"private keys in the public view: {set(view)}"
    leaked = string_leaves(view) & hidden_from_someone(state)
    assert not leaked, f"the public view shows hidden cards {sorted(leaked)}"
    for seat in range(state.players):
        own = state.observation(seat)
        assert {key: own[key] for key in view} == view, "a seat sees all that is public"


@pytest.mark.parametrize(("name", "players"), CASES, ids=lambda value: str(value))
def test_public_view_shows_no_hidden_card(name: str, players: int) -> None:
    spec = games.get(name)
    for seed in SEEDS:
        state = spec.new_game(players, seed, PLAY_OPTIONS.get(name))
        rng = random.Random(seed)
        check_public(state)
        while not state.is_over():
            if isinstance(state, games.TickState) and spec.simultaneous:
                state.apply_tick(
                    {seat: rng.choice(state.legal_actions(seat)) for seat in state.to_act()}
                )
            else:
                seat = state.to_act()[0]
                state.apply(seat, rng.choice(state.legal_actions(seat)))
            check_public(state)


def test_public_view_of_goodge_keeps_the_stash_after_the_end() -> None:
    """A duplicate match deals the same cards again: the Stash is never public."""
    state = games.get("goodge").new_game(4, 1)
    rng = random.Random(1)
    while not state.is_over():
        seat = state.to_act()[0]
        state.apply(seat, rng.choice(state.legal_actions(seat)))
    assert "stash" not in state.public_observation()
    assert state.public_observation()["stash_size"] == state.observation(0)["stash_size"]
