"""The `racer` reference bot for Game of Goof: a race that reads the table.

Goof is a race scored at the end of each round by the cards a seat put in
the area (+1 each) and the cards left in its goof pile (-2 each), so a
goof-line card that fits is worth about three points (it also uncovers a
goof-pile card) and a waste card one. The racer never waits while it can
act. It plays, in this order:

1. a goof-line card that fits (it empties the goof pile);
2. a waste-top or back-three card that opens a pile for one of its own
   goof-line cards (it helps empty the goof pile next tick);
3. any other card that fits;
4. else it turns three cards (it waits only when it can do nothing else).

What it adds to the `rules` bot is judgement within each step when seats
aim at one pile: in a tick, the first card to reach a pile takes it and the
other play fails, costing its seat the tick (nearly one play in nine fails
that way among `rules` bots). Each tick it predicts where every other seat
aims (as a greedy player does: a fitting goof-line card, else the waste
top, else the back-three card, at random among equals) and weighs each of
its plays by

    P(win the pile) * (value + what the others lose) - DEFER * P(pile still free next tick) * value

A play nobody else can make now keeps until the next tick, so it can wait;
a contested one is won now or lost, and winning it also takes the pile from
the seats that aimed there. An Ace starts a new pile and never collides.
Among plays of equal worth it prefers a card whose successor it also holds
face up, so it can follow up next tick. In other games it plays like the
`rules` bot.
"""

from __future__ import annotations

import random
from typing import cast

from bots.base import Bot, Turn
from bots.rules import RulesBot
from games import goof
from games.goof import GoofObservation, GoofTableau

Target = int | None
"""Where a play goes: a pile's id, or None for a new pile (an Ace)."""

LINE_VALUE = 3.0
"""A goof-line card played: +1 in the area and one card fewer in the goof pile (+2)."""
WASTE_VALUE = 1.0
"""A waste or back-three card played: +1 in the area."""
DEFER = 0.7
"""What a play still available next tick is worth now, as a share of its value."""
FOLLOW_UP = 0.01
"""A tie-breaker: a play whose successor the racer holds face up."""


def _card(card_id: str) -> int:
    """The card number of a card id on the table, its owner left out ("7H@2" -> that of 7H)."""
    return goof.card_of_id(card_id)[0]


def _tiers(entry: GoofTableau) -> list[list[int]]:
    """A seat's cards by the order a greedy seat plays them: its line, waste top, back three."""
    tiers = [[_card(card) for card in entry["line"]]]
    for top in (entry["waste_top"], entry["back_three"]):
        if top is not None:
            tiers.append([_card(top)])
    return tiers


def _visible(entry: GoofTableau) -> set[int]:
    """The cards a seat may play from now: its line, waste top and back-three card."""
    return {card for tier in _tiers(entry) for card in tier}


def _targets(card: int, waiting: dict[int, list[int]]) -> list[Target]:
    """Where `card` may go: a new pile for an Ace, else the piles waiting for it."""
    return [None] if goof.STARTS_PILE[card] else list(waiting.get(card, []))


def _aims(entry: GoofTableau, waiting: dict[int, list[int]]) -> dict[int, tuple[float, float]]:
    """Per pile, the chance a greedy seat aims there this tick and what the play is worth."""
    for number, cards in enumerate(_tiers(entry)):
        plays = [target for card in cards for target in _targets(card, waiting)]
        if plays:
            value = LINE_VALUE if number == 0 else WASTE_VALUE
            aims: dict[int, tuple[float, float]] = {}
            for target in plays:
                if target is not None:
                    chance, _ = aims.get(target, (0.0, value))
                    aims[target] = (chance + 1.0 / len(plays), value)
            return aims
    return {}


def _contest(
    target: int, others: list[dict[int, tuple[float, float]]]
) -> tuple[float, float, float]:
    """(chance to win `target`, chance another seat aims there, what the others stand to lose).

    The seats aiming at one pile are served in a random order, so with k
    rivals the racer wins with chance 1 / (k + 1).
    """
    rivals = [1.0]  # rivals[k]: the chance that exactly k other seats aim at `target`
    stake = 0.0
    for aims in others:
        chance, value = aims.get(target, (0.0, 0.0))
        stake += chance * value
        rivals = [
            (rivals[k] if k < len(rivals) else 0.0) * (1 - chance)
            + (rivals[k - 1] * chance if k > 0 else 0.0)
            for k in range(len(rivals) + 1)
        ]
    win = sum(share / (k + 1) for k, share in enumerate(rivals))
    return win, 1.0 - rivals[0], stake


def choose(turn: Turn, rng: random.Random) -> str:
    """The action for this Goof tick, from the observation and the legal notations."""
    plays = {action: play for action in turn.legal if (play := goof.play_of(action)) is not None}
    if not plays:
        return "turn" if "turn" in turn.legal else "wait"
    if len(plays) == 1:
        return next(iter(plays))
    # The engine (or the referee, from it) built the observation: the game's own type.
    observation = cast(GoofObservation, turn.observation)
    me = observation["tableau"][turn.seat]
    line = {_card(card) for card in me["line"]}
    waiting: dict[int, list[int]] = {}
    for pile in observation["piles"]:
        follow = goof.NEXT_IN_PILE[_card(pile["top"])]
        if follow is not None:
            waiting.setdefault(follow, []).append(pile["id"])
    others = [
        _aims(entry, waiting) for entry in observation["tableau"] if entry["seat"] != turn.seat
    ]
    mine = _visible(me)

    def worth(action: str) -> tuple[int, float, float]:
        card, target = plays[action]
        follow = goof.NEXT_IN_PILE[card]
        value = LINE_VALUE if card in line else WASTE_VALUE
        step = 0 if card in line else 1 if follow is not None and follow in line else 2
        if target is None:
            win, contested, stake = 1.0, 0.0, 0.0
        else:
            win, contested, stake = _contest(target, others)
        # What the others lose counts against each of them, so it is shared out.
        now = win * (value + stake / max(1, len(others)))
        later = DEFER * (1.0 - contested) * value
        bonus = FOLLOW_UP if follow is not None and follow in mine else 0.0
        return (-step, now - later + bonus, rng.random())

    return max(plays, key=worth)


class RacerBot(Bot):
    """Plays Goof as a race (see the module docstring); other games like `rules`."""

    name = "racer"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self._rules = RulesBot(seed)

    def act(self, turn: Turn) -> str:
        if turn.game == goof.SPEC_NAME:
            return choose(turn, self.rng)
        return self._rules.act(turn)
