"""The rules bot for Game of Goof: always do the most useful thing at once.

Goof is a race, so the bot never waits while it can act. In order:
1. a goof-line card that fits (each one played uncovers a goof-pile card,
   which is how a round is won);
2. the waste top, then the back-three card (they keep the waste moving);
3. turn three more cards;
4. wait (only when its stock, waste and plays are all gone).
Among equally good plays it picks one at random, so that two copies of the
bot do not always aim at the same pile.
"""

from __future__ import annotations

import random

from bots.base import Turn


def choose(turn: Turn, rng: random.Random) -> str:
    """The action for this tick, from the observation and the legal notations."""
    me = turn.observation["tableau"][turn.seat]
    # Card ids carry the owner ("7H@2"); actions name the card alone ("7H>p3").
    line = {card.partition("@")[0] for card in me["line"]}
    tiers: list[set[str]] = [line]
    for key in ("waste_top", "back_three"):
        if me[key] is not None:
            tiers.append({me[key].partition("@")[0]})
    plays = [action for action in turn.legal if ">" in action]
    for cards in tiers:
        fitting = [action for action in plays if action.partition(">")[0] in cards]
        if fitting:
            return rng.choice(fitting)
    return "turn" if "turn" in turn.legal else "wait"
