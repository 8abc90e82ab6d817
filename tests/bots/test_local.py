"""Local games: one deal once per rotation of the seats."""

from __future__ import annotations

import pytest

from bots.local import play_game, play_rotations
from bots.rules import RulesBot


@pytest.mark.parametrize(("game", "players"), [("golden10", 4), ("goodge", 3), ("goof", 3)])
def test_equal_entrants_replay_the_same_game_in_every_rotation(game: str, players: int) -> None:
    # The bot in a seat is seeded by the seat, whoever sits there: with the
    # same bot everywhere every rotation is the same game, so an entrant's
    # rank follows the seat it moved to.
    rotations = play_rotations(game, ["rules"] * players, seed=4)
    seats = (
        play_game(game, [RulesBot(4 * 1000 + seat) for seat in range(players)], seed=4)
        .result()
        .ranks
    )
    assert len(rotations) == players
    for shift, by_entrant in enumerate(rotations):
        assert by_entrant == [seats[(entrant + shift) % players] for entrant in range(players)]


def test_each_entrant_plays_every_seat() -> None:
    rotations = play_rotations("golden10", ["rules", "random", "random"], seed=2)
    assert len(rotations) == 3
    assert all(sorted(ranks)[0] == 1 for ranks in rotations)
    # Over the three seats the rules bot does better than the random ones.
    assert sum(r[0] for r in rotations) < min(
        sum(r[1] for r in rotations), sum(r[2] for r in rotations)
    )
