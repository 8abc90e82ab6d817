"""The `rules` reference bot: a rule-based player for each game."""

from __future__ import annotations

from bots.base import Bot, Turn
from bots.rules import golden10, goodge, goof

_BY_GAME = {"goodge": goodge.choose, "golden10": golden10.choose, "goof": goof.choose}


class RulesBot(Bot):
    """Plays each game by a few sound rules of thumb (see each module)."""

    name = "rules"

    def act(self, turn: Turn) -> str:
        return _BY_GAME[turn.game](turn, self.rng)
