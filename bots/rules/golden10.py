"""Rule-of-thumb play for Golden 10: keep red points away, catch the yellow 10 when safe.

Works only from the observation (hand, this round's tricks, the current trick)
and the legal notations. The rules, in order of priority:

- Leading: lead the card least likely to win: one with unseen higher cards of
  its colour and as few unseen lower ones as possible, low before high.
- Following: take the yellow 10 when the trick holds fewer than 10 red points
  and nobody after can beat the card; otherwise duck under the current winner
  with the highest card that still loses (a red 10 or red 5 first); if every
  card wins, play the highest when last or when the trick is free of points,
  else the lowest, hoping a later player goes over.
- Void in the led colour: throw the red 10, then the red 5, then the highest
  card (reds first among equals), keeping the yellow 10 for later.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from typing import cast

from bots.base import Turn
from games import golden10
from games.golden10 import Golden10Observation

_RED = golden10.COLOURS[0]
"""The colour whose cards cost points."""


@dataclass(frozen=True)
class _Card:
    """A card read from its notation by the engine, e.g. ``"10Y"`` is rank 10, colour Y."""

    number: int
    """The engine's card number."""

    @property
    def rank(self) -> int:
        return golden10.RANK_OF[self.number]

    @property
    def colour(self) -> str:
        return golden10.COLOURS[golden10.COLOUR_OF[self.number]]

    @property
    def name(self) -> str:
        return str(golden10.CARDS[self.number])

    @property
    def points(self) -> int:
        """Red points: 1 per red card, 5 for the red 5, 10 for the red 10."""
        return golden10.CARD_POINTS[self.number]


_DECK = frozenset(_Card(number) for number in range(golden10.DECK_SIZE))
_YELLOW_10 = _Card(golden10.YELLOW_10)


def _read(name: str) -> _Card:
    return _Card(golden10.TABLE.parse(name))


def choose(turn: Turn, rng: random.Random) -> str:
    """The card to play, one of `turn.legal` (deterministic: `rng` is not needed)."""
    # The engine (or the referee, from it) built the observation: the game's own type.
    observation = cast(Golden10Observation, turn.observation)
    legal = [_read(name) for name in turn.legal]
    trick = [(seat, _read(name)) for seat, name in observation["trick"]]
    seen = {_read(name) for name in observation["hand"]}
    for past in observation["tricks"]:
        seen.update(_read(name) for _, name in past["cards"])
    seen.update(card for _, card in trick)
    unseen = _DECK - seen
    if not trick:
        return _lead(legal, unseen).name
    led = trick[0][1].colour
    if legal[0].colour != led:
        return _discard(legal).name
    last = len(trick) == turn.players - 1
    return _follow(legal, [card for _, card in trick], led, last, unseen).name


def _lead(legal: list[_Card], unseen: frozenset[_Card]) -> _Card:
    def risk(card: _Card) -> tuple[bool, int, int]:
        same = [other.rank for other in unseen if other.colour == card.colour]
        higher = sum(1 for rank in same if rank > card.rank)
        lower = len(same) - higher
        return (higher == 0, lower, card.rank)

    return min(legal, key=risk)


def _follow(
    legal: list[_Card], trick: list[_Card], led: str, last: bool, unseen: frozenset[_Card]
) -> _Card:
    best = trick[golden10.best_in_trick([card.number for card in trick])].rank
    points = sum(card.points for card in trick)
    below = [card for card in legal if card.rank < best]
    above = [card for card in legal if card.rank > best]
    # Nobody after us can go over `card` if no unseen card of the colour ranks higher.
    safe = [
        card
        for card in above
        if last or not any(other.colour == led and other.rank > card.rank for other in unseen)
    ]
    if _YELLOW_10 in safe and points < 10:
        return _YELLOW_10
    if _YELLOW_10 in trick and safe:
        taker = _cheapest_high(safe)
        if points + taker.points < 10:
            return taker
    if below:
        keep_yellow = [card for card in below if card != _YELLOW_10] or below
        return max(keep_yellow, key=lambda card: (card.points, card.rank))
    if last or points == 0:
        return _cheapest_high(above)
    return min(above, key=lambda card: (card.points, card.rank))


def _cheapest_high(cards: Iterable[_Card]) -> _Card:
    """The highest card among those adding the fewest points to a trick we take."""
    return min(cards, key=lambda card: (card.points, -card.rank))


def _discard(legal: list[_Card]) -> _Card:
    others = [card for card in legal if card != _YELLOW_10] or legal
    return max(others, key=lambda card: (max(card.points - 1, 0), card.rank, card.colour == _RED))
