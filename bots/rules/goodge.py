"""Rule-based play for The Goodge Rules, from the observation and legal notations only.

- Bidding: estimate the points the hand would take as Goodge with its best trump
  (trump length and top trumps, the Crown, side-suit top cards) and bid the
  lowest allowed bid while it stays under that estimate; otherwise pass.
- Discards: keep trumps, the Crown and the top card of each suit; throw low
  cards of short side suits, to make voids for ruffing.
- Trump: the suit with the best estimate.
- Tricks: the Goodge leads top trumps to draw the others' trumps; anyone leads
  a card that is the highest left in its suit, else a low card of a long side
  suit. Following, win with the cheapest card that surely wins when points
  are at stake (or when last to play), ruff rich tricks, and otherwise give
  the lowest, pointless card.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from typing import cast

from bots.base import Turn
from games import goodge
from games.goodge import SUITS, GoodgeObservation, GoodgeOptions

# Points a Goodge takes, fitted by least squares on forced-Goodge rounds among rules
# bots (3 and 4 players): a base, plus per Crown, trump, trump point and side top card.
BASE = 25.0
PER_CROWN = 55.0
PER_TRUMP = 13.0
PER_TRUMP_POINT = 0.3
PER_SIDE_TOP = 19.0
# A seat that does not bid expects about 45 points as a defender: bid only with a
# clear margin, which also keeps the chance of making the bid near 3 in 4.
MARGIN = 25


@dataclass(frozen=True)
class Card:
    """A card read from its notation by the engine; the Crown has suit ''."""

    name: str
    suit: str
    number: int
    """The engine's card number, for its tables."""

    @property
    def points(self) -> int:
        """What the card scores."""
        return goodge.POINTS[self.number]


def card(name: str) -> Card:
    """Read `1S` .. `10C` or `CR`."""
    number = goodge.CARD_INDEX[name]
    suit = "" if number == goodge.CROWN else SUITS[goodge.SUIT_OF[number]]
    return Card(name, suit, number)


_DECK = [card(name) for name in goodge.CARD_NAMES]
_SUIT_CARDS = {suit: [c for c in _DECK if c.suit == suit] for suit in SUITS}
_CROWN = _DECK[goodge.CROWN]


def _suit_letter(suit: int) -> str | None:
    """The letter of an engine suit number; None for none (-1, before trump is named)."""
    return SUITS[suit] if suit >= 0 else None


class Knowledge:
    """What one seat knows about the cards in a round, and how cards compare."""

    def __init__(self, observation: GoodgeObservation) -> None:
        self.one_high = GoodgeOptions.of(observation["options"]).one_high
        self.strengths = goodge.strength_table(self.one_high)
        self.hand = [card(name) for name in observation["hand"]]
        self.trump: str | None = observation["trump"]
        self.trump_suit = SUITS.index(self.trump) if self.trump else -1
        played: set[str] = set(observation["hand"])
        self.suit_leads = dict.fromkeys(SUITS, 0)
        for trick in observation["tricks"]:
            first = card(trick["cards"][0][1])
            led = _suit_letter(goodge.lead_suit(first.number, self.trump_suit)) or ""
            self.suit_leads[led] = self.suit_leads.get(led, 0) + 1
            played.update(name for _, name in trick["cards"])
        played.update(name for _, name in observation["trick"])
        played.update(observation["stash"] or ())
        self.seen = played

    def strength(self, c: Card) -> int:
        """Order inside a suit, higher wins (the engine's, by `one_high`)."""
        return self.strengths[c.number]

    def power(self, c: Card) -> int:
        """Overall worth as a trick winner: the Crown, then trumps, then the rest."""
        if c.suit == "":
            return 100
        return self.strength(c) + (40 if c.suit == self.trump else 0)

    def unseen_above(self, c: Card) -> int:
        """How many cards of c's suit that beat c are still unseen (in others' hands)."""
        if c.suit == "":
            return 0
        mine = self.strength(c)
        return sum(
            1
            for other in _SUIT_CARDS[c.suit]
            if other.name not in self.seen and self.strength(other) > mine
        )

    def is_master(self, c: Card) -> bool:
        """True if no unseen card of its suit beats it (the Crown always is)."""
        return self.unseen_above(c) == 0

    def unseen_trumps(self) -> int:
        """Trumps (with the Crown) that others may still hold."""
        if self.trump is None:
            return 0
        count = sum(1 for c in _SUIT_CARDS[self.trump] if c.name not in self.seen)
        return count + (_CROWN.name not in self.seen)


def estimate(cards: Iterable[Card], trump: str, one_high: bool) -> float:
    """The points a hand is expected to take as Goodge with `trump`."""
    strength = goodge.strength_table(one_high)
    top = max(strength)
    value = BASE
    for c in cards:
        if c.suit == "":
            value += PER_CROWN
        elif c.suit == trump:
            # The small term only breaks ties between suits of equal length. It was fitted
            # on the rank with a high 1 as 11: the strength, plus one when the 1 is high.
            order = strength[c.number] + one_high
            value += PER_TRUMP + PER_TRUMP_POINT * c.points + 0.1 * order
        elif strength[c.number] == top:
            value += PER_SIDE_TOP
    return value


def best_trump(cards: list[Card], one_high: bool) -> tuple[str, float]:
    """The trump suit with the best estimate, and that estimate in points."""
    best = max(SUITS, key=lambda s: (estimate(cards, s, one_high), s))
    return best, estimate(cards, best, one_high)


def choose(turn: Turn, rng: random.Random) -> str:
    """Pick one of `turn.legal` for a Goodge turn."""
    # The engine (or the referee, from it) built the observation: the game's own type.
    obs = cast(GoodgeObservation, turn.observation)
    phase = obs["phase"]
    if len(turn.legal) == 1:
        return turn.legal[0]
    if phase == "bid":
        return _bid(turn, obs)
    know = Knowledge(obs)
    if phase == "discard":
        return _discard(turn, know)
    if phase == "trump":
        trump, _ = best_trump(know.hand, know.one_high)
        return next(name for name in turn.legal if goodge.named_trump(name) == trump)
    return _play(turn, obs, know)


def _bid(turn: Turn, obs: GoodgeObservation) -> str:
    cards = [card(name) for name in obs["hand"]]
    _, estimate = best_trump(cards, GoodgeOptions.of(obs["options"]).one_high)
    bids = [(value, name) for name in turn.legal if (value := goodge.bid_value(name)) is not None]
    if bids and bids[0][0] <= estimate - MARGIN:
        return bids[0][1]
    return "pass"


def _discard(turn: Turn, know: Knowledge) -> str:
    trump, _ = best_trump(know.hand, know.one_high)
    length = {s: sum(1 for c in know.hand if c.suit == s) for s in SUITS}

    def keep(c: Card) -> float:
        if c.suit in ("", trump):
            return 1000.0
        if know.is_master(c):
            return 500.0 + c.points
        return know.strength(c) + 4 * length[c.suit]

    return min((card(name) for name in turn.legal), key=lambda c: (keep(c), c.name)).name


def _play(turn: Turn, obs: GoodgeObservation, know: Knowledge) -> str:
    legal = [card(name) for name in turn.legal]
    if not obs["trick"]:
        return _lead(legal, know, obs["goodge"] == turn.seat).name
    return _follow(turn, obs, legal, know).name


def _lead(legal: list[Card], know: Knowledge, goodge: bool) -> Card:
    trumps = [c for c in legal if c.suit in ("", know.trump)]
    if goodge and trumps and know.unseen_trumps():
        # Drawing the others' trumps protects the Goodge's side-suit winners.
        top = max(trumps, key=know.power)
        if know.is_master(top):
            return top
        if len(trumps) >= 4:
            return min(trumps, key=know.power)
    side = [c for c in legal if c.suit not in ("", know.trump)]
    masters = [c for c in side if know.is_master(c) and know.suit_leads.get(c.suit, 0) < 2]
    if masters:
        return max(masters, key=lambda c: (c.points, know.strength(c)))
    pool = side or legal
    length = {s: sum(1 for c in legal if c.suit == s) for s in SUITS}
    return min(pool, key=lambda c: (c.points > 0, -length.get(c.suit, 0), know.power(c), c.name))


def _follow(turn: Turn, obs: GoodgeObservation, legal: list[Card], know: Knowledge) -> Card:
    table = [card(name) for _, name in obs["trick"]]
    lead_suit = goodge.lead_suit(table[0].number, know.trump_suit)
    lead = _suit_letter(lead_suit)
    table_points = sum(c.points for c in table)
    last = len(table) == turn.players - 1
    power = goodge.power_table(know.trump_suit, lead_suit, know.one_high)
    winning = table[goodge.best_in_trick([c.number for c in table], power)]
    winners = [c for c in legal if power[c.number] > power[winning.number]]
    dump = min(
        legal, key=lambda c: (c.points, c.suit in ("", know.trump), know.strength(c), c.name)
    )
    if not winners:
        return dump
    plain = [c for c in winners if c.suit != ""]
    crown_worth = table_points >= 25 or len(know.hand) <= 2
    pool = plain if plain and not crown_worth else winners
    if last:
        choice = max(pool, key=lambda c: (c.points, -know.power(c)))
        if table_points + choice.points > 0 or choice.suit != know.trump:
            return choice
        return dump
    sure = [
        c
        for c in pool
        if c.suit == ""
        or (c.suit == know.trump and know.is_master(c))
        or (c.suit == lead and know.is_master(c) and know.suit_leads.get(lead or "", 0) < 2)
    ]
    if sure and (table_points > 0 or max(c.points for c in sure) > 0):
        return max(sure, key=lambda c: (c.points, -know.power(c)))
    ruffs = [c for c in pool if c.suit == know.trump and lead != know.trump]
    if ruffs and table_points >= 15:
        return min(ruffs, key=know.power)
    return dump
