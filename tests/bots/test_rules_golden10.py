"""The Golden 10 rules bot beats random players clearly."""

from __future__ import annotations

import math
import random

import games
from bots import RandomBot, RulesBot
from bots.local import play_game, turn_for
from bots.rules.golden10 import choose

GAMES = 200
PLAYERS = 5


def binomial_tail(successes: int, trials: int, chance: float) -> float:
    """P(X >= successes) for X ~ Binomial(trials, chance)."""
    return sum(
        math.comb(trials, k) * chance**k * (1 - chance) ** (trials - k)
        for k in range(successes, trials + 1)
    )


def test_rules_bot_finishes_first_far_more_often_than_chance() -> None:
    firsts = 0
    for number in range(GAMES):
        rules_seat = number % PLAYERS
        bots = [
            RulesBot(number) if seat == rules_seat else RandomBot(number * PLAYERS + seat)
            for seat in range(PLAYERS)
        ]
        state = play_game("golden10", bots, seed=number)
        firsts += state.result().ranks[rules_seat] == 1
    assert binomial_tail(firsts, GAMES, 1 / PLAYERS) < 0.001, f"rank 1 in {firsts}/{GAMES}"


def bot_choice(state: games.State) -> str:
    return choose(turn_for(state, state.to_act()[0]), random.Random(0))


def test_rules_bot_ducks_under_the_winner_and_dumps_red_points() -> None:
    deal = {
        "hands": [
            [f"{rank}R" for rank in (4, 5, 6, 7, 8, 9, 10, 11, 13, 14)]
            + [f"{rank}G" for rank in (11, 12, 13, 14)],
            ["3R", *(f"{rank}Y" for rank in range(1, 14))],
            ["1R", "2R", "12R", *(f"{rank}B" for rank in range(1, 12))],
            ["12B", "13B", "14B", "14Y", *(f"{rank}G" for rank in range(1, 11))],
        ],
        "dealer": 0,
    }
    state = games.get("golden10").new_game(4, seed=0, deal=deal)
    state.apply(1, "3R")
    state.apply(2, "12R")
    state.apply(3, "14B")
    # Following red under the 12R: the costliest card that still loses is the red 10.
    assert bot_choice(state) == "10R"
    state.apply(0, "10R")
    state.apply(2, "1B")
    state.apply(3, "12B")
    # Void in black: the red 5 goes to someone else's trick.
    assert bot_choice(state) == "5R"
    state.apply(0, "4R")
    # Void again, the yellow 10 is kept: the highest other card goes.
    assert bot_choice(state) == "13Y"
