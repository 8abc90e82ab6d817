"""What every game engine shares: actions, options, specs, results, logs.

Nothing here knows a particular game. Each game module builds a `GameSpec`
and a state class that satisfies the `State` protocol.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, ClassVar, Protocol, Self, TypedDict, TypeVar, runtime_checkable

JSON = Any
"""A value made of dicts, lists, strings, ints, floats, bools and None."""

SeatEntry = list[Any]
"""`[seat, card id or notation, ...]` in an observation: JSON has no tuples, so
a list whose first item is the seat (`[2, "10S"]`, `[0, "7H>p3", true]`)."""


class IllegalAction(ValueError):
    """An action that the rules do not allow at this point.

    The message says what was wrong and what is allowed instead, so it can be
    shown to a bot author as it is.
    """


class Action(int):
    """One action of a game: a small int that prints as its text notation.

    Every game subclasses this with its own table of names and creates each
    action once, so legal-action lists hold shared objects and comparisons
    are plain int comparisons on the hot path.
    """

    __slots__ = ()
    NAMES: ClassVar[tuple[str, ...]] = ()

    def __str__(self) -> str:
        return self.NAMES[self]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.NAMES[self]!r})"


class ActionTable:
    """The finite set of actions of one game, by number and by notation."""

    def __init__(self, cls: type[Action], names: Sequence[str]) -> None:
        if len(set(names)) != len(names):
            raise ValueError("action names must be unique")
        cls.NAMES = tuple(names)
        self.cls = cls
        self.actions: tuple[Action, ...] = tuple(cls(i) for i in range(len(names)))
        self._by_name = {name: self.actions[i] for i, name in enumerate(names)}

    def __len__(self) -> int:
        return len(self.actions)

    def parse(self, text: str) -> Action:
        """The action whose notation is `text` (surrounding blanks ignored)."""
        try:
            return self._by_name[text.strip()]
        except KeyError:
            raise IllegalAction(
                f"{text!r} is not an action of this game; examples: "
                + ", ".join(
                    self.cls.NAMES[i]
                    for i in range(0, len(self.actions), max(1, len(self.actions) // 6))
                )
            ) from None

    def coerce(self, action: Action | int | str) -> Action:
        """Accept an action object, its number or its notation."""
        if isinstance(action, str):
            return self.parse(action)
        if 0 <= action < len(self.actions):
            return self.actions[action]
        raise IllegalAction(f"action number {action} is out of range 0..{len(self.actions) - 1}")


@dataclass(frozen=True)
class OptionSpec:
    """One named rules option: its default and how to read and check a value.

    `coerce` takes either the typed value or its text (as given on a command
    line) and returns the checked value, raising ValueError with a clear
    message otherwise. It also gets the number of players, for per-seat values.
    """

    name: str
    default: object
    help: str
    coerce: Callable[[object, int], object]


def int_option(low: int, high: int | None = None) -> Callable[[object, int], object]:
    """A coercer for an integer option within [low, high]."""

    def coerce(value: object, players: int) -> object:
        number = _to_int(value)
        if number < low or (high is not None and number > high):
            bound = f"{low}..{high}" if high is not None else f">= {low}"
            raise ValueError(f"must be an integer {bound}, got {value!r}")
        return number

    return coerce


def optional_int_option(low: int) -> Callable[[object, int], object]:
    """A coercer for an integer option that may also be none (off)."""
    inner = int_option(low)

    def coerce(value: object, players: int) -> object:
        if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none")):
            return None
        return inner(value, players)

    return coerce


def bool_option(value: object, players: int) -> object:
    """A coercer for a true/false option."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "yes", "1", "on"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("false", "no", "0", "off"):
        return False
    raise ValueError(f"must be true or false, got {value!r}")


def choice_option(*choices: str) -> Callable[[object, int], object]:
    """A coercer for an option that takes one of a few names."""

    def coerce(value: object, players: int) -> object:
        if isinstance(value, str) and value.strip() in choices:
            return value.strip()
        raise ValueError(f"must be one of {', '.join(choices)}, got {value!r}")

    return coerce


_Value = TypeVar("_Value")


def option_value(values: Mapping[str, object], name: str, kind: type[_Value]) -> _Value:
    """`values[name]` of resolved options (`GameSpec.resolve_options`), checked to be a `kind`.

    Each engine reads its options into a frozen dataclass with this, once per game.
    """
    value = values[name]
    if not isinstance(value, kind):
        raise ValueError(f"option {name} must be of type {kind.__name__}, got {value!r}")
    return value


def option_choice(values: Mapping[str, object], name: str, choices: Sequence[_Value]) -> _Value:
    """`values[name]` of resolved options, checked to be one of `choices` (typed as they are)."""
    value = values[name]
    for choice in choices:
        if value == choice:
            return choice
    raise ValueError(f"option {name} must be one of {', '.join(map(str, choices))}, got {value!r}")


def _to_int(value: object) -> int:
    if isinstance(value, bool):
        raise ValueError(f"must be an integer, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    raise ValueError(f"must be an integer, got {value!r}")


@dataclass(frozen=True)
class Result:
    """The outcome of a finished game, per seat.

    `ranks[seat]` is 1 for the best; seats with equal standing share a rank
    and the next rank is skipped (1, 1, 3).
    """

    scores: tuple[int, ...]
    ranks: tuple[int, ...]


def rank_scores(scores: Sequence[int], higher_is_better: bool = True) -> tuple[int, ...]:
    """Competition ranks (1 is best, ties share) for the given scores."""
    sign = -1 if higher_is_better else 1
    return tuple(1 + sum(1 for other in scores if sign * other < sign * own) for own in scores)


_Shuffled = TypeVar("_Shuffled")


@cache
def _shuffle_steps(size: int) -> tuple[tuple[int, int], ...]:
    """For each swap of a shuffle of `size` items: its position and the bits its draw takes."""
    return tuple((i, (i + 1).bit_length()) for i in reversed(range(1, size)))


def shuffle(rng: random.Random, items: list[_Shuffled]) -> None:
    """Shuffle `items` in place exactly as `rng.shuffle(items)` does, about twice as fast.

    The same Fisher-Yates swaps, each drawing below i + 1 by rejection from
    `getrandbits` as `random.Random` does, so the order and the generator's
    state afterwards are the same. A deal is one shuffle every few dozen
    actions, and `Random.shuffle` spends most of its time in one Python call
    per card; here the bit counts come from a table and the draw is inline.
    """
    getrandbits = rng.getrandbits
    for i, bits in _shuffle_steps(len(items)):
        j = getrandbits(bits)
        while j > i:
            j = getrandbits(bits)
        items[i], items[j] = items[j], items[i]


_Copied = TypeVar("_Copied")


def copy_state(state: _Copied, with_rng: bool) -> _Copied:
    """A copy of an engine's state for search: its lists copied, the rest shared.

    The engines declare every attribute in `__slots__` and keep what a move
    changes in lists (of ints, bools and tuples) and in plain values that a
    move replaces rather than changes, so copying the lists is enough for the
    copy and the original to go their own ways (an engine copies its lists of
    lists itself). The random generator's state is copied `with_rng`;
    otherwise the copy gets a fresh generator, for a copy that deals no more.
    """

    def copied(value: object) -> object:
        if isinstance(value, list):
            return value[:]
        if isinstance(value, random.Random):
            fresh = random.Random()
            if with_rng:
                fresh.setstate(value.getstate())
            return fresh
        return value

    new = object.__new__(type(state))
    for name in type(state).__slots__:  # type: ignore[attr-defined]  # every engine has them
        setattr(new, name, copied(getattr(state, name)))
    return new


class GameLog(TypedDict):
    """Everything needed to rebuild a game: `games.replay(log)` does it.

    `moves` holds `[seat, action]` pairs in the order they were applied. In a
    simultaneous game each entry is instead one tick: the list of its
    `[seat, action]` pairs in the order the referee resolved them.
    """

    game: str
    players: int
    seed: int
    options: dict[str, JSON]
    deal: JSON
    moves: list[JSON]


@runtime_checkable
class State(Protocol):
    """The state of one game in progress; every engine's state has these."""

    spec: GameSpec
    players: int
    seed: int
    options: Mapping[str, object]

    @property
    def round(self) -> int:
        """The number of the current round, from 1 (the last one once over)."""

    def to_act(self) -> tuple[int, ...]:
        """The seats that must act now; empty once the game is over."""

    def legal_actions(self, seat: int) -> list[Action]:
        """The actions `seat` may take now (empty if it need not act)."""

    def apply(self, seat: int, action: Action | int | str) -> None:
        """Play one action for `seat`; raises IllegalAction if not allowed."""

    def observation(self, seat: int) -> JSON:
        """All that `seat` may know now, as JSON-ready data.

        Each engine returns its own TypedDict (`goodge.GoodgeObservation`,
        `golden10.Golden10Observation`, `goof.GoofObservation`), so code that
        knows the game reads it typed; code that does not passes it on as JSON.
        """

    def public_observation(self) -> JSON:
        """What every seat, and a spectator, may see now, as JSON-ready data.

        The observation's shape without its seat, its hand or any other card that
        some seat cannot see (`hidden_cards`): what a live match shows its watchers.
        Each engine returns its own TypedDict (`goodge.GoodgePublicObservation`, ...).
        """

    def is_over(self) -> bool:
        """True once the game has ended."""

    def result(self) -> Result:
        """Scores and ranks; raises ValueError before the game is over."""

    def log(self) -> GameLog:
        """The event log from which `games.replay` rebuilds this state."""

    def zones(self) -> dict[str, list[str]]:
        """Where every card is: zone name to the card ids in it.

        Each card of the game appears in exactly one zone, at every step.
        """

    def hidden_cards(self, seat: int) -> set[str]:
        """Card ids that `seat` must not see now (in others' hands, face down)."""

    def clone(self, this_round_only: bool = False) -> Self:
        """An independent copy, cheap enough for search, with the same future.

        Playing on the copy never changes the original, and the same actions
        give the same game on both (the RNG state is copied). With
        `this_round_only` the copy's game ends with the current round, as a
        playout wants: no later round is dealt.
        """


@runtime_checkable
class TickState(State, Protocol):
    """The state of a simultaneous game (Goof): everyone acts in each tick."""

    def apply_tick(
        self, actions: Mapping[int, Action | int | str], order: Sequence[int] | None = None
    ) -> list[tuple[int, Action, bool]]:
        """Apply one tick: every seat of `to_act()` gives one action.

        `order` is the order of resolution (arrival order at the referee);
        None draws it from the game's seeded RNG. Returns, in resolution
        order, each seat's action and whether it took effect (a card aimed
        where another card got first fails and stays where it was).
        """


SampleDeal = Callable[[Any, random.Random], dict[str, JSON]]
"""`sample_deal(observation, rng)`: where every card is now, the ones the
observation's seat cannot see drawn to fit all it saw, in the shape of the
game's `deal` (see `games.sampling`). It takes the game's own observation."""

StateFromObservation = Callable[[Any, Mapping[str, Any], int], State]
"""`state_from_observation(observation, deal, seed)`: the state at the
observation's point with the cards placed as `deal` (a `sample_deal` result)
says, its RNG seeded with `seed`."""


@dataclass(frozen=True)
class GameSpec:
    """What a game is, as data: its name, player counts, options and capabilities.

    Every state can be cloned, a whole game or its current round only (the
    `State` protocol). What not every game can do is declared here:

    - `simultaneous`: every seat acts in each tick; the state is a `TickState`.
    - `sample_deal` and `state_from_observation`: the game hides cards that
      matter and can guess them from one seat's observation and rebuild a
      state from the guess (`games.sampling`); None where nothing that
      matters is hidden.
    """

    name: str
    title: str
    min_players: int
    max_players: int
    options: tuple[OptionSpec, ...]
    simultaneous: bool
    higher_is_better: bool
    new_game: Callable[..., State] = field(repr=False, compare=False)
    parse_action: Callable[[str], Action] = field(repr=False, compare=False)
    sample_deal: SampleDeal | None = field(default=None, repr=False, compare=False)
    state_from_observation: StateFromObservation | None = field(
        default=None, repr=False, compare=False
    )

    def defaults(self) -> dict[str, object]:
        """Every option with its default value."""
        return {option.name: option.default for option in self.options}

    def check_players(self, players: int) -> None:
        """Raise ValueError unless the game can be played by `players`."""
        if not self.min_players <= players <= self.max_players:
            raise ValueError(
                f"{self.name} is played by {self.min_players} to {self.max_players} players, "
                f"not {players}"
            )

    def resolve_options(
        self, options: Mapping[str, object] | None, players: int
    ) -> dict[str, object]:
        """The full set of options: defaults overridden by `options`, checked."""
        known = {option.name: option for option in self.options}
        resolved = self.defaults()
        for name, value in (options or {}).items():
            if name not in known:
                raise ValueError(
                    f"{self.name} has no option {name!r}; options are: {', '.join(known) or 'none'}"
                )
            try:
                resolved[name] = known[name].coerce(value, players)
            except ValueError as error:
                raise ValueError(f"option {name}: {error}") from None
        return resolved


def parse_option_pairs(pairs: Iterable[str]) -> dict[str, str]:
    """Read `key=value` texts (as given on a command line) into a dict."""
    options: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"an option is written key=value, got {pair!r}")
        options[key.strip()] = value
    return options
