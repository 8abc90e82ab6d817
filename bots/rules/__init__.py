"""The `rules` reference bot: a rule-based player for each game."""

from __future__ import annotations

import random
from collections.abc import Callable

import games
from bots.base import Bot, Turn
from bots.rules import golden10, goodge, goof

CHOOSERS: dict[str, Callable[[Turn, random.Random], str]] = {
    games.goodge.SPEC_NAME: goodge.choose,
    games.golden10.SPEC_NAME: golden10.choose,
    games.goof.SPEC_NAME: goof.choose,
}
"""Per game, by its name: the function that picks the bot's action."""


class RulesBot(Bot):
    """Plays each game by a few sound rules of thumb (see each module)."""

    name = "rules"

    def act(self, turn: Turn) -> str:
        return CHOOSERS[turn.game](turn, self.rng)
