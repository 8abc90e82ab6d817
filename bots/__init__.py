"""The Python bot SDK and the reference bots.

A bot subclasses `bots.Bot` and implements `act(turn) -> str`. Reference
bots are found by name with `bots.reference(name, seed)`: `random` for every
game, `rules` (a rule-based bot per game), `search` (determinized Monte Carlo
for Goodge and Golden 10, see bots/search.py) and `racer` (Goof as a race,
see bots/racer.py).
"""

from __future__ import annotations

import importlib

from bots.base import Bot, Turn
from bots.racer import RacerBot
from bots.random_bot import RandomBot
from bots.rules import RulesBot
from bots.search import SearchBot

__all__ = [
    "REFERENCE_BOTS",
    "Bot",
    "RacerBot",
    "RandomBot",
    "RulesBot",
    "SearchBot",
    "Turn",
    "load",
    "reference",
]

REFERENCE_BOTS: dict[str, type[Bot]] = {
    "random": RandomBot,
    "rules": RulesBot,
    "search": SearchBot,
    "racer": RacerBot,
}


def reference(name: str, seed: int | None = None) -> Bot:
    """A new reference bot called `name`, with its own seeded RNG."""
    try:
        return REFERENCE_BOTS[name](seed)
    except KeyError:
        raise ValueError(
            f"no reference bot called {name!r}; reference bots are: {', '.join(REFERENCE_BOTS)}"
        ) from None


def load(spec: str, seed: int | None = None, search_budget_s: float | None = None) -> Bot:
    """A reference bot by name, or `module:Class` of an author's own Bot subclass.

    The class is called with the seed as its only argument, like the
    reference bots. `search_budget_s` is the search bot's thinking time per
    move (None: its default, ARENA_SEARCH_BUDGET_S or 0.2 s).
    """
    if ":" not in spec:
        known = reference(spec, seed)
        if search_budget_s is not None and isinstance(known, SearchBot):
            known.time_budget_s = search_budget_s
        return known
    module_name, _, class_name = spec.partition(":")
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as error:
        raise ValueError(f"cannot load bot {spec!r}: {error}") from None
    if not (isinstance(cls, type) and issubclass(cls, Bot)):
        raise ValueError(f"{spec!r} is not a subclass of bots.Bot")
    bot: Bot = cls(seed)
    return bot
