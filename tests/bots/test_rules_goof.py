"""The Goof rules bot: its priorities, and that it clearly beats random play."""

from __future__ import annotations

import random
from math import comb
from typing import Any

from bots import RandomBot, RulesBot
from bots.base import Turn
from bots.local import play_game
from bots.rules import goof as rules_goof

GAMES = 200


def turn(legal: list[str], line: list[str], waste_top: str | None, back: str | None) -> Turn:
    me: dict[str, Any] = {"line": line, "waste_top": waste_top, "back_three": back}
    other: dict[str, Any] = {"line": ["AS@0"], "waste_top": None, "back_three": None}
    return Turn("goof", 1, 2, {"tableau": [other, me]}, tuple(legal))


def test_line_cards_first_then_waste_top_then_back_three_then_turn() -> None:
    rng = random.Random(1)
    line = ["7H@1", "KS@1", "2C@1", "9D@1"]
    legal = ["8S>p1", "2C>p4", "turn", "wait"]
    assert rules_goof.choose(turn(legal, line, "8S@1", None), rng) == "2C>p4"
    legal = ["5D>p0", "8S>p1", "turn", "wait"]
    assert rules_goof.choose(turn(legal, line, "8S@1", "5D@1"), rng) == "8S>p1"
    assert rules_goof.choose(turn(["5D>p0", "turn", "wait"], line, "8S@1", "5D@1"), rng) == "5D>p0"
    assert rules_goof.choose(turn(["turn", "wait"], line, "8S@1", None), rng) == "turn"
    assert rules_goof.choose(turn(["wait"], line, None, None), rng) == "wait"


def binomial_tail(successes: int, trials: int, p: float) -> float:
    """P(X >= successes) for X ~ Binomial(trials, p)."""
    return sum(
        comb(trials, k) * p**k * (1 - p) ** (trials - k) for k in range(successes, trials + 1)
    )


def test_rules_beats_random() -> None:
    firsts = 0
    for game in range(GAMES):
        players = 2 + game % 3
        seat = game // 3 % players
        bots = [RulesBot(game) if s == seat else RandomBot(1000 * game + s) for s in range(players)]
        state = play_game("goof", bots, seed=game, options={"rounds": 1})
        firsts += state.result().ranks[seat] == 1
    # Chance is 1/players (at most 1/2 here); test against the largest.
    assert binomial_tail(firsts, GAMES, 0.5) < 0.001, f"rules ranked first {firsts}/{GAMES}"
