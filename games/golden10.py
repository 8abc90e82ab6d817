"""Golden 10: a trick-avoidance game for 3 to 7 players (docs/rules/golden10.md).

The deck is 56 cards: four colours, R (red), Y (yellow), B (black) and
G (green), ranks 1 to 14, 14 high. A card's id and its action notation are
the same text: the rank then the colour, ``"1R"`` .. ``"14R"``, ``"10Y"``.
The only actions are cards.

Each round the dealer deals ``56 // players`` cards to every seat, one at a
time starting left of the dealer; the ``56 % players`` cards left over lie
aside face down and go, still unseen, to whoever wins the first trick. The
seat left of the dealer leads; the others follow the led colour if they can;
the highest card of the led colour wins and leads next. Red cards cost
points (1 each, red 5 costs 5 and red 10 costs 10); taking the yellow 10
takes 10 off. After the last round the lowest total wins.

``deal`` (for ``new_game``) fixes the first round's cards::

    {"hands": [["3R", "14Y", ...], ...],   # one list per seat, 56 // players each
     "left_over": ["7G", ...],            # the 56 % players cards set aside
     "dealer": 2}                         # optional; else drawn from the seed

Later rounds are shuffled from the game's seeded RNG.
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
    choice_option,
    copy_state,
    int_option,
    option_choice,
    option_value,
    rank_scores,
    shuffle,
)
from games.hidden import assign_hidden

COLOURS: Final = "RYBG"
COLOUR_NAMES: Final = ("red", "yellow", "black", "green")
RANKS: Final = 14
DECK_SIZE: Final = len(COLOURS) * RANKS


class Card(Action):
    """One Golden 10 card, numbered colour * 14 + rank - 1; prints as ``"10Y"``."""

    __slots__ = ()


TABLE: Final = ActionTable(Card, [f"{rank}{colour}" for colour in COLOURS for rank in range(1, 15)])
CARDS: Final = TABLE.actions

_RED_5: Final = 4
_RED_10: Final = 9
YELLOW_10: Final = RANKS + 9
"""The card number of the yellow 10."""
YELLOW_10_BONUS: Final = 10
"""What taking the yellow 10 takes off a seat's round score."""
_RED_MASK: Final = (1 << RANKS) - 1
_COLOUR_MASK: Final = tuple(_RED_MASK << (RANKS * colour) for colour in range(len(COLOURS)))
COLOUR_OF: Final = tuple(card // RANKS for card in range(DECK_SIZE))
"""Each card's colour, as an index into COLOURS."""
RANK_OF: Final = tuple(card % RANKS + 1 for card in range(DECK_SIZE))
"""Each card's rank, 1 .. 14 (14 high)."""
_BIT: Final = tuple(1 << card for card in range(DECK_SIZE))
_CHUNK: Final = 7
"""Hands are split into 7-bit chunks (two per colour) to turn masks into card lists."""
_CHUNK_CARDS: Final[tuple[tuple[list[Action], ...], ...]] = tuple(
    tuple(
        [CARDS[base + bit] for bit in range(_CHUNK) if low >> bit & 1] for low in range(1 << _CHUNK)
    )
    for base in range(0, DECK_SIZE, _CHUNK)
)
_CHUNK_LOW: Final = (1 << _CHUNK) - 1
assert RANKS == 2 * _CHUNK and len(COLOURS) == 4, "_by_colour writes out two chunks per colour"
_MOVES: Final = tuple(tuple((seat, card) for card in CARDS) for seat in range(7))  # 3..7 players
"""`_MOVES[seat][card]` is the `(seat, card)` pair the move log keeps: shared, as
allocating one per card played costs more than the rest of its bookkeeping (and
feeds the garbage collector)."""
_ONE_SEAT: Final = tuple((seat,) for seat in range(7))
"""`_ONE_SEAT[seat]` is `(seat,)`, the `to_act` of a turn: shared, not one per call."""
_PLAY: Final = tuple(
    (_BIT[card], COLOUR_OF[card], tuple(_MOVES[s][card] for s in range(7))) for card in CARDS
)
"""`_PLAY[card]`: what playing a card needs of it, in one lookup (indexing by a card,
an int subclass, takes CPython's slower path): its bit, its colour, its move-log
pair for each seat."""

SPEC_NAME: Final = "golden10"
Yellow10Floor = Literal["round", "game"]
YELLOW10_FLOORS: tuple[Yellow10Floor, ...] = ("round", "game")


@dataclass(frozen=True)
class Golden10Options:
    """The rules options of one game, typed; `of` reads them from the resolved dict."""

    rounds: int
    yellow10_floor: Yellow10Floor

    @classmethod
    def of(cls, values: Mapping[str, object]) -> Golden10Options:
        """The options of `values`, a dict from `SPEC.resolve_options`."""
        return cls(
            rounds=option_value(values, "rounds", int),
            yellow10_floor=option_choice(values, "yellow10_floor", YELLOW10_FLOORS),
        )


class Golden10Trick(TypedDict):
    """A finished trick of the round, as an observation shows it."""

    leader: int
    cards: list[SeatEntry]
    """`[seat, card id]` in play order."""
    winner: int


class Golden10RoundEnd(TypedDict):
    """`last_round`: how the last finished round was scored."""

    round: int
    red_points: list[int]
    yellow10: int
    """The seat that took the yellow 10."""
    score_change: list[int]
    scores: list[int]


class Golden10PublicObservation(TypedDict):
    """What every seat, and a spectator, may see: no hand, the set-aside cards only counted."""

    game: Literal["golden10"]
    players: int
    round: int
    rounds: int
    yellow10_floor: Yellow10Floor
    dealer: int
    scores: list[int]
    phase: Literal["play", "over"]
    to_act: int | None
    hand_sizes: list[int]
    led_colour: str | None
    trick: list[SeatEntry]
    """The trick in progress: `[seat, card id]` in play order."""
    tricks: list[Golden10Trick]
    red_points_taken: list[int]
    yellow10_taken_by: int | None
    left_over_count: int
    left_over_taker: int | None
    last_round: Golden10RoundEnd | None


class Golden10Observation(Golden10PublicObservation):
    """What one seat knows (docs/rules/golden10.md describes every key)."""

    seat: int
    hand: list[str]


# -- rules helpers, for the engine and for anyone reading an observation -------


def red_points(cards: int) -> int:
    """The red points in a set of cards given as a bitmask (27 for all reds)."""
    red = cards & _RED_MASK
    return red.bit_count() + (4 if red >> _RED_5 & 1 else 0) + (9 if red >> _RED_10 & 1 else 0)


CARD_POINTS: Final = tuple(red_points(1 << card) for card in range(DECK_SIZE))
"""Each card's red points: 1 per red card, 5 for the red 5, 10 for the red 10."""


def round_score(points: int, took_yellow10: bool) -> int:
    """A seat's score for a round before any floor at 0: its red points, less 10 for the yellow 10."""
    return points - (YELLOW_10_BONUS if took_yellow10 else 0)


def game_over(round_number: int, rounds: int) -> bool:
    """Whether the game ends with round `round_number` (the `rounds` option)."""
    return round_number >= rounds


def best_in_trick(cards: Sequence[int]) -> int:
    """Index in `cards` (card numbers, in play order) of the card that takes the trick.

    The highest card of the colour led takes it.
    """
    led = COLOUR_OF[cards[0]]
    best_at = 0
    for i in range(1, len(cards)):
        if COLOUR_OF[cards[i]] == led and cards[i] > cards[best_at]:
            best_at = i
    return best_at


def trick_winner(plays: Sequence[tuple[int, str]]) -> int:
    """The seat that takes a complete trick of `(seat, card id)` plays, in play order."""
    return plays[best_in_trick([TABLE.parse(card) for _, card in plays])][0]


def _cards_of(mask: int) -> list[Action]:
    """The cards of a bitmask, in deck order (by colour, then rank)."""
    cards: list[Action] = []
    chunk = 0
    while mask:
        cards += _CHUNK_CARDS[chunk][mask & _CHUNK_LOW]
        mask >>= _CHUNK
        chunk += 1
    return cards


def _by_colour(mask: int) -> list[list[Action]]:
    """The cards of a bitmask, one list per colour (in COLOURS order), each by rank.

    Two chunks per colour, written out rather than looped: this runs for every
    hand dealt, and the loop would double its cost.
    """
    table, low = _CHUNK_CARDS, _CHUNK_LOW
    return [
        table[0][mask & low] + table[1][mask >> 7 & low],
        table[2][mask >> 14 & low] + table[3][mask >> 21 & low],
        table[4][mask >> 28 & low] + table[5][mask >> 35 & low],
        table[6][mask >> 42 & low] + table[7][mask >> 49 & low],
    ]


def _names(mask: int) -> list[str]:
    return [Card.NAMES[card] for card in _cards_of(mask)]


class Golden10State:
    """A game of Golden 10 in progress; see the module docstring and `games.core.State`."""

    # Every attribute is declared, as in the other engines (`copy_state` copies them
    # by these names).
    __slots__ = (
        "_best",
        "_count",
        "_deal_log",
        "_dealer",
        "_floor_per_round",
        "_hands",
        "_held",
        "_last_round",
        "_led",
        "_left_over",
        "_left_over_taker",
        "_log",
        "_next_seat",
        "_over",
        "_rng",
        "_round",
        "_round_start",
        "_rounds",
        "_set_aside",
        "_totals",
        "_trick",
        "_trick_winners",
        "_turn",
        "_winner",
        "_won",
        "options",
        "players",
        "seed",
        "spec",
    )

    def _set_up(self, players: int, seed: int, options: Mapping[str, object]) -> None:
        """What every state starts from: the options read, no moves, totals at 0, round 1."""
        self.spec = SPEC
        self.players = players
        self.seed = seed
        self.options = options
        rules = Golden10Options.of(options)
        self._rounds = rules.rounds
        self._floor_per_round = rules.yellow10_floor == "round"
        self._rng = random.Random(seed)
        self._next_seat = tuple((seat + 1) % players for seat in range(players))  # to the left
        self._deal_log: JSON = None
        self._log: list[tuple[int, int]] = []
        self._totals = [0] * players
        self._last_round: Golden10RoundEnd | None = None
        self._over = False
        self._round = 1

    def __init__(
        self, players: int, seed: int, options: Mapping[str, object], deal: object
    ) -> None:
        self._set_up(players, seed, options)
        self._dealer = self._rng.randrange(players)
        if deal is not None:
            hands, left_over, dealer = _read_deal(deal, players)
            if dealer is not None:
                self._dealer = dealer
            self._deal_log = {
                "hands": [_names(hand) for hand in hands],
                "left_over": _names(left_over),
                "dealer": self._dealer,
            }
            self._start_round(hands, left_over)
        else:
            self._deal_round()

    # -- set-up ---------------------------------------------------------------

    def _deal_round(self) -> None:
        """Shuffle and deal one card at a time, starting left of the dealer."""
        players = self.players
        # The deck is shuffled as the cards' bits (the swaps do not depend on the
        # items), so a hand's mask is the sum of its cards: distinct bits.
        deck = list(_BIT)
        shuffle(self._rng, deck)
        dealt = DECK_SIZE // players * players
        hands = [0] * players
        for offset in range(players):
            # The offset-th seat from the dealer's left gets every players-th card.
            hands[(self._dealer + 1 + offset) % players] = sum(deck[offset:dealt:players])
        self._start_round(hands, sum(deck[dealt:]))

    def _start_round(self, hands: list[int], left_over: int) -> None:
        self._hands = hands
        # The same hands as card lists, per seat one list per colour: the legal
        # cards are a copy of one list (following) or all four joined, cheaper
        # than building them from the mask on every turn.
        self._held = [_by_colour(hand) for hand in hands]
        self._left_over = left_over
        self._set_aside = left_over
        self._left_over_taker: int | None = None
        self._won = [0] * self.players
        self._round_start = len(self._log)
        self._trick_winners: list[int] = []
        self._trick = 0
        self._count = 0
        self._led = 0
        self._best = 0
        self._winner = 0
        self._turn = (self._dealer + 1) % self.players

    # -- the State protocol ---------------------------------------------------

    @property
    def last_round(self) -> Golden10RoundEnd | None:
        """The outcome of the last finished round (as in the observation), or None."""
        return self._last_round_copy()

    @property
    def round(self) -> int:
        """The number of the current round, from 1 (the last one once over)."""
        return self._round

    def to_act(self) -> tuple[int, ...]:
        """The one seat that must play a card now; empty once the game is over."""
        return () if self._over else _ONE_SEAT[self._turn]

    def legal_actions(self, seat: int) -> list[Action]:
        """The cards `seat` may play now: the led colour if it holds any, else any card."""
        if seat != self._turn or self._over:
            return []
        held = self._held[seat]
        if self._count:
            following = held[self._led]
            if following:
                return following[:]
        # Leading, or unable to follow: any card in hand (four colours, in deck order).
        return [*held[0], *held[1], *held[2], *held[3]]

    def apply(self, seat: int, action: Action | int | str) -> None:
        """Play one card for `seat`; raises IllegalAction if the rules forbid it."""
        card = action if action.__class__ is Card else TABLE.coerce(action)
        if seat != self._turn or self._over:
            raise IllegalAction(self._turn_message(seat))
        hand = self._hands[seat]
        bit, colour, logged = _PLAY[card]
        if not hand & bit:
            raise IllegalAction(f"seat {seat} does not hold {card}; {self._legal_text(seat)}")
        count = self._count
        if count:
            if colour != self._led:
                if hand & _COLOUR_MASK[self._led]:
                    raise IllegalAction(
                        f"seat {seat} must follow {COLOUR_NAMES[self._led]}; "
                        + self._legal_text(seat)
                    )
            elif card > self._best:
                self._best = card
                self._winner = seat
        else:
            self._led = colour
            self._best = card
            self._winner = seat
        self._hands[seat] = hand ^ bit
        self._held[seat][colour].remove(card)
        self._trick |= bit
        self._log.append(logged[seat])
        self._count = count + 1
        if count + 1 < self.players:
            self._turn = self._next_seat[seat]
        else:
            self._end_trick()

    def _end_trick(self) -> None:
        winner = self._winner
        self._won[winner] |= self._trick
        if self._left_over_taker is None:
            self._won[winner] |= self._left_over
            self._left_over = 0
            self._left_over_taker = winner
        self._trick_winners.append(winner)
        self._trick = 0
        self._count = 0
        self._turn = winner
        if not self._hands[winner]:
            self._end_round()

    def _end_round(self) -> None:
        change = [0] * self.players
        points = [red_points(won) for won in self._won]
        yellow10 = next(seat for seat, won in enumerate(self._won) if won >> YELLOW_10 & 1)
        for seat in range(self.players):
            score = round_score(points[seat], seat == yellow10)
            before = self._totals[seat]
            if self._floor_per_round:
                self._totals[seat] = before + max(0, score)
            else:
                self._totals[seat] = max(0, before + score)
            change[seat] = self._totals[seat] - before
        self._last_round = {
            "round": self._round,
            "red_points": points,
            "yellow10": yellow10,
            "score_change": change,
            "scores": list(self._totals),
        }
        if game_over(self._round, self._rounds):
            self._over = True
            return
        self._round += 1
        self._dealer = (self._dealer + 1) % self.players
        self._deal_round()

    def observation(self, seat: int) -> Golden10Observation:
        """What `seat` knows: its hand and all that is public."""
        return {**self.public_observation(), "seat": seat, "hand": _names(self._hands[seat])}

    def public_observation(self) -> Golden10PublicObservation:
        """What every seat may see: this round's tricks so far, everyone's scores.

        The set-aside cards appear only as a count and the seat that took them.
        """
        players = self.players
        moves = self._log[self._round_start :]
        tricks: list[Golden10Trick] = []
        taken_points = [0] * players
        yellow10_taken_by: int | None = None
        for number, winner in enumerate(self._trick_winners):
            plays = moves[number * players : (number + 1) * players]
            tricks.append(
                {
                    "leader": plays[0][0],
                    "cards": [[who, Card.NAMES[card]] for who, card in plays],
                    "winner": winner,
                }
            )
            played = sum(_BIT[card] for _, card in plays)
            taken_points[winner] += red_points(played)
            if played >> YELLOW_10 & 1:
                yellow10_taken_by = winner
        current = moves[len(self._trick_winners) * players :]
        return {
            "game": SPEC_NAME,
            "players": players,
            "round": self._round,
            "rounds": self._rounds,
            "yellow10_floor": "round" if self._floor_per_round else "game",
            "dealer": self._dealer,
            "scores": list(self._totals),
            "phase": "over" if self._over else "play",
            "to_act": None if self._over else self._turn,
            "hand_sizes": [hand.bit_count() for hand in self._hands],
            "led_colour": COLOURS[self._led] if current else None,
            "trick": [[who, Card.NAMES[card]] for who, card in current],
            "tricks": tricks,
            "red_points_taken": taken_points,
            "yellow10_taken_by": yellow10_taken_by,
            "left_over_count": DECK_SIZE % players,
            "left_over_taker": self._left_over_taker,
            "last_round": self._last_round_copy(),
        }

    def _last_round_copy(self) -> Golden10RoundEnd | None:
        return None if self._last_round is None else _round_end_copy(self._last_round)

    def is_over(self) -> bool:
        """True once the last round has been scored."""
        return self._over

    def result(self) -> Result:
        """Totals and ranks (lowest total is rank 1; equal totals share a rank)."""
        if not self._over:
            raise ValueError("the game is not over yet")
        scores = tuple(self._totals)
        return Result(scores=scores, ranks=rank_scores(scores, higher_is_better=False))

    def log(self) -> GameLog:
        """The event log from which `games.replay` rebuilds this state."""
        return GameLog(
            game=SPEC_NAME,
            players=self.players,
            seed=self.seed,
            options=dict(self.options),
            deal=self._deal_log,
            moves=[[seat, Card.NAMES[card]] for seat, card in self._log],
        )

    def zones(self) -> dict[str, list[str]]:
        """Every card's place: each seat's hand and won pile, the trick, the set-aside cards."""
        zones: dict[str, list[str]] = {}
        for seat, hand in enumerate(self._hands):
            zones[f"hand:{seat}"] = _names(hand)
        zones["left_over"] = _names(self._left_over)
        zones["trick"] = _names(self._trick)
        for seat, won in enumerate(self._won):
            zones[f"won:{seat}"] = _names(won)
        return zones

    def hidden_cards(self, seat: int) -> set[str]:
        """Others' hands, and the set-aside cards until the round's end scores them."""
        hidden = 0
        for other, hand in enumerate(self._hands):
            if other != seat:
                hidden |= hand
        if not self._over:
            # Once taken, the set-aside cards still lie unseen in the first trick winner's pile.
            hidden |= self._set_aside
        return set(_names(hidden))

    # -- simulation -------------------------------------------------------------

    def clone(self, this_round_only: bool = False) -> Golden10State:
        """An independent copy, cheap enough for search: ints, masks and small lists.

        The copy has the same future as the original (its RNG state included);
        changing one never changes the other. With `this_round_only` the
        copy's game ends with the current round, as a search playout wants:
        no next deal is shuffled, and `last_round` then tells the outcome.
        """
        new = copy_state(self, with_rng=not this_round_only)
        new._held = [[cards[:] for cards in colours] for colours in self._held]  # each its own
        if this_round_only:
            new._rounds = self._round
        return new

    # -- messages ---------------------------------------------------------------

    def _turn_message(self, seat: int) -> str:
        if self._over:
            return "the game is over; nobody may act"
        if not 0 <= seat < self.players:
            return f"there is no seat {seat}; seats are 0..{self.players - 1}"
        return f"it is seat {self._turn}'s turn, not seat {seat}'s"

    def _legal_text(self, seat: int) -> str:
        return "legal: " + ", ".join(str(card) for card in self.legal_actions(seat))


def _read_deal(deal: object, players: int) -> tuple[list[int], int, int | None]:
    """Check a `deal` dict and return the hands and set-aside cards as bitmasks."""
    if not isinstance(deal, Mapping):
        raise ValueError(f"deal must be a dict with 'hands' and 'left_over', got {deal!r}")
    unknown = set(deal) - {"hands", "left_over", "dealer"}
    if unknown:
        raise ValueError(f"deal has unknown keys {sorted(unknown)}; keys: hands, left_over, dealer")
    hands_in = deal.get("hands")
    if not isinstance(hands_in, list) or len(hands_in) != players:
        raise ValueError(f"deal['hands'] must be a list of {players} hands")
    size = DECK_SIZE // players
    seen = 0

    def mask_of(cards: object, where: str, count: int) -> int:
        nonlocal seen
        if not isinstance(cards, list) or len(cards) != count:
            raise ValueError(f"{where} must be a list of {count} cards, got {cards!r}")
        mask = 0
        for name in cards:
            if not isinstance(name, str) or name.strip() not in Card.NAMES:
                raise ValueError(f"{where}: {name!r} is not a Golden 10 card")
            bit = _BIT[TABLE.parse(name)]
            if seen & bit:
                raise ValueError(f"{where}: card {name.strip()} is dealt twice")
            seen |= bit
            mask |= bit
        return mask

    hands = [mask_of(hand, f"hand of seat {seat}", size) for seat, hand in enumerate(hands_in)]
    left_over = mask_of(deal.get("left_over", []), "left_over", DECK_SIZE % players)
    dealer = deal.get("dealer")
    if dealer is not None and (
        isinstance(dealer, bool) or not isinstance(dealer, int) or not 0 <= dealer < players
    ):
        raise ValueError(f"deal['dealer'] must be a seat 0..{players - 1}, got {dealer!r}")
    return hands, left_over, dealer


def _round_end_copy(end: Golden10RoundEnd) -> Golden10RoundEnd:
    """A copy whose lists are the copy's own."""
    return {
        "round": end["round"],
        "red_points": list(end["red_points"]),
        "yellow10": end["yellow10"],
        "score_change": list(end["score_change"]),
        "scores": list(end["scores"]),
    }


def _mask_of(names: Sequence[str]) -> int:
    mask = 0
    for name in names:
        mask |= _BIT[TABLE.parse(name)]
    return mask


def sample_deal(observation: Golden10Observation, rng: random.Random) -> dict[str, JSON]:
    """Every card's place now, the ones `observation`'s seat cannot see drawn at random.

    Returns ``{"hands": [...], "left_over": [...], "dealer": d}`` (see
    `games.sampling`): the seat's own hand as it is, the others' hands of the
    sizes shown, nobody holding a colour they failed to follow, and the
    set-aside cards (``left_over_count`` of them, still unseen even once taken).
    """
    players = observation["players"]
    seat = observation["seat"]
    if observation["phase"] == "over":
        raise ValueError("the game is over: nothing is hidden")
    known = _mask_of(observation["hand"])
    lacks = [0] * players
    tricks = [trick["cards"] for trick in observation["tricks"]]
    if observation["trick"]:
        tricks.append(observation["trick"])
    for cards in tricks:
        led = COLOUR_OF[TABLE.parse(cards[0][1])]
        for who, name in cards:
            card = TABLE.parse(name)
            known |= _BIT[card]
            if COLOUR_OF[card] != led:
                lacks[who] |= _COLOUR_MASK[led]
    others = [other for other in range(players) if other != seat]
    capacities = [observation["hand_sizes"][other] for other in others]
    capacities.append(observation["left_over_count"])
    hidden = [number for number in range(DECK_SIZE) if not known >> number & 1]
    allowed: dict[int, int] = {}
    for number in hidden:
        mask = 1 << len(others)  # the set-aside cards may be anything
        for i, other in enumerate(others):
            if not lacks[other] >> number & 1:
                mask |= 1 << i
        allowed[number] = mask
    held = assign_hidden(hidden, capacities, allowed, rng)
    hands: list[JSON] = [[] for _ in range(players)]
    hands[seat] = list(observation["hand"])
    for i, other in enumerate(others):
        hands[other] = _names(sum(_BIT[card] for card in held[i]))
    left_over = _names(sum(_BIT[card] for card in held[-1]))
    return {"hands": hands, "left_over": left_over, "dealer": observation["dealer"]}


def state_from_observation(
    observation: Golden10Observation, deal: Mapping[str, Any], seed: int = 0
) -> Golden10State:
    """The state at `observation`'s point of the round, cards placed as `deal` says.

    `deal` is what `sample_deal` returns (hands as they are now, the set-aside
    cards); the tricks, trick in progress and scores come from the
    observation. The state's RNG is seeded with `seed`; its log holds only
    this round's cards so far (see `games.sampling`).
    """
    if observation["phase"] == "over":
        raise ValueError("the game is over: there is no round to rebuild")
    players = observation["players"]
    options = SPEC.resolve_options(
        {"rounds": observation["rounds"], "yellow10_floor": observation["yellow10_floor"]},
        players,
    )
    state = object.__new__(Golden10State)
    state._set_up(players, seed, options)
    state._totals = list(observation["scores"])
    last = observation["last_round"]
    state._last_round = None if last is None else _round_end_copy(last)
    state._round = observation["round"]
    state._dealer = observation["dealer"]
    left_over = _mask_of(deal["left_over"])
    state._start_round([_mask_of(hand) for hand in deal["hands"]], left_over)
    for trick in observation["tricks"]:
        winner = trick["winner"]
        for who, name in trick["cards"]:
            card = TABLE.parse(name)
            state._log.append((who, card))
            state._won[winner] |= _BIT[card]
        state._trick_winners.append(winner)
    taker = observation["left_over_taker"]
    if taker is not None:
        state._left_over = 0
        state._left_over_taker = taker
        state._won[taker] |= left_over
    for who, name in observation["trick"]:
        card = TABLE.parse(name)
        state._log.append((who, card))
        state._trick |= _BIT[card]
        colour = COLOUR_OF[card]
        if state._count == 0:
            state._led = colour
            state._best = card
            state._winner = who
        elif colour == state._led and card > state._best:
            state._best = card
            state._winner = who
        state._count += 1
    to_act = observation["to_act"]
    assert to_act is not None, "someone acts until the game is over"
    state._turn = to_act
    return state


def new_game(
    players: int,
    seed: int,
    options: Mapping[str, object] | None = None,
    deal: object = None,
) -> Golden10State:
    """Start a game of Golden 10; `deal` fixes the first round (module docstring)."""
    SPEC.check_players(players)
    return Golden10State(players, seed, SPEC.resolve_options(options, players), deal)


SPEC: Final = GameSpec(
    name=SPEC_NAME,
    title="Golden 10",
    min_players=3,
    max_players=7,
    options=(
        OptionSpec("rounds", 6, "number of rounds played", int_option(1, 100)),
        OptionSpec(
            "yellow10_floor",
            "round",
            "where the yellow 10's -10 stops at 0: 'round' (the round's score) "
            "or 'game' (the running total)",
            choice_option(*YELLOW10_FLOORS),
        ),
    ),
    simultaneous=False,
    higher_is_better=False,
    new_game=new_game,
    parse_action=TABLE.parse,
    sample_deal=sample_deal,
    state_from_observation=state_from_observation,
)
