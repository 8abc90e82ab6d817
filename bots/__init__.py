"""The Python bot SDK and the reference bots.

A bot subclasses `bots.Bot` and implements `act(turn) -> str`. Reference
bots are found by name with `bots.reference(name, seed)`: `random` for every
game, `rules` (a rule-based bot per game).
"""

from __future__ import annotations

from bots.base import Bot, Turn
from bots.random_bot import RandomBot
from bots.rules import RulesBot

__all__ = ["REFERENCE_BOTS", "Bot", "RandomBot", "RulesBot", "Turn", "reference"]

REFERENCE_BOTS: dict[str, type[Bot]] = {"random": RandomBot, "rules": RulesBot}


def reference(name: str, seed: int | None = None) -> Bot:
    """A new reference bot called `name`, with its own seeded RNG."""
    try:
        return REFERENCE_BOTS[name](seed)
    except KeyError:
        raise ValueError(
            f"no reference bot called {name!r}; reference bots are: {', '.join(REFERENCE_BOTS)}"
        ) from None
