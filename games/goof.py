"""Game of Goof: a race where every player acts at once, in ticks.

Each player owns a 52-card deck. A card is a small int `suit * 13 + rank`
(suits S, H, D, C; rank 0 is the Ace, 12 the King); on the table a card
also carries its owner, as `owner * 52 + card`, printed `7H@2`.

Each round every player lays out a face-down goof pile (option `goof_pile`,
13 by default, one size for all or one per seat), a goof line of 4 face-up
cards and a face-down stock. Foundation piles in the common area start with
an Ace and are built up in suit with anyone's cards. The first player whose
goof pile runs out calls Goof and the round ends. See docs/rules/goof.md for
every rule and decision.

Play runs in ticks: every seat gives one action per tick, all checked
against the state at the start of the tick, then resolved one after the
other in the order they reached the referee (`apply_tick(actions, order)`,
or `apply(seat, action)` which collects them in arrival order). Every tick
draws one number from the game's RNG, used for the order only when none is
given, so a replay with recorded orders keeps the RNG, and so later rounds'
shuffles, unchanged.

Actions: `7H>p3` plays the 7 of Hearts onto the pile with id 3; `AS>new`
starts a new pile with an Ace; `turn` turns three cards of the stock (the
waste is first turned over as the new stock when the stock is empty);
`wait` does nothing.

The `deal` argument of `new_game` fixes the first round::

    {"decks": [[52 cards of seat 0, e.g. "7H", in dealing order], ...],
     "dealer": 0}

Each deck lists the goof pile first (top card first), then the 4 goof-line
cards, then the stock from the top down. "dealer" is optional; Goof has no
real dealer, the seat is only a nominal caller (it says GO) that moves one
seat left each round and is shown in observations like in the other games.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import permutations
from typing import Final, Literal, TypedDict

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
    copy_state,
    int_option,
    option_value,
    optional_int_option,
    rank_scores,
    shuffle,
)

SPEC_NAME: Final = "goof"
RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS = "SHDC"
DECK = 52
KING = 12
LINE = 4
TURN_SIZE = 3
MAX_PLAYERS = 8
MAX_PILES = 4 * MAX_PLAYERS
"""Only an Ace starts a pile, so a round never has more piles than Aces."""

CARD_NAMES: tuple[str, ...] = tuple(rank + suit for suit in SUITS for rank in RANKS)
CARD_IDS: tuple[str, ...] = tuple(
    f"{CARD_NAMES[card]}@{owner}" for owner in range(MAX_PLAYERS) for card in range(DECK)
)
"""The id of every card on the table, indexed by `owner * 52 + card`."""

CARD_INDEX: dict[str, int] = {name: card for card, name in enumerate(CARD_NAMES)}
"""The card number of each card name (`"AS"` -> 0, `"7H"` -> 19)."""
SUIT_OF: tuple[int, ...] = tuple(card // 13 for card in range(DECK))
"""Each card's suit, as an index into SUITS."""
RANK_OF: tuple[int, ...] = tuple(card % 13 + 1 for card in range(DECK))
"""Each card's rank: 1 for the Ace .. 13 for the King."""
_ID_INDEX: dict[str, int] = {card_id: number for number, card_id in enumerate(CARD_IDS)}


class GoofAction(Action):
    """An action of Goof: a card onto a pile (`7H>p3`), `AS>new`, `turn` or `wait`."""

    __slots__ = ()


_TARGETS = 1 + MAX_PILES  # per card: "new", then pile ids 0..31
TABLE = ActionTable(
    GoofAction,
    [
        f"{card}>{'new' if target == 0 else f'p{target - 1}'}"
        for card in CARD_NAMES
        for target in range(_TARGETS)
    ]
    + ["turn", "wait"],
)
TURN = TABLE.actions[DECK * _TARGETS]
WAIT = TABLE.actions[DECK * _TARGETS + 1]
_TURN_AND_WAIT: tuple[Action, Action] = (TURN, WAIT)
_NEW: tuple[Action, ...] = tuple(TABLE.actions[card * _TARGETS] for card in range(DECK))
"""`_NEW[card]`: start a new pile with `card` (legal for Aces only)."""
_ONTO: tuple[tuple[Action, ...], ...] = tuple(
    TABLE.actions[card * _TARGETS + 1 : (card + 1) * _TARGETS] for card in range(DECK)
)
"""`_ONTO[card][pile]`: play `card` onto the pile with that id."""
_TURNED: tuple[tuple[int, Action, bool], ...] = tuple(
    (seat, TURN, True) for seat in range(MAX_PLAYERS)
)
_WAITED: tuple[tuple[int, Action, bool], ...] = tuple(
    (seat, WAIT, True) for seat in range(MAX_PLAYERS)
)
"""A seat's `turn` and `wait` as a tick's results list them: most results are these, shared."""


def card_of_id(card_id: str) -> tuple[int, int]:
    """The card and its owner of a card id on the table (`7H@2` -> (19, 2))."""
    owner, card = divmod(_ID_INDEX[card_id], DECK)
    return card, owner


def play_of(action: Action | int | str) -> tuple[int, int | None] | None:
    """The card and the target pile of a play; None for `turn` and `wait`.

    `7H>p3` -> (19, 3); `AS>new` -> (0, None), as an Ace starts a new pile.
    """
    a = TABLE.coerce(action)
    if a >= TURN:
        return None
    card, target = divmod(int(a), _TARGETS)
    return card, None if target == 0 else target - 1


STARTS_PILE: tuple[bool, ...] = tuple(card % 13 == 0 for card in range(DECK))
"""Whether each card starts a new pile: only an Ace does, and an Ace goes nowhere else."""
NEXT_IN_PILE: tuple[int | None, ...] = tuple(
    None if card % 13 == KING else card + 1 for card in range(DECK)
)
"""The card that goes onto each card in a pile: the next rank of its suit (None on a King)."""


def _goof_pile_option(value: object, players: int) -> object:
    """One goof-pile size for all seats, or one per seat ("13,10,13,13")."""
    if isinstance(value, str):
        parts = [part.strip() for part in value.split(",")]
        value = parts[0] if len(parts) == 1 else parts
    if isinstance(value, list | tuple):
        if len(value) != players:
            raise ValueError(f"needs one size per seat ({players}), got {len(value)}: {value!r}")
        return [_pile_size(size) for size in value]
    return _pile_size(value)


def _pile_size(value: object) -> int:
    size = value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        size = int(value)
    if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= DECK - LINE:
        raise ValueError(f"a goof pile holds 1..{DECK - LINE} cards, got {value!r}")
    return size


OPTIONS = (
    OptionSpec(
        "goof_pile",
        13,
        "cards in each goof pile: one number for all, or one per seat (e.g. 13,10,13,13)",
        _goof_pile_option,
    ),
    OptionSpec("rounds", 5, "number of rounds in a game", int_option(1)),
    OptionSpec(
        "target_score",
        None,
        "if set, the game also ends after a round in which someone reaches this total",
        optional_int_option(1),
    ),
    OptionSpec(
        "stall_limit",
        20,
        "one-unders without progress after which a stalled round ends with no Goof",
        int_option(0),
    ),
    OptionSpec(
        "max_ticks",
        20000,
        "safeguard: a round ends with no Goof after this many ticks",
        int_option(1),
    ),
)


@dataclass(frozen=True)
class GoofOptions:
    """The rules options of one game, typed; `of` reads them from the resolved dict."""

    goof_pile: int | tuple[int, ...]
    """One goof-pile size for every seat, or one per seat."""
    rounds: int
    target_score: int | None
    stall_limit: int
    max_ticks: int

    @classmethod
    def of(cls, values: Mapping[str, object]) -> GoofOptions:
        """The options of `values`, a dict from `SPEC.resolve_options`."""
        sizes = values["goof_pile"]
        return cls(
            goof_pile=(
                tuple(_pile_size(size) for size in sizes)
                if isinstance(sizes, list)
                else _pile_size(sizes)
            ),
            rounds=option_value(values, "rounds", int),
            target_score=(
                None
                if values["target_score"] is None
                else option_value(values, "target_score", int)
            ),
            stall_limit=option_value(values, "stall_limit", int),
            max_ticks=option_value(values, "max_ticks", int),
        )

    def pile_sizes(self, players: int) -> list[int]:
        """The goof-pile size of each seat."""
        sizes = self.goof_pile
        return list(sizes) if isinstance(sizes, tuple) else [sizes] * players


EndReason = Literal["goof", "stall", "max_ticks"]


@dataclass(frozen=True)
class RoundEnd:
    """How a finished round ended: its scores, who called Goof, and why it stopped."""

    scores: tuple[int, ...]
    goof: int | None
    reason: EndReason
    """Why it ended: "goof", "stall" (after stall_limit one-unders) or "max_ticks"."""


class GoofTableau(TypedDict):
    """One seat's side of the table, as every seat sees it."""

    seat: int
    goof_pile: int
    line: list[str]
    stock: int
    waste: int
    waste_top: str | None
    back_three: str | None
    area_cards: int
    full_pass: bool


class GoofPile(TypedDict):
    """A live pile in the area."""

    id: int
    suit: str
    top: str
    size: int


class GoofPastRound(TypedDict):
    """A finished round: its scores, who called Goof (None: nobody), why it ended."""

    scores: list[int]
    goof: int | None
    end: EndReason


class GoofPublicObservation(TypedDict):
    """The face-up table, as every seat and a spectator see it."""

    game: Literal["goof"]
    players: int
    round: int
    dealer: int
    scores: list[int]
    phase: Literal["play", "over"]
    tick: int
    tableau: list[GoofTableau]
    piles: list[GoofPile]
    removed_piles: list[int]
    one_unders: int
    last_tick: list[SeatEntry]
    """`[seat, action, took effect]` of the last tick, in resolution order."""
    past_rounds: list[GoofPastRound]


class GoofObservation(GoofPublicObservation):
    """The table as one seat sees it (docs/rules/goof.md describes every key)."""

    seat: int


@cache
def _orders(players: int) -> tuple[tuple[int, ...], ...]:
    """Every order of resolution of a tick, so one RNG draw picks one."""
    return tuple(permutations(range(players)))


def _check_deal(deal: object, players: int) -> tuple[list[list[int]], int | None]:
    """The decks (cards in dealing order) and optional dealer of a `deal`."""
    if not isinstance(deal, Mapping):
        raise ValueError(
            f"a goof deal is a dict with 'decks' (and optional 'dealer'), got {deal!r}"
        )
    unknown = set(deal) - {"decks", "dealer"}
    if unknown:
        raise ValueError(f"a goof deal has only 'decks' and 'dealer', not {sorted(unknown)}")
    decks = deal.get("decks")
    if not isinstance(decks, list | tuple) or len(decks) != players:
        raise ValueError(f"deal['decks'] must list one deck per seat ({players})")
    result = []
    for seat, deck in enumerate(decks):
        if not isinstance(deck, list | tuple) or len(deck) != DECK:
            raise ValueError(f"the deck of seat {seat} must list 52 cards")
        cards = []
        for name in deck:
            card = CARD_INDEX.get(name) if isinstance(name, str) else None
            if card is None:
                raise ValueError(f"the deck of seat {seat} has an unknown card {name!r}")
            cards.append(card)
        if len(set(cards)) != DECK:
            twice = sorted({CARD_NAMES[c] for c in cards if cards.count(c) > 1})
            raise ValueError(f"the deck of seat {seat} repeats {', '.join(twice)}")
        result.append(cards)
    dealer = deal.get("dealer")
    if dealer is not None and (
        isinstance(dealer, bool) or not isinstance(dealer, int) or not 0 <= dealer < players
    ):
        raise ValueError(f"deal['dealer'] must be a seat 0..{players - 1}, got {dealer!r}")
    return result, dealer


class GoofState:
    """A game of Goof in progress (satisfies `games.core.TickState`).

    Per seat the goof pile, stock and waste are lists of cards with the top
    card LAST; the goof line is a list of 4 cards. Piles are lists of table
    ids (`owner * 52 + card`), bottom first, indexed by pile id.
    `_fits[card]` lists the plays of `card` that the area allows now: onto
    each live pile whose next card it is (in the order they came to wait for
    it), or for an Ace its new pile; so a seat's plays are a few lookups.
    `_legal[seat]` caches the seat's legal actions until its turn or a card
    reaching the area changes them. `_to_act` is the seats that still owe an
    action in this tick (none once the game is over).
    """

    # Every attribute is declared (`copy_state` copies them by these names): beyond
    # 30 attributes CPython 3.11 gives up its compact per-class layout for a dict per
    # instance, which slows every attribute access on the play path.
    __slots__ = (
        "_area",
        "_back",
        "_complete",
        "_deal",
        "_dealer",
        "_fits",
        "_goof",
        "_history",
        "_last",
        "_legal",
        "_line",
        "_live",
        "_log",
        "_max_ticks",
        "_order_bits",
        "_orders",
        "_over",
        "_pending",
        "_piles",
        "_removed",
        "_rng",
        "_round",
        "_rounds",
        "_scores",
        "_seats",
        "_sizes",
        "_stall",
        "_stall_limit",
        "_stock",
        "_target",
        "_tick",
        "_to_act",
        "_turned",
        "_waste",
        "options",
        "players",
        "seed",
        "spec",
    )

    def __init__(
        self,
        players: int,
        seed: int,
        options: dict[str, object],
        deal: object,
    ) -> None:
        self.spec: GameSpec = SPEC
        self.players = players
        self.seed = seed
        self.options: Mapping[str, object] = options
        self._rng = random.Random(seed)
        rules = GoofOptions.of(options)
        self._sizes = rules.pile_sizes(players)
        self._rounds = rules.rounds
        self._target = rules.target_score
        self._stall_limit = rules.stall_limit
        self._max_ticks = rules.max_ticks
        self._seats = tuple(range(players))
        self._orders = _orders(players)
        self._order_bits = len(self._orders).bit_length()
        # One tuple per tick: tuples of plain values drop out of the garbage collector's
        # sight, where a list per tick would be walked again by every full collection.
        self._log: list[tuple[tuple[int, Action, bool], ...]] = []
        self._scores = [0] * players
        self._history: list[RoundEnd] = []
        self._round = 1
        self._over = False
        self._pending: dict[int, Action] = {}
        self._to_act: tuple[int, ...] = self._seats
        self._deal: JSON = None
        dealer = self._rng.randrange(players)
        # Shuffle even when the deal is given, so that the rest of the game
        # draws the same numbers with and without a fixed first deal.
        decks = self._shuffled_decks()
        if deal is not None:
            decks, fixed = _check_deal(deal, players)
            self._deal = {"decks": [[CARD_NAMES[c] for c in deck] for deck in decks]}
            if fixed is not None:
                dealer = fixed
                self._deal["dealer"] = fixed
        self._dealer = dealer
        self._start_round(decks)

    # -- set-up and round end -------------------------------------------

    def _shuffled_decks(self) -> list[list[int]]:
        decks = []
        for _ in self._seats:
            deck = list(range(DECK))
            shuffle(self._rng, deck)
            decks.append(deck)
        return decks

    def _start_round(self, decks: list[list[int]]) -> None:
        self._goof: list[list[int]] = []
        self._line: list[list[int]] = []
        self._stock: list[list[int]] = []
        self._waste: list[list[int]] = [[] for _ in self._seats]
        for seat, deck in enumerate(decks):
            size = self._sizes[seat]
            self._goof.append(deck[size - 1 :: -1])
            self._line.append(deck[size : size + LINE])
            self._stock.append(deck[: size + LINE - 1 : -1])
        self._back = [-1] * self.players
        self._piles: list[list[int]] = []
        self._live: list[bool] = []
        self._fits: list[list[Action]] = [
            [_NEW[card]] if STARTS_PILE[card] else [] for card in range(DECK)
        ]
        self._complete: list[int] = []
        self._removed: list[int] = []
        self._area = [0] * self.players
        self._turned = [0] * self.players
        self._stall = 0
        self._tick = 0
        self._last: tuple[tuple[int, Action, bool], ...] = ()
        self._legal: list[list[Action] | None] = [None] * self.players

    def _end_round(self, goof: int | None, reason: EndReason) -> None:
        scores = tuple(self._area[s] - 2 * len(self._goof[s]) for s in self._seats)
        for seat, score in enumerate(scores):
            self._scores[seat] += score
        self._history.append(RoundEnd(scores, goof, reason))
        if self._round >= self._rounds or (
            self._target is not None and max(self._scores) >= self._target
        ):
            self._over = True
            self._to_act = ()
            return
        self._round += 1
        self._dealer = (self._dealer + 1) % self.players
        self._start_round(self._shuffled_decks())

    # -- the State protocol ---------------------------------------------

    @property
    def round(self) -> int:
        """The number of the current round, from 1 (the last one once over)."""
        return self._round

    def to_act(self) -> tuple[int, ...]:
        """Every seat that still owes an action in the current tick."""
        return self._to_act

    def legal_actions(self, seat: int) -> list[Action]:
        """What `seat` may do in this tick: card plays, `turn` if it has cards, `wait`."""
        if seat not in self._to_act:
            return []
        legal = self._legal[seat]
        return (self._legal_of(seat) if legal is None else legal)[:]

    def _legal_of(self, seat: int) -> list[Action]:
        """The cached legal actions of `seat` (shared list: do not hand it out).

        The goof line's plays, then the waste top's and the back-three card's,
        then `turn` and `wait`.
        """
        legal = self._legal[seat]
        if legal is not None:
            return legal
        fits = self._fits
        first, second, third, fourth = self._line[seat]  # a goof line is always 4 cards
        legal = [*fits[first], *fits[second], *fits[third], *fits[fourth]]
        waste = self._waste[seat]
        if waste:
            legal += fits[waste[-1]]
            back = self._back[seat]
            if 0 <= back < len(waste) - 1:
                legal += fits[waste[back]]
            legal += _TURN_AND_WAIT
        elif self._stock[seat]:
            legal += _TURN_AND_WAIT
        else:
            legal.append(WAIT)
        self._legal[seat] = legal
        return legal

    def apply(self, seat: int, action: Action | int | str) -> None:
        """Collect `seat`'s action for this tick; the tick resolves, in arrival
        order, once every seat has sent one."""
        if self._over:
            raise IllegalAction("the game is over")
        if not 0 <= seat < self.players:
            raise IllegalAction(f"there is no seat {seat}; seats are 0..{self.players - 1}")
        if seat in self._pending:
            waiting = ", ".join(str(s) for s in self.to_act())
            raise IllegalAction(
                f"seat {seat} already acted in this tick ({self._pending[seat]}); "
                f"waiting for seats {waiting}"
            )
        self._pending[seat] = self._checked(seat, action)
        if len(self._pending) == self.players:
            actions, self._pending = self._pending, {}
            self._to_act = self._seats
            self._resolve([actions[s] for s in self._seats], list(actions))
        else:
            self._to_act = tuple(s for s in self._seats if s not in self._pending)

    def apply_tick(
        self, actions: Mapping[int, Action | int | str], order: Sequence[int] | None = None
    ) -> list[tuple[int, Action, bool]]:
        """Apply one tick: one action per seat, resolved in `order` (None: from the RNG).

        Nothing is applied if any action is missing or illegal at the start
        of the tick. Returns (seat, action, took_effect) in resolution order.
        """
        if self._over:
            raise IllegalAction("the game is over")
        if self._pending:
            raise IllegalAction(
                f"seats {', '.join(str(s) for s in self._pending)} already acted in this tick "
                "with apply(); finish the tick with apply()"
            )
        # Exactly the seats, each once: as many actions as seats, and one for each seat.
        if len(actions) != self.players:
            raise IllegalAction(self._seats_message(actions))
        chosen: list[Action] = []
        legal = self._legal
        for seat in self._seats:
            action = actions.get(seat)
            allowed = legal[seat]
            # The common case, an action object from the cached legal list, costs one
            # lookup; anything else (text, numbers, no cached list, no action) is checked
            # in full, every seat's presence first.
            if allowed is None or type(action) is not GoofAction or action not in allowed:
                chosen = self._checked_tick(actions)
                break
            chosen.append(action)
        if order is not None and sorted(order) != list(self._seats):
            raise IllegalAction(f"order must list every seat once, got {list(order)}")
        return self._resolve(chosen, order)

    def _seats_message(self, actions: Mapping[int, object]) -> str:
        missing = [s for s in self._seats if s not in actions]
        extra = [s for s in actions if s not in self._seats]
        return (
            f"every seat 0..{self.players - 1} must give exactly one action per tick; "
            f"missing: {missing or 'none'}, unknown seats: {extra or 'none'}"
        )

    def _checked_tick(self, actions: Mapping[int, Action | int | str]) -> list[Action]:
        """Each seat's action of a tick checked in full, once every seat is known to have one."""
        if any(seat not in actions for seat in self._seats):
            raise IllegalAction(self._seats_message(actions))
        return [self._checked(seat, actions[seat]) for seat in self._seats]

    def _checked(self, seat: int, action: Action | int | str) -> Action:
        if type(action) is not GoofAction:
            action = TABLE.coerce(action)
        legal = self._legal_of(seat)
        if action not in legal:
            raise IllegalAction(
                f"seat {seat} cannot {action}: {self._why_illegal(seat, action)}; "
                f"legal: {', '.join(str(a) for a in legal)}"
            )
        return action

    def _why_illegal(self, seat: int, action: Action) -> str:
        play = play_of(action)
        if play is None:  # `turn`: `wait` is always legal
            return "its stock and waste are empty"
        card, pile = play
        waste = self._waste[seat]
        back = self._back[seat]
        if card not in self._line[seat] and not (
            waste and (waste[-1] == card or (0 <= back < len(waste) - 1 and waste[back] == card))
        ):
            return f"{CARD_NAMES[card]} is not in its goof line, on its waste top or back three"
        if pile is None:
            return "only an Ace starts a new pile"
        if STARTS_PILE[card]:
            return "an Ace only starts a new pile"
        if pile >= len(self._piles) or not self._live[pile]:
            return f"there is no pile {pile} in the area"
        top = self._piles[pile][-1]
        return f"pile {pile} has {CARD_IDS[top]} on top; it takes only the next card of its suit"

    def _resolve(
        self, chosen: list[Action], order: Sequence[int] | None
    ) -> list[tuple[int, Action, bool]]:
        # Draw even when the order is given, so a replay keeps the RNG in step. The
        # draw is rng.randrange(len(orders)), done as Random does it (getrandbits of
        # the count's bit length until below the count) without randrange's checks.
        orders = self._orders
        getrandbits = self._rng.getrandbits
        drawn = getrandbits(self._order_bits)
        while drawn >= len(orders):
            drawn = getrandbits(self._order_bits)
        if order is None:
            order = orders[drawn]
        results: list[tuple[int, Action, bool]] = []
        legal = self._legal
        progress = False
        goof: int | None = None
        for seat in order:
            action = chosen[seat]
            if goof is not None:
                results.append((seat, action, False))
            elif action == WAIT:
                results.append(_WAITED[seat])
            elif action == TURN:
                self._turn(seat)
                legal[seat] = None
                results.append(_TURNED[seat])
            elif self._play(seat, action):
                results.append((seat, action, True))
                progress = True
                if not self._goof[seat]:
                    goof = seat
            else:
                results.append((seat, action, False))
        tick = tuple(results)
        self._log.append(tick)
        self._last = tick
        self._tick += 1
        if goof is not None:
            self._end_round(goof, "goof")
        elif progress:
            # A card in the area can change what every seat may play.
            self._legal = [None] * self.players
            self._turned = [0] * self.players
            self._stall = 0
        elif self._stalled():
            if self._stall >= self._stall_limit:
                self._end_round(None, "stall")
                return results
            self._one_under()
        if self._tick >= self._max_ticks and not self._over and goof is None:
            self._end_round(None, "max_ticks")
        return results

    def _play(self, seat: int, action: Action) -> bool:
        """Move a card to the area; False if its pile no longer takes it."""
        card, target = divmod(int(action), _TARGETS)
        after = NEXT_IN_PILE[card]
        if target == 0:
            pile = len(self._piles)
            self._piles.append([seat * DECK + card])
            self._live.append(True)
        else:
            pile = target - 1
            fits = self._fits[card]
            if action not in fits:
                return False
            fits.remove(action)
            self._piles[pile].append(seat * DECK + card)
        if after is not None:
            self._fits[after].append(_ONTO[after][pile])
        else:
            self._complete.append(pile)
            if len(self._complete) == 3:
                for done in self._complete:
                    self._live[done] = False
                self._removed.extend(self._complete)
                self._complete = []
        self._area[seat] += 1
        line = self._line[seat]
        waste = self._waste[seat]
        if card in line:
            line[line.index(card)] = self._goof[seat].pop()
        elif waste[-1] == card:
            waste.pop()
        else:
            waste.pop(self._back[seat])
            self._back[seat] = -1
        return True

    def _turn(self, seat: int) -> None:
        stock = self._stock[seat]
        waste = self._waste[seat]
        if not stock:
            waste.reverse()
            self._stock[seat], self._waste[seat] = waste, stock
            stock, waste = waste, stock
        self._back[seat] = len(waste) - 1
        if len(stock) >= TURN_SIZE:
            # TURN_SIZE (3) pops, written out. The top card (last) is turned first,
            # so the third one ends on top of the waste.
            waste += (stock.pop(), stock.pop(), stock.pop())
            self._turned[seat] += TURN_SIZE
        else:
            self._turned[seat] += len(stock)
            waste.extend(reversed(stock))
            stock.clear()

    def _stalled(self) -> bool:
        """Every seat has turned through its stock and waste since the last
        progress, and no seat can play any card."""
        for seat in self._seats:
            if self._turned[seat] < len(self._stock[seat]) + len(self._waste[seat]):
                return False
        return not any(self._legal_of(seat)[0] < TURN for seat in self._seats)

    def _one_under(self) -> None:
        for seat in self._seats:
            stock = self._stock[seat]
            if not stock:
                waste = self._waste[seat]
                waste.reverse()
                self._stock[seat], self._waste[seat] = waste, stock
                self._back[seat] = -1
                stock = waste
            if stock:
                stock.insert(0, stock.pop())
        self._stall += 1
        self._turned = [0] * self.players
        self._legal = [None] * self.players

    def observation(self, seat: int) -> GoofObservation:
        """The table as `seat` sees it: the public table, since nobody holds a hand."""
        return {**self.public_observation(), "seat": seat}

    def public_observation(self) -> GoofPublicObservation:
        """Everything face up, which is public to all."""
        tableau: list[GoofTableau] = []
        for s in self._seats:
            waste = self._waste[s]
            back = self._back[s]
            tableau.append(
                {
                    "seat": s,
                    "goof_pile": len(self._goof[s]),
                    "line": [CARD_IDS[s * DECK + c] for c in self._line[s]],
                    "stock": len(self._stock[s]),
                    "waste": len(waste),
                    "waste_top": CARD_IDS[s * DECK + waste[-1]] if waste else None,
                    "back_three": (
                        CARD_IDS[s * DECK + waste[back]] if 0 <= back < len(waste) - 1 else None
                    ),
                    "area_cards": self._area[s],
                    "full_pass": self._turned[s] >= len(self._stock[s]) + len(waste),
                }
            )
        piles: list[GoofPile] = [
            {
                "id": pile,
                "suit": SUITS[SUIT_OF[cards[-1] % DECK]],
                "top": CARD_IDS[cards[-1]],
                "size": len(cards),
            }
            for pile, cards in enumerate(self._piles)
            if self._live[pile]
        ]
        return {
            "game": SPEC_NAME,
            "players": self.players,
            "round": self._round,
            "dealer": self._dealer,
            "scores": list(self._scores),
            "phase": "over" if self._over else "play",
            "tick": self._tick,
            "tableau": tableau,
            "piles": piles,
            "removed_piles": list(self._removed),
            "one_unders": self._stall,
            "last_tick": [[s, str(a), ok] for s, a, ok in self._last],
            "past_rounds": [
                {"scores": list(end.scores), "goof": end.goof, "end": end.reason}
                for end in self._history
            ],
        }

    def is_over(self) -> bool:
        """True once the last round has been scored."""
        return self._over

    def result(self) -> Result:
        """Total scores and ranks (highest total first; equal totals share a rank)."""
        if not self._over:
            raise ValueError("the game is not over yet")
        return Result(tuple(self._scores), rank_scores(self._scores, higher_is_better=True))

    def log(self) -> GameLog:
        """Seed, options, deal and every tick as [seat, notation] pairs in resolution order."""
        names = GoofAction.NAMES
        return GameLog(
            game=SPEC_NAME,
            players=self.players,
            seed=self.seed,
            options=dict(self.options),
            deal=self._deal,
            moves=[[[seat, names[action]] for seat, action, _ in tick] for tick in self._log],
        )

    def zones(self) -> dict[str, list[str]]:
        """Every card by place; goof pile, stock and waste are listed top card first."""
        zones: dict[str, list[str]] = {}
        for s in self._seats:
            base = s * DECK
            zones[f"goof:{s}"] = [CARD_IDS[base + c] for c in reversed(self._goof[s])]
            zones[f"line:{s}"] = [CARD_IDS[base + c] for c in self._line[s]]
            zones[f"stock:{s}"] = [CARD_IDS[base + c] for c in reversed(self._stock[s])]
            zones[f"waste:{s}"] = [CARD_IDS[base + c] for c in reversed(self._waste[s])]
        zones["piles"] = [
            CARD_IDS[c] for pile, cards in enumerate(self._piles) if self._live[pile] for c in cards
        ]
        zones["removed"] = [CARD_IDS[c] for pile in self._removed for c in self._piles[pile]]
        return zones

    def clone(self, this_round_only: bool = False) -> GoofState:
        """An independent copy with the same future (see `games.core.State.clone`).

        The RNG is copied even for a round-only copy: every tick draws from it.
        """
        new = copy_state(self, with_rng=True)
        # The per-seat and per-pile card lists are lists inside lists: each gets its own.
        new._goof = [cards[:] for cards in self._goof]
        new._line = [cards[:] for cards in self._line]
        new._stock = [cards[:] for cards in self._stock]
        new._waste = [cards[:] for cards in self._waste]
        new._piles = [cards[:] for cards in self._piles]
        new._fits = [plays[:] for plays in self._fits]
        new._pending = dict(self._pending)
        if this_round_only:
            new._rounds = self._round
        return new

    def hidden_cards(self, seat: int) -> set[str]:
        """Face-down cards (goof piles, stocks) and waste cards covered by others.

        The same for every seat: nobody knows the order of their own face-down cards.
        """
        hidden: set[str] = set()
        for s in self._seats:
            base = s * DECK
            waste = self._waste[s]
            back = self._back[s]
            hidden.update(CARD_IDS[base + c] for c in self._goof[s])
            hidden.update(CARD_IDS[base + c] for c in self._stock[s])
            hidden.update(CARD_IDS[base + c] for i, c in enumerate(waste[:-1]) if i != back)
        return hidden


def new_game(
    players: int,
    seed: int,
    options: Mapping[str, object] | None = None,
    deal: object = None,
) -> GoofState:
    """A new game of Goof; `deal` (see the module docstring) fixes the first round."""
    SPEC.check_players(players)
    return GoofState(players, seed, SPEC.resolve_options(options, players), deal)


SPEC = GameSpec(
    name=SPEC_NAME,
    title="Game of Goof",
    min_players=2,
    max_players=MAX_PLAYERS,
    options=OPTIONS,
    simultaneous=True,
    higher_is_better=True,
    new_game=new_game,
    parse_action=TABLE.parse,
)
