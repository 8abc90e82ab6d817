"""The Goodge Rules: bid for points, take the Stash, name trump, play tricks.

Cards are small ints: suit * 10 + (rank - 1) for the five suits S, D, R, H, C
(0..49) and 50 for the Crown. A hand is a 51-bit mask (whether it holds a card,
or can follow, is one intersection), and beside it the same cards as card
actions in six lists, one per suit and one for the Crown: a legal-action list is
a copy of one of them, or all six joined. A card played costs two or three
operations on the mask (Python ints above 30 bits are slower than smaller ones).

Actions (`str(action)` is the notation): a card id (`1S` .. `10C`, `CR`) is a
discard in the discard phase and a play in the trick phase; `bid:50` ..
`bid:250` in steps of 5; `pass`; `trump:S` .. `trump:C`.

`deal` (fixes the first round only; later rounds are shuffled from the RNG)::

    {"hands": [[card ids of seat 0], [seat 1], ...],   # 16 each (3 players), 12 (4)
     "stash": [3 card ids],
     "dealer": 2}                                       # optional; else drawn

Every one of the 51 cards must appear exactly once across hands and stash.
The first dealer is always drawn from the RNG (so the RNG stream does not
depend on the deal) and then replaced by `deal["dealer"]` when given.

Decisions where the rules leave room (see docs/rules/goodge.md):
- `all_pass="redeal"`: nobody scores, the round counts toward `max_rounds`,
  and the next round is dealt by the next seat, as after any round.
- Once the game is over every card is turned face up: nothing is hidden.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypedDict

from games.core import (
    JSON,
    Action,
    ActionTable,
    GameLog,
    GameSpec,
    IllegalAction,
    OptionSpec,
    Result,
    SeatEntry,
    bool_option,
    choice_option,
    copy_state,
    int_option,
    option_choice,
    option_value,
    rank_scores,
    shuffle,
)
from games.hidden import assign_hidden

SPEC_NAME: Final = "goodge"
SUITS = "SDRHC"
SUIT_NAMES = ("Spades", "Diamonds", "Stars", "Hearts", "Clubs")
CROWN = 50
DECK_SIZE = 51
STASH_SIZE = 3
TARGET = 500
TOTAL_POINTS = 250
MIN_BID = 50
BID_STEP = 5

CARD_NAMES: tuple[str, ...] = (
    *(f"{rank}{suit}" for suit in SUITS for rank in range(1, 11)),
    "CR",
)
BID_VALUES: tuple[int, ...] = tuple(range(MIN_BID, TOTAL_POINTS + 1, BID_STEP))

FIRST_BID = DECK_SIZE
PASS = FIRST_BID + len(BID_VALUES)
FIRST_TRUMP = PASS + 1


class GoodgeAction(Action):
    """One Goodge action: a card (discard or play), a bid, `pass` or a trump."""

    __slots__ = ()


TABLE = ActionTable(
    GoodgeAction,
    [
        *CARD_NAMES,
        *(f"bid:{value}" for value in BID_VALUES),
        "pass",
        *(f"trump:{s}" for s in SUITS),
    ],
)
_A = TABLE.actions

# Phases, as small ints for the hot path; PHASE_NAMES gives the observation text.
BID, DISCARD, TRUMP, PLAY, OVER = range(5)
Phase = Literal["bid", "discard", "trump", "play", "over"]
PHASE_NAMES: tuple[Phase, ...] = ("bid", "discard", "trump", "play", "over")
AllPass = Literal["dealer_50", "redeal"]
ALL_PASS: tuple[AllPass, ...] = ("dealer_50", "redeal")

CROWN_BIT = 1 << CROWN
_BIT: tuple[int, ...] = tuple(1 << card for card in range(DECK_SIZE))
SUIT_MASKS: tuple[int, ...] = tuple(0x3FF << (10 * suit) for suit in range(5))
SUIT_OF: tuple[int, ...] = (*(card // 10 for card in range(CROWN)), -1)
RANK_OF: tuple[int, ...] = (*(card % 10 + 1 for card in range(CROWN)), 0)
POINTS: tuple[int, ...] = (*({1: 20, 5: 15, 10: 10}.get(r, 0) for r in RANK_OF[:CROWN]), 25)
# Strength inside a suit (higher wins); the Crown never needs one.
STRENGTH_ONE_HIGH: tuple[int, ...] = (*(10 if r == 1 else r - 1 for r in RANK_OF[:CROWN]), 0)
STRENGTH_TEN_HIGH: tuple[int, ...] = RANK_OF
CROWN_SLOT = 5
"""A hand's card lists are one per suit (0..4), then this one for the Crown."""
_SLOT: tuple[int, ...] = (*SUIT_OF[:CROWN], CROWN_SLOT)
# For each suit and each 10-bit pattern of that suit's cards: the card actions.
_SUIT_ACTIONS: tuple[tuple[tuple[Action, ...], ...], ...] = tuple(
    tuple(tuple(_A[10 * suit + i] for i in range(10) if bits >> i & 1) for bits in range(1024))
    for suit in range(5)
)
# Legal bidding lists, by the index of the lowest bid allowed (len(BID_VALUES): only pass).
_BID_LISTS: tuple[tuple[Action, ...], ...] = tuple(
    (*_A[FIRST_BID + low : PASS], _A[PASS]) for low in range(len(BID_VALUES) + 1)
)
_TRUMP_LIST: tuple[Action, ...] = _A[FIRST_TRUMP : FIRST_TRUMP + 5]
_S0, _S1, _S2, _S3, _S4 = _SUIT_ACTIONS
_SEAT_TUPLES: tuple[tuple[int], ...] = tuple((seat,) for seat in range(8))
# `_MOVES[seat][action]` is the `(seat, action)` pair the move log keeps: shared, as
# allocating one per move costs more than the rest of a move's bookkeeping (and
# feeds the garbage collector).
_MOVES: tuple[tuple[tuple[int, Action], ...], ...] = tuple(
    tuple((seat, action) for action in _A) for seat in range(8)
)
# `_PLAY[action]`: what the play path needs of an action, in one lookup (indexing by
# an action, an int subclass, takes CPython's slower path): its bit in a hand mask,
# its hand list (`_SLOT`), its points, and its move-log pair for each seat. An action
# that is no card has a bit beyond the deck, which no hand holds, so it goes no further.
_PLAY: tuple[tuple[int, int, int, tuple[tuple[int, Action], ...]], ...] = tuple(
    (
        1 << action,
        _SLOT[action] if action < DECK_SIZE else -1,
        POINTS[action] if action < DECK_SIZE else 0,
        tuple(_MOVES[seat][action] for seat in range(8)),
    )
    for action in range(len(TABLE))
)

CARD_INDEX: dict[str, int] = {name: card for card, name in enumerate(CARD_NAMES)}
"""The card number of each card id (`"10S"` -> 9, `"CR"` -> 50)."""

assert sum(POINTS) == TOTAL_POINTS


@dataclass(frozen=True)
class GoodgeOptions:
    """The rules options of one game, typed; `of` reads them from the resolved dict.

    Options travel as a dict (requests, logs and observations keep their JSON
    form); the engine and anyone reading an observation's `options` use this.
    """

    one_high: bool
    all_pass: AllPass
    max_rounds: int

    @classmethod
    def of(cls, values: Mapping[str, object]) -> GoodgeOptions:
        """The options of `values`, a dict from `SPEC.resolve_options` (or an observation)."""
        return cls(
            one_high=option_value(values, "one_high", bool),
            all_pass=option_choice(values, "all_pass", ALL_PASS),
            max_rounds=option_value(values, "max_rounds", int),
        )


class GoodgeTrick(TypedDict):
    """A finished trick of the round, as an observation shows it."""

    leader: int
    cards: list[SeatEntry]
    """`[seat, card id]` in play order."""
    winner: int
    points: int


class GoodgeRedeal(TypedDict):
    """`last_round` after a round everyone passed with `all_pass="redeal"`."""

    round: int
    redeal: Literal[True]
    deltas: list[int]


class GoodgeRoundScored(TypedDict):
    """`last_round` after a round played out: the Goodge's bid, made or not, and the points."""

    round: int
    redeal: Literal[False]
    goodge: int
    bid: int
    made: bool
    points: list[int]
    deltas: list[int]


GoodgeRoundEnd = GoodgeRedeal | GoodgeRoundScored


class GoodgePublicObservation(TypedDict):
    """What every seat, and a spectator, may see: no hand, nothing of the Stash but its size."""

    game: Literal["goodge"]
    players: int
    round: int
    dealer: int
    scores: list[int]
    phase: Phase
    to_act: int | None
    options: dict[str, JSON]
    """The resolved options; `GoodgeOptions.of` reads them typed."""
    target: int
    hand_sizes: list[int]
    bids: list[SeatEntry]
    """`[seat, "bid:55" or "pass"]` in bidding order."""
    passed: list[int]
    high_bid: int | None
    high_bidder: int | None
    goodge: int | None
    bid: int | None
    trump: str | None
    stash_size: int
    tricks: list[GoodgeTrick]
    trick: list[SeatEntry]
    """The trick in progress: `[seat, card id]` in play order."""
    lead_suit: str | None
    taken: list[int]
    tricks_won: list[int]
    last_round: GoodgeRoundEnd | None


class GoodgeObservation(GoodgePublicObservation):
    """What one seat knows (docs/rules/goodge.md describes every key)."""

    seat: int
    hand: list[str]
    stash: list[str] | None
    """The Stash's cards, to the Goodge after the pick-up and to all once the game is over."""


# -- rules helpers, for the engine and for anyone reading an observation -------


def card_points(name: str) -> int:
    """What the card with id `name` scores (the 1s 20, 5s 15, 10s 10, the Crown 25)."""
    return POINTS[CARD_INDEX[name]]


def strength_table(one_high: bool) -> tuple[int, ...]:
    """Each card's strength inside its suit (higher wins), by the `one_high` option."""
    return STRENGTH_ONE_HIGH if one_high else STRENGTH_TEN_HIGH


def lead_suit(first: int, trump: int) -> int:
    """The suit a trick led with card `first` must follow: a Crown led makes it trump."""
    return trump if first == CROWN else SUIT_OF[first]


def _follow_mask(lead: int, trump: int) -> int:
    """The cards that follow `lead`: its suit, and the Crown when trump is led."""
    return SUIT_MASKS[lead] | (CROWN_BIT if lead == trump else 0)


TRUMP_POWER = 20
"""A trump's power is this plus its strength (1 .. 10): above every card of the lead suit."""
CROWN_POWER = 40
"""The Crown's power: above every trump."""


def trick_power(card: int, trump: int, lead: int, strength: Sequence[int]) -> int:
    """How strongly `card` bids for a trick led in suit `lead` with `trump` (-1: none yet).

    The highest power takes the trick: the Crown, then trumps, then the lead
    suit, each suit by `strength` (`strength_table`); a card of another suit
    cannot take it (-1).
    """
    if card == CROWN:
        return CROWN_POWER
    suit = SUIT_OF[card]
    if suit == trump:
        return TRUMP_POWER + strength[card]
    return strength[card] if suit == lead else -1


# _POWER[one_high][trump + 1][lead + 1][card] is `trick_power`, for the hot path: trump
# and lead run from -1 (none) to 4.
_POWER: dict[bool, tuple[tuple[tuple[int, ...], ...], ...]] = {
    one_high: tuple(
        tuple(
            tuple(
                trick_power(card, trump, lead, strength_table(one_high))
                for card in range(DECK_SIZE)
            )
            for lead in range(-1, 5)
        )
        for trump in range(-1, 5)
    )
    for one_high in (False, True)
}


def power_table(trump: int, lead: int, one_high: bool) -> tuple[int, ...]:
    """`trick_power` of every card at once, for a trick led in `lead` with `trump`."""
    return _POWER[one_high][trump + 1][lead + 1]


def best_in_trick(cards: Sequence[int], power: Sequence[int]) -> int:
    """Index in `cards` (in play order) of the card that takes the trick.

    `power` is the trick's `power_table`; the card led always has a power, so
    some card does.
    """
    best_at = 0
    best = power[cards[0]]
    for i in range(1, len(cards)):
        if power[cards[i]] > best:
            best = power[cards[i]]
            best_at = i
    return best_at


# _FOLLOWS[trump][lead][card]: whether `card` follows a trick led in `lead` with `trump`;
# _LEADING, every card, is what a trick's first card may be.
_FOLLOWS: tuple[tuple[tuple[bool, ...], ...], ...] = tuple(
    tuple(
        tuple(bool(_BIT[card] & _follow_mask(lead, trump)) for card in range(DECK_SIZE))
        for lead in range(5)
    )
    for trump in range(5)
)
_LEADING: tuple[bool, ...] = (True,) * DECK_SIZE

_Lead = tuple[int, int, tuple[bool, ...], tuple[int, ...], int]
"""What leading a card sets up: the suit to follow, the cards that follow it (as a
mask and as a flag per card), every card's power, and the power of the card led."""


def _lead(card: int, trump: int, one_high: bool) -> _Lead:
    lead = lead_suit(card, trump)
    power = power_table(trump, lead, one_high)
    return lead, _follow_mask(lead, trump), _FOLLOWS[trump][lead], power, power[card]


# _LEADS[one_high][trump][card] is what leading `card` sets up, for the hot path.
_LEADS: dict[bool, tuple[tuple[_Lead, ...], ...]] = {
    one_high: tuple(
        tuple(_lead(card, trump, one_high) for card in range(DECK_SIZE)) for trump in range(5)
    )
    for one_high in (False, True)
}


def trick_winner(plays: Sequence[tuple[int, str]], trump: str | None, one_high: bool) -> int:
    """The seat that takes a complete trick of `(seat, card id)` plays, in play order."""
    cards = [CARD_INDEX[card] for _, card in plays]
    trump_suit = SUITS.index(trump) if trump else -1
    power = power_table(trump_suit, lead_suit(cards[0], trump_suit), one_high)
    return plays[best_in_trick(cards, power)][0]


def game_over(scores: Sequence[int], round_number: int, max_rounds: int) -> bool:
    """Whether the game ends with these scores after round `round_number`.

    It does when one player alone has `TARGET` points or more, or after the
    last round the `max_rounds` option allows.
    """
    best = max(scores)
    return (best >= TARGET and scores.count(best) == 1) or round_number >= max_rounds


def bid_value(action: Action | int | str) -> int | None:
    """The points a bid offers (`bid:55` -> 55); None for any other action."""
    a = TABLE.coerce(action)
    return BID_VALUES[a - FIRST_BID] if FIRST_BID <= a < PASS else None


def named_trump(action: Action | int | str) -> str | None:
    """The suit letter a trump call names (`trump:H` -> "H"); None for any other action."""
    a = TABLE.coerce(action)
    return SUITS[a - FIRST_TRUMP] if a >= FIRST_TRUMP else None


def _card_actions(mask: int) -> list[Action]:
    """The card actions of every card in `mask`, in card order."""
    out = [
        *_S0[mask & 0x3FF],
        *_S1[mask >> 10 & 0x3FF],
        *_S2[mask >> 20 & 0x3FF],
        *_S3[mask >> 30 & 0x3FF],
        *_S4[mask >> 40 & 0x3FF],
    ]
    if mask & CROWN_BIT:
        out.append(_A[CROWN])
    return out


def _held_lists(mask: int) -> list[list[Action]]:
    """The card actions of `mask` by `_SLOT`: a list per suit, then the Crown's, each in card order."""
    return [
        list(_S0[mask & 0x3FF]),
        list(_S1[mask >> 10 & 0x3FF]),
        list(_S2[mask >> 20 & 0x3FF]),
        list(_S3[mask >> 30 & 0x3FF]),
        list(_S4[mask >> 40 & 0x3FF]),
        [_A[CROWN]] if mask & CROWN_BIT else [],
    ]


def _card_names(mask: int) -> list[str]:
    return [CARD_NAMES[action] for action in _card_actions(mask)]


def _mask_points(mask: int) -> int:
    total = 0
    while mask:
        low = mask & -mask
        total += POINTS[low.bit_length() - 1]
        mask ^= low
    return total


def _parse_deal(deal: object, players: int) -> tuple[list[int], int, int | None]:
    """Check a `deal` and return its hands, stash and optional dealer."""
    if not isinstance(deal, Mapping):
        raise ValueError("deal must be a dict with keys hands, stash and optionally dealer")
    unknown = set(deal) - {"hands", "stash", "dealer"}
    if unknown:
        raise ValueError(f"deal has unknown keys {sorted(unknown)}; allowed: hands, stash, dealer")
    hands = deal.get("hands")
    stash = deal.get("stash")
    size = (DECK_SIZE - STASH_SIZE) // players
    if not isinstance(hands, Sequence) or isinstance(hands, str) or len(hands) != players:
        raise ValueError(f"deal['hands'] must be a list of {players} hands")
    if not isinstance(stash, Sequence) or isinstance(stash, str) or len(stash) != STASH_SIZE:
        raise ValueError(f"deal['stash'] must be a list of {STASH_SIZE} card ids")
    seen: set[int] = set()
    masks: list[int] = []

    def read(cards: Sequence[object], where: str) -> int:
        mask = 0
        for name in cards:
            if not isinstance(name, str) or name not in CARD_INDEX:
                raise ValueError(f"{where}: {name!r} is not a card id (1S..10C or CR)")
            card = CARD_INDEX[name]
            if card in seen:
                raise ValueError(f"{where}: card {name} is dealt twice")
            seen.add(card)
            mask |= 1 << card
        return mask

    for seat, hand in enumerate(hands):
        if not isinstance(hand, Sequence) or isinstance(hand, str) or len(hand) != size:
            raise ValueError(f"deal['hands'][{seat}] must be a list of {size} card ids")
        masks.append(read(hand, f"deal['hands'][{seat}]"))
    stash_mask = read(stash, "deal['stash']")
    dealer = deal.get("dealer")
    if dealer is not None and (
        isinstance(dealer, bool) or not isinstance(dealer, int) or not 0 <= dealer < players
    ):
        raise ValueError(f"deal['dealer'] must be a seat 0..{players - 1}, got {dealer!r}")
    return masks, stash_mask, dealer


class GoodgeState:
    """A game of The Goodge Rules in progress (see the module docstring).

    `scores` is the list of running totals, one per seat.
    """

    # Every attribute is declared (`copy_state` copies them by these names): beyond
    # 30 attributes CPython 3.11 gives up its compact per-class layout for a dict per
    # instance, which slows every attribute access on the play path.
    __slots__ = (
        "_best",
        "_bids",
        "_deal",
        "_dealer",
        "_follow",
        "_follows",
        "_goodge",
        "_hands",
        "_held",
        "_high_bid",
        "_high_bidder",
        "_history",
        "_last_round",
        "_lead_suit",
        "_leader",
        "_leads",
        "_low_bid",
        "_max_rounds",
        "_moves",
        "_next_seat",
        "_one_high",
        "_passed",
        "_phase",
        "_picked_up",
        "_power",
        "_redeal",
        "_rng",
        "_round",
        "_stash",
        "_stash_taken",
        "_stash_taker",
        "_taken",
        "_trick",
        "_trick_points",
        "_trump",
        "_turn",
        "_winner",
        "options",
        "players",
        "scores",
        "seed",
        "spec",
    )

    def _set_up(self, players: int, seed: int, options: dict[str, object]) -> None:
        """What every state starts from: the options read, no moves, scores at 0, round 1."""
        self.spec = SPEC
        self.players = players
        self.seed = seed
        self.options = options
        self._deal: JSON = None
        self._rng = random.Random(seed)
        rules = GoodgeOptions.of(options)
        self._one_high = rules.one_high
        self._redeal = rules.all_pass == "redeal"
        self._max_rounds = rules.max_rounds
        self._next_seat = tuple((seat + 1) % players for seat in range(players))  # to the left
        self._moves: list[tuple[int, int]] = []
        self.scores = [0] * players
        self._round = 1
        self._last_round: GoodgeRoundEnd | None = None

    def __init__(
        self, players: int, seed: int, options: dict[str, object], deal: object = None
    ) -> None:
        self._set_up(players, seed, options)
        self._dealer = self._rng.randrange(players)
        if deal is not None:
            hands, stash, dealer = _parse_deal(deal, players)
            # The log keeps a plain-JSON copy, so replaying a loaded log gives the same game.
            self._deal = {
                "hands": [_card_names(hand) for hand in hands],
                "stash": _card_names(stash),
            }
            if dealer is not None:
                self._dealer = dealer
                self._deal["dealer"] = dealer
            self._start_round(hands, stash)
        else:
            self._deal_round()

    # -- round set-up -------------------------------------------------------

    def _deal_round(self) -> None:
        # The deck is shuffled as the cards' bits (the swaps do not depend on the
        # items), so a hand's mask is the sum of its slice: distinct bits.
        deck = list(_BIT)
        shuffle(self._rng, deck)
        size = (DECK_SIZE - STASH_SIZE) // self.players
        hands = [sum(deck[start : start + size]) for start in range(STASH_SIZE, DECK_SIZE, size)]
        self._start_round(hands, deck[0] | deck[1] | deck[2])

    def _start_round(self, hands: list[int], stash: int) -> None:
        n = self.players
        self._hands = hands
        # The same hands as card actions, a list per suit and one for the Crown
        # (`_held_lists`): the cards that follow are a copy of one or two lists,
        # any card all six joined, cheaper than building them from the mask.
        self._held = [_held_lists(hand) for hand in hands]
        self._stash = stash
        # Each seat's won cards are its tricks in `_history` (`zones` gathers them), and
        # the Stash, which the last trick's winner takes at the end of the round.
        self._stash_taker = -1
        self._stash_taken = 0
        self._taken = [0] * n
        self._bids: list[tuple[int, int]] = []  # (seat, action number)
        self._high_bid = 0
        self._high_bidder = -1
        self._low_bid = 0  # the index in BID_VALUES of the lowest bid allowed now
        self._passed = [False] * n
        self._goodge = -1
        self._picked_up = False
        self._trump = -1
        self._leads: tuple[_Lead, ...] = ()  # by card, once trump is named: _LEADS
        self._lead_suit = -1
        self._follow = 0  # the cards that follow the lead; none when leading (no constraint)
        self._follows = _LEADING  # whether each card follows the lead; all of them when leading
        self._leader = -1
        # The trick so far: its cards, each card's power in it, and the best one's power and seat.
        self._trick: list[int] = []
        self._trick_points = 0
        self._power: tuple[int, ...] = ()
        self._best = -1
        self._winner = -1
        self._history: list[tuple[int, list[int], int]] = []  # (leader, cards, winner)
        self._phase = BID
        self._turn = (self._dealer + 1) % n

    # -- protocol -----------------------------------------------------------

    @property
    def last_round(self) -> GoodgeRoundEnd | None:
        """The outcome of the last finished round (as in the observation), or None."""
        return None if self._last_round is None else self._last_round.copy()

    @property
    def round(self) -> int:
        """The current round, from 1 (the last one once the game is over)."""
        return self._round

    def to_act(self) -> tuple[int, ...]:
        """The one seat that must act now; empty once the game is over."""
        if self._phase == OVER:
            return ()
        return _SEAT_TUPLES[self._turn]

    def is_over(self) -> bool:
        """True once the game has ended."""
        return self._phase == OVER

    def legal_actions(self, seat: int) -> list[Action]:
        """The actions `seat` may take now (empty unless it is their turn)."""
        if seat != self._turn:
            return []
        phase = self._phase
        if phase == PLAY:
            held = self._held[seat]
            if self._trick:
                # Following: the suit led, and the Crown too when trump is led.
                following = held[self._lead_suit]
                if held[CROWN_SLOT] and self._lead_suit == self._trump:
                    return [*following, *held[CROWN_SLOT]]
                if following:
                    return following[:]
        elif phase == DISCARD:
            held = self._held[seat]
        elif phase == BID:
            return list(_BID_LISTS[self._low_bid])
        elif phase == TRUMP:
            return list(_TRUMP_LIST)
        else:
            return []  # over
        # Leading, unable to follow, or discarding: any card in hand, in card order.
        return [*held[0], *held[1], *held[2], *held[3], *held[4], *held[CROWN_SLOT]]

    def apply(self, seat: int, action: Action | int | str) -> None:
        """Play one action for `seat`; raises IllegalAction if not allowed."""
        if self._phase != PLAY or seat != self._turn or type(action) is not GoodgeAction:
            self._apply_other(seat, action)
            return
        # The hot path: a card (as an action object) played by the seat to play.
        hand = self._hands[seat]
        bit, slot, points, logged = _PLAY[action]
        # Legal: held, and following the lead unless the seat holds nothing that does
        # (when leading, every card follows).
        if not hand & bit or (not self._follows[action] and hand & self._follow):
            raise IllegalAction(self._play_error(seat, action))
        self._moves.append(logged[seat])
        self._hands[seat] = hand ^ bit
        self._held[seat][slot].remove(action)
        trick = self._trick
        trick.append(action)
        played = len(trick)
        if played == 1:
            self._leader = seat
            self._trick_points = points
            led = self._leads[action]
            self._lead_suit, self._follow, self._follows, self._power, self._best = led
            self._winner = seat
        else:
            # The trick's points and winner so far, kept up card by card.
            self._trick_points += points
            power_now = self._power[action]
            if power_now > self._best:
                self._best = power_now
                self._winner = seat
            if played == self.players:
                self._finish_trick()
                return
        self._turn = self._next_seat[seat]

    def _apply_other(self, seat: int, action: Action | int | str) -> None:
        """`apply` off the hot path: bids, discards, trump, action numbers or text, errors."""
        if seat != self._turn or self._phase == OVER:
            if self._phase == OVER:
                raise IllegalAction("the game is over; no action is allowed")
            raise IllegalAction(f"it is seat {self._turn}'s turn, not seat {seat}'s")
        a = action if type(action) is GoodgeAction else TABLE.coerce(action)
        phase = self._phase
        if phase == PLAY:
            self.apply(seat, a)
            return
        if phase == BID:
            if a == PASS:
                self._moves.append(_MOVES[seat][a])
                self._pass(seat)
                return
            if FIRST_BID <= a < PASS and a - FIRST_BID >= self._low_bid:
                self._moves.append(_MOVES[seat][a])
                self._bid(seat, a)
                return
            raise IllegalAction(
                f"{TABLE.cls.NAMES[a]} is not allowed now: seat {seat} must bid; legal: "
                + _list_text(self.legal_actions(seat))
            )
        if phase == DISCARD:
            if a < DECK_SIZE and self._hands[seat] >> a & 1:
                self._moves.append(_MOVES[seat][a])
                self._discard(seat, a)
                return
            raise IllegalAction(
                f"{TABLE.cls.NAMES[a]} is not allowed now: seat {seat} must discard a card "
                "from their hand; legal: " + _list_text(self.legal_actions(seat))
            )
        if FIRST_TRUMP <= a < FIRST_TRUMP + 5:
            self._moves.append(_MOVES[seat][a])
            self._trump = a - FIRST_TRUMP
            self._leads = _LEADS[self._one_high][self._trump]
            self._phase = PLAY
            return
        raise IllegalAction(
            f"{TABLE.cls.NAMES[a]} is not allowed now: seat {seat} must name trump; legal: "
            + _list_text(_TRUMP_LIST)
        )

    def _play_error(self, seat: int, a: int) -> str:
        name = TABLE.cls.NAMES[a]
        hand = self._hands[seat]
        legal = _list_text(_card_actions(hand & self._follow or hand))
        if a >= DECK_SIZE:
            return f"{name} is not allowed now: seat {seat} must play a card; legal: {legal}"
        if not self._hands[seat] >> a & 1:
            return f"seat {seat} does not hold {name}; legal: {legal}"
        lead = self._lead_suit
        if lead == self._trump:
            return (
                f"seat {seat} must follow the trump lead ({SUIT_NAMES[lead]} or CR); legal: {legal}"
            )
        return f"seat {seat} must follow {SUIT_NAMES[lead]}; legal: {legal}"

    # -- bidding --------------------------------------------------------------

    def _bid(self, seat: int, a: int) -> None:
        self._bids.append((seat, a))
        self._high_bid = BID_VALUES[a - FIRST_BID]
        self._high_bidder = seat
        self._low_bid = a - FIRST_BID + 1
        if self._passed.count(True) == self.players - 1:
            self._become_goodge(seat, self._high_bid)
        else:
            self._next_bidder(seat)

    def _pass(self, seat: int) -> None:
        self._bids.append((seat, PASS))
        self._passed[seat] = True
        passes = self._passed.count(True)
        if passes == self.players:
            if self._redeal:
                self._end_round(redeal=True)
            else:
                self._high_bid = MIN_BID
                self._high_bidder = self._dealer
                self._become_goodge(self._dealer, MIN_BID)
        elif passes == self.players - 1 and self._high_bidder >= 0:
            self._become_goodge(self._high_bidder, self._high_bid)
        else:
            self._next_bidder(seat)

    def _next_bidder(self, seat: int) -> None:
        nxt = self._next_seat[seat]
        while self._passed[nxt]:
            nxt = self._next_seat[nxt]
        self._turn = nxt

    def _become_goodge(self, seat: int, bid: int) -> None:
        self._goodge = seat
        self._high_bid = bid
        self._hands[seat] |= self._stash
        self._held[seat] = _held_lists(self._hands[seat])
        self._stash = 0
        self._picked_up = True
        self._phase = DISCARD
        self._turn = seat

    def _discard(self, seat: int, card: int) -> None:
        bit = 1 << card
        self._hands[seat] ^= bit
        self._held[seat][_SLOT[card]].remove(_A[card])
        self._stash |= bit
        if self._stash.bit_count() == STASH_SIZE:
            self._phase = TRUMP

    # -- tricks -------------------------------------------------------------

    def _finish_trick(self) -> None:
        trick = self._trick
        winner = self._winner
        self._taken[winner] += self._trick_points
        self._history.append((self._leader, trick, winner))
        self._trick = []
        self._follow = 0
        self._follows = _LEADING
        self._turn = winner
        if not self._hands[winner]:
            self._stash_taker = winner
            self._stash_taken = self._stash
            self._taken[winner] += _mask_points(self._stash)
            self._stash = 0
            self._end_round(redeal=False)

    # -- scoring --------------------------------------------------------------

    def _end_round(self, redeal: bool) -> None:
        n = self.players
        if redeal:
            deltas = [0] * n
            self._last_round = {"round": self._round, "redeal": True, "deltas": deltas}
        else:
            goodge = self._goodge
            deltas = list(self._taken)
            made = self._taken[goodge] >= self._high_bid
            if not made:
                deltas[goodge] = -self._high_bid
            self._last_round = {
                "round": self._round,
                "redeal": False,
                "goodge": goodge,
                "bid": self._high_bid,
                "made": made,
                "points": list(self._taken),
                "deltas": deltas,
            }
        for seat in range(n):
            self.scores[seat] += deltas[seat]
        if game_over(self.scores, self._round, self._max_rounds):
            self._phase = OVER
            return
        self._round += 1
        self._dealer = (self._dealer + 1) % n
        self._deal_round()

    # -- simulation ---------------------------------------------------------

    def clone(self, this_round_only: bool = False) -> GoodgeState:
        """An independent copy, cheap enough for search: ints, masks and small lists.

        The copy has the same future as the original (its RNG state included);
        changing one never changes the other. With `this_round_only` the
        copy's game ends with the current round, as a search playout wants:
        no next deal is shuffled, and `last_round` then tells the outcome.
        """
        new = copy_state(self, with_rng=not this_round_only)
        new._held = [[cards[:] for cards in held] for held in self._held]  # each list its own
        if this_round_only:
            new._max_rounds = self._round
        return new

    # -- views ----------------------------------------------------------------

    def result(self) -> Result:
        """Final scores and ranks (ties share); ValueError before the end."""
        if self._phase != OVER:
            raise ValueError("the game is not over yet")
        return Result(scores=tuple(self.scores), ranks=rank_scores(self.scores))

    def log(self) -> GameLog:
        """Everything `games.replay` needs to rebuild this game."""
        names = TABLE.cls.NAMES
        return GameLog(
            game=SPEC_NAME,
            players=self.players,
            seed=self.seed,
            options=dict(self.options),
            deal=self._deal,
            moves=[[seat, names[a]] for seat, a in self._moves],
        )

    def zones(self) -> dict[str, list[str]]:
        """Every card's place: hand:i, stash, trick, won:i."""
        zones: dict[str, list[str]] = {}
        for seat in range(self.players):
            zones[f"hand:{seat}"] = _card_names(self._hands[seat])
        zones["stash"] = _card_names(self._stash)
        zones["trick"] = [CARD_NAMES[card] for card in self._trick]
        won = [0] * self.players
        for _, cards, winner in self._history:
            for card in cards:
                won[winner] |= _BIT[card]
        if self._stash_taker >= 0:
            won[self._stash_taker] |= self._stash_taken
        for seat in range(self.players):
            zones[f"won:{seat}"] = _card_names(won[seat])
        return zones

    def hidden_cards(self, seat: int) -> set[str]:
        """Others' hands, and the Stash unless `seat` is the Goodge who made it."""
        if self._phase == OVER:
            return set()
        mask = 0
        for other in range(self.players):
            if other != seat:
                mask |= self._hands[other]
        if not (self._picked_up and seat == self._goodge):
            mask |= self._stash
        return set(_card_names(mask))

    def observation(self, seat: int) -> GoodgeObservation:
        """All that `seat` may know now (see docs/rules/goodge.md for the keys)."""
        sees_stash = self._phase == OVER or (self._picked_up and seat == self._goodge)
        return {
            **self.public_observation(),
            "seat": seat,
            "hand": _card_names(self._hands[seat]),
            "stash": _card_names(self._stash) if sees_stash else None,
        }

    def public_observation(self) -> GoodgePublicObservation:
        """What every seat may see now: bids, trump, the tricks and who took them, scores.

        The Stash stays hidden even once the game is over: in a duplicate match the
        same deal is played again with the seats rotated.
        """
        names = TABLE.cls.NAMES
        n = self.players
        over = self._phase == OVER
        goodge = self._goodge
        winners = [winner for _, _, winner in self._history]
        return {
            "game": SPEC_NAME,
            "players": n,
            "round": self._round,
            "dealer": self._dealer,
            "scores": list(self.scores),
            "phase": PHASE_NAMES[self._phase],
            "to_act": None if over else self._turn,
            "options": dict(self.options),
            "target": TARGET,
            "hand_sizes": [self._hands[s].bit_count() for s in range(n)],
            "bids": [[s, names[a]] for s, a in self._bids],
            "passed": [s for s in range(n) if self._passed[s]],
            "high_bid": self._high_bid if self._high_bidder >= 0 else None,
            "high_bidder": self._high_bidder if self._high_bidder >= 0 else None,
            "goodge": goodge if goodge >= 0 else None,
            "bid": self._high_bid if goodge >= 0 else None,
            "trump": SUITS[self._trump] if self._trump >= 0 else None,
            "stash_size": self._stash.bit_count(),
            "tricks": [
                {
                    "leader": leader,
                    "cards": [[(leader + i) % n, CARD_NAMES[c]] for i, c in enumerate(cards)],
                    "winner": winner,
                    "points": sum(POINTS[c] for c in cards),
                }
                for leader, cards, winner in self._history
            ],
            "trick": [[(self._leader + i) % n, CARD_NAMES[c]] for i, c in enumerate(self._trick)],
            "lead_suit": SUITS[self._lead_suit] if self._trick else None,
            "taken": list(self._taken),
            "tricks_won": [winners.count(s) for s in range(n)],
            "last_round": self.last_round,
        }


def _list_text(actions: Sequence[Action]) -> str:
    return ", ".join(str(action) for action in actions) or "none"


def _mask_of(names: Sequence[str]) -> int:
    mask = 0
    for name in names:
        mask |= 1 << CARD_INDEX[name]
    return mask


def sample_deal(observation: GoodgeObservation, rng: random.Random) -> dict[str, JSON]:
    """Every card's place now, the ones `observation`'s seat cannot see drawn at random.

    Returns ``{"hands": [...], "stash": [...], "dealer": d}`` (see `games.sampling`):
    the seat's own hand as it is, the others' hands of the sizes shown, the
    Stash as the Goodge made it when the seat is the Goodge, and nobody holding
    a card of a suit they failed to follow (trump including the Crown when
    trump, or the Crown, was led).
    """
    players = observation["players"]
    seat = observation["seat"]
    if observation["phase"] == "over":
        raise ValueError("the game is over: nothing is hidden")
    trump = SUITS.index(observation["trump"]) if observation["trump"] else -1
    known = _mask_of(observation["hand"])
    lacks = [0] * players
    tricks = [trick["cards"] for trick in observation["tricks"]]
    if observation["trick"]:
        tricks.append(observation["trick"])
    for cards in tricks:
        first = CARD_INDEX[cards[0][1]]
        known |= 1 << first
        follow = _follow_mask(lead_suit(first, trump), trump)
        for who, name in cards[1:]:
            bit = 1 << CARD_INDEX[name]
            known |= bit
            if not bit & follow:
                lacks[who] |= follow
    stash_seen = observation["stash"]
    if stash_seen is not None:
        known |= _mask_of(stash_seen)
    others = [other for other in range(players) if other != seat]
    capacities = [observation["hand_sizes"][other] for other in others]
    if stash_seen is None:
        capacities.append(observation["stash_size"])
    hidden = [card for card in range(DECK_SIZE) if not known >> card & 1]
    allowed = {}
    for card in hidden:
        mask = 0
        for i, other in enumerate(others):
            if not lacks[other] >> card & 1:
                mask |= 1 << i
        allowed[card] = mask | (1 << len(others))  # the Stash may hold anything
    held = assign_hidden(hidden, capacities, allowed, rng)
    hands: list[JSON] = [[] for _ in range(players)]
    hands[seat] = list(observation["hand"])
    for i, other in enumerate(others):
        hands[other] = _card_names(sum(1 << card for card in held[i]))
    stash = (
        list(stash_seen) if stash_seen is not None else _card_names(sum(1 << c for c in held[-1]))
    )
    return {"hands": hands, "stash": stash, "dealer": observation["dealer"]}


def state_from_observation(
    observation: GoodgeObservation, deal: Mapping[str, Any], seed: int = 0
) -> GoodgeState:
    """The state at `observation`'s point of the round, cards placed as `deal` says.

    `deal` is what `sample_deal` returns (hands and Stash as they are now);
    the bids, trump, tricks, trick in progress, points taken and scores come
    from the observation. The state's RNG is seeded with `seed` and its log
    starts here (see `games.sampling`).
    """
    if observation["phase"] == "over":
        raise ValueError("the game is over: there is no round to rebuild")
    players = observation["players"]
    options = SPEC.resolve_options(observation["options"], players)
    state = object.__new__(GoodgeState)
    state._set_up(players, seed, options)
    state.scores = list(observation["scores"])
    state._round = observation["round"]
    last = observation["last_round"]
    state._last_round = None if last is None else last.copy()
    state._dealer = observation["dealer"]
    state._start_round([_mask_of(hand) for hand in deal["hands"]], _mask_of(deal["stash"]))
    for trick in observation["tricks"]:
        cards = [CARD_INDEX[name] for _, name in trick["cards"]]
        state._history.append((trick["leader"], cards, trick["winner"]))
    state._taken = list(observation["taken"])
    state._bids = [(who, TABLE.parse(name)) for who, name in observation["bids"]]
    high_bidder = observation["high_bidder"]
    state._high_bidder = -1 if high_bidder is None else high_bidder
    state._high_bid = observation["high_bid"] or 0
    if state._high_bidder >= 0:
        state._low_bid = (state._high_bid - MIN_BID) // BID_STEP + 1
    passed = set(observation["passed"])
    state._passed = [other in passed for other in range(players)]
    goodge = observation["goodge"]
    state._goodge = -1 if goodge is None else goodge
    state._picked_up = goodge is not None
    bid = observation["bid"]
    if bid is not None:  # set with the Goodge
        state._high_bid = bid
    state._trump = SUITS.index(observation["trump"]) if observation["trump"] else -1
    if state._trump >= 0:
        state._leads = _LEADS[state._one_high][state._trump]
    trick_now = observation["trick"]
    if trick_now:
        state._trick = [CARD_INDEX[name] for _, name in trick_now]
        state._leader = trick_now[0][0]
        led = state._leads[state._trick[0]]
        state._lead_suit, state._follow, state._follows, state._power, _ = led
        best_at = best_in_trick(state._trick, state._power)
        state._best = state._power[state._trick[best_at]]
        state._winner = trick_now[best_at][0]
        state._trick_points = sum(POINTS[card] for card in state._trick)
    state._phase = PHASE_NAMES.index(observation["phase"])
    to_act = observation["to_act"]
    assert to_act is not None, "someone acts until the game is over"
    state._turn = to_act
    return state


def new_game(
    players: int, seed: int, options: Mapping[str, object] | None = None, deal: object = None
) -> GoodgeState:
    """A new game of The Goodge Rules for 3 or 4 players (see the module docstring)."""
    SPEC.check_players(players)
    return GoodgeState(players, seed, SPEC.resolve_options(options, players), deal)


SPEC = GameSpec(
    name=SPEC_NAME,
    title="The Goodge Rules",
    min_players=3,
    max_players=4,
    options=(
        OptionSpec(
            "one_high",
            True,
            "true: the 1 is the highest card of a suit (1, 10, 9 .. 2); false: 10 high .. 1 low",
            bool_option,
        ),
        OptionSpec(
            "all_pass",
            "dealer_50",
            "when every player passes: dealer_50 makes the dealer the Goodge at 50; "
            "redeal scores nothing and deals the next round",
            choice_option(*ALL_PASS),
        ),
        OptionSpec(
            "max_rounds",
            200,
            "the game ends after this many rounds even if nobody has won",
            int_option(1),
        ),
    ),
    simultaneous=False,
    higher_is_better=True,
    new_game=new_game,
    parse_action=TABLE.parse,
    sample_deal=sample_deal,
    state_from_observation=state_from_observation,
)
