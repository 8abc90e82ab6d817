"""The Goodge rules bot beats random players clearly, and plays a few spots sensibly."""

from __future__ import annotations

import math
import random

import pytest

import games
from bots import RandomBot, RulesBot
from bots.local import play_game, turn_for
from bots.rules.goodge import choose

GAMES = 200

# Seat 0 holds long strong Hearts; seat 1 the Crown and no Hearts; dealer 3.
HANDS = [
    "1H 10H 9H 8H 2H 2S 3S 2D 3D 2R 2C 3C",
    "CR 4S 5S 6S 4D 5D 3R 4R 4C 5C 6C 7C",
    "3H 4H 7S 8S 6D 7D 8D 5R 6R 7R 8C 9C",
    "5H 6H 7H 9S 10S 1S 9D 10D 8R 9R 10C 1C",
]
DEAL = {"hands": [hand.split() for hand in HANDS], "stash": ["1D", "1R", "10R"], "dealer": 3}


def binomial_tail(successes: int, trials: int, chance: float) -> float:
    """P(X >= successes) for X ~ Binomial(trials, chance)."""
    return sum(
        math.comb(trials, k) * chance**k * (1 - chance) ** (trials - k)
        for k in range(successes, trials + 1)
    )


@pytest.mark.parametrize("players", [4, 3])
def test_rules_bot_finishes_first_far_more_often_than_chance(players: int) -> None:
    firsts = 0
    for number in range(GAMES):
        rules_seat = number % players
        bots = [
            RulesBot(number) if seat == rules_seat else RandomBot(number * players + seat)
            for seat in range(players)
        ]
        state = play_game("goodge", bots, seed=number)
        firsts += state.result().ranks[rules_seat] == 1
    assert binomial_tail(firsts, GAMES, 1 / players) < 0.001, f"rank 1 in {firsts}/{GAMES}"


def bot_choice(state: games.State) -> str:
    return choose(turn_for(state, state.to_act()[0]), random.Random(0))


def play(state: games.State, moves: str) -> None:
    for action in moves.split():
        state.apply(state.to_act()[0], action)


def test_bids_a_strong_hand_and_passes_a_weak_one() -> None:
    state = games.get("goodge").new_game(4, 1, deal=DEAL)
    choice = bot_choice(state)
    assert choice.startswith("bid:")
    state.apply(0, choice)
    # The Crown with four Clubs is worth a bid too.
    assert bot_choice(state) == "bid:55"
    state.apply(1, "bid:55")
    # Seat 2 has no Crown, no top card and no suit longer than three.
    assert bot_choice(state) == "pass"


def test_never_bids_above_its_estimate() -> None:
    state = games.get("goodge").new_game(4, 1, deal=DEAL)
    state.apply(0, "bid:200")
    play(state, "pass pass")
    assert bot_choice(state) == "pass"


def test_discards_low_side_cards_and_names_the_long_suit() -> None:
    state = games.get("goodge").new_game(4, 1, deal=DEAL)
    play(state, "bid:50 pass pass pass")
    discards = []
    for _ in range(3):
        choice = bot_choice(state)
        discards.append(choice)
        state.apply(0, choice)
    assert not {"1H", "10H", "9H", "8H", "2H", "1D", "1R"} & set(discards)
    assert bot_choice(state) == "trump:H"


def test_goodge_draws_trumps_with_its_top_trump() -> None:
    state = games.get("goodge").new_game(4, 1, deal=DEAL)
    play(state, "bid:50 pass pass pass 3S 3D 3C trump:H")
    assert bot_choice(state) == "1H"


def test_last_to_play_banks_its_own_points_and_ducks_what_it_cannot_win() -> None:
    state = games.get("goodge").new_game(4, 1, deal=DEAL)
    play(state, "bid:50 pass pass pass 3S 3D 3C trump:H")
    # Last to a pointless Spade trick, seat 3 wins it with the 1S: its 20 points are safe.
    play(state, "2S 4S 7S")
    assert bot_choice(state) == "1S"
    state.apply(3, "1S")
    # Leading, it cashes a top card: the 1C is the highest Club left.
    assert bot_choice(state) == "1C"
    # Seat 0 ruffs a later Spade lead; seat 1 cannot win, so it keeps its 5S (15 points).
    state = games.get("goodge").new_game(4, 1, deal=DEAL)
    play(state, "bid:50 pass pass pass 3S 3D 3C trump:H 2S 4S 7S 1S 9S 2H")
    assert bot_choice(state) == "6S"
