"""Random games played through, and the Act requests a referee would send along them."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import games
from referee.channels import ActRequest


def states(game: str, players: int, options: dict[str, Any], seed: int) -> Iterator[games.State]:
    """Every state of one random game, from the deal to the end (the same object, moved on)."""
    rng = random.Random(seed)
    state = games.get(game).new_game(players, seed, options)
    yield state
    while not state.is_over():
        if isinstance(state, games.TickState) and state.spec.simultaneous:
            state.apply_tick({s: rng.choice(state.legal_actions(s)) for s in state.to_act()})
        else:
            seat = state.to_act()[0]
            state.apply(seat, rng.choice(state.legal_actions(seat)))
        yield state


def act_requests(
    game: str, players: int, options: dict[str, Any], seed: int
) -> Iterator[ActRequest]:
    """The request to every seat to act along one random game (of Goof, every fifth tick:
    its ticks are many and alike): request `r<step>` of game 1 of match `m1`, 300 ms to
    answer and 900 in the bank."""
    for step, state in enumerate(states(game, players, options, seed)):
        if state.is_over() or (game == "goof" and step % 5):
            continue
        for seat in state.to_act():
            legal = tuple(str(action) for action in state.legal_actions(seat))
            obs = state.observation(seat)
            yield ActRequest(f"r{step}", "m1", 1, game, seat, players, obs, legal, 300, 900)
