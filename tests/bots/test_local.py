"""Local games: one deal once per rotation of the seats."""

from __future__ import annotations

import json

import pytest

import bots
from bots.local import play_game, play_rotations


@pytest.mark.parametrize(("game", "players"), [("golden10", 4), ("goodge", 4), ("goof", 4)])
def test_an_entrant_named_twice_never_replays_a_game(game: str, players: int) -> None:
    # Seeded by seat, the rotation that swaps the two copies of each bot
    # recreated another rotation's game move for move: here half the games.
    # Seeded by entrant, every rotation is a game of its own.
    entrants = ["rules", "random", "rules", "random"][:players]
    finals = []
    for shift in range(players):
        seats = [(seat - shift) % players for seat in range(players)]
        lineup = [bots.load(entrants[e], 4 * 1000 + e) for e in seats]
        state = play_game(game, lineup, seed=4)
        finals.append(json.dumps(state.observation(0), sort_keys=True, default=str))
    assert len(set(finals)) == players
    rotations = play_rotations(game, entrants, seed=4)
    assert len(rotations) == players


def test_each_entrant_plays_every_seat() -> None:
    rotations = play_rotations("golden10", ["rules", "random", "random"], seed=2)
    assert len(rotations) == 3
    assert all(sorted(ranks)[0] == 1 for ranks in rotations)
    # Over the three seats the rules bot does better than the random ones.
    assert sum(r[0] for r in rotations) < min(
        sum(r[1] for r in rotations), sum(r[2] for r in rotations)
    )
