"""The `racer` reference bot for Game of Goof: as fast as the rules allow.

Goof is a race scored at the end of each round by the cards a seat put in
the area (+1 each) and the cards left in its goof pile (-2 each), so a
goof-line card that fits is worth about three points (it also uncovers a
goof-pile card) and any other card one. Every tick the racer:

1. plays a goof-line card that fits, Aces first (a new pile never collides);
2. else the waste top, else the back-three card;
3. else turns three cards; it waits only when it can do nothing else.

Among plays of the same kind it first plays a card that another seat could
also put on that pile this tick (the same card of their deck, face up in
their line, waste top or back-three card): that chance goes if it waits,
while a card nobody else can play stays playable next tick. Then a card
whose successor it also holds face up, so it can follow up next tick.
In other games it plays like the `rules` bot.
"""

from __future__ import annotations

import random
from typing import Any

from bots.base import Bot, Turn
from bots.rules import RulesBot

_RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")


def _next_card(card: str) -> str | None:
    """The card that goes on `card` in a pile ("7H" -> "8H"; None for a King)."""
    rank, suit = card[:-1], card[-1]
    index = _RANKS.index(rank)
    return None if index == len(_RANKS) - 1 else _RANKS[index + 1] + suit


def _visible(entry: dict[str, Any]) -> set[str]:
    """The cards a seat may play from now: its line, waste top and back-three card."""
    cards = {card.partition("@")[0] for card in entry["line"]}
    for key in ("waste_top", "back_three"):
        if entry[key] is not None:
            cards.add(entry[key].partition("@")[0])
    return cards


def choose(turn: Turn, rng: random.Random) -> str:
    """The action for this Goof tick, from the observation and the legal notations."""
    plays = [action for action in turn.legal if ">" in action]
    if not plays:
        return "turn" if "turn" in turn.legal else "wait"
    observation = turn.observation
    me = observation["tableau"][turn.seat]
    line = {card.partition("@")[0] for card in me["line"]}
    waste_top = me["waste_top"].partition("@")[0] if me["waste_top"] else None
    mine = _visible(me)
    # What the others could aim at each pile this tick: the card a pile waits for.
    wanted: dict[str, int] = {}
    for entry in observation["tableau"]:
        if entry["seat"] != turn.seat:
            for card in _visible(entry):
                wanted[card] = wanted.get(card, 0) + 1

    def key(action: str) -> tuple[int, bool, int, int, float]:
        card, _, target = action.partition(">")
        tier = 0 if card in line else 1 if card == waste_top else 2
        # A card others can also play must go now or never; an uncontested one keeps.
        contention = 0 if target == "new" else wanted.get(card, 0)
        follow = _next_card(card)
        chain = 1 if follow is not None and follow in mine else 0
        return (tier, target != "new", -contention, -chain, rng.random())

    return min(plays, key=key)


class RacerBot(Bot):
    """Plays Goof as a race (see the module docstring); other games like `rules`."""

    name = "racer"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self._rules = RulesBot(seed)

    def act(self, turn: Turn) -> str:
        if turn.game == "goof":
            return choose(turn, self.rng)
        return self._rules.act(turn)
