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
from typing import cast

from bots.base import Turn
from games import goof
from games.goof import GoofObservation


def choose(turn: Turn, rng: random.Random) -> str:
    """The action for this tick, from the observation and the legal notations."""
    # The engine (or the referee, from it) built the observation: the game's own type.
    me = cast(GoofObservation, turn.observation)["tableau"][turn.seat]
    # Card ids carry the owner ("7H@2"); actions name the card alone ("7H>p3").
    line = {goof.card_of_id(card)[0] for card in me["line"]}
    tiers: list[set[int]] = [line]
    for top in (me["waste_top"], me["back_three"]):
        if top is not None:
            tiers.append({goof.card_of_id(top)[0]})
    plays = [
        (action, play[0]) for action in turn.legal if (play := goof.play_of(action)) is not None
    ]
    for cards in tiers:
        fitting = [action for action, card in plays if card in cards]
        if fitting:
            return rng.choice(fitting)
    return "turn" if "turn" in turn.legal else "wait"
