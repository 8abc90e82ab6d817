"""Pure rules engines for the three games of Card Arena.

No I/O, no clock and no global random state: every game takes a seed and
draws from its own `random.Random`. The same seed and the same actions give
the same game.

Public API::

    import games

    spec = games.get("goodge")          # GameSpec: name, players, options
    state = spec.new_game(4, seed=7, options={"one_high": False}, deal=None)
    while not state.is_over():
        seat = state.to_act()[0]
        state.apply(seat, state.legal_actions(seat)[0])
    state.result()                      # Result(scores=..., ranks=...)
    games.replay(state.log())           # an identical state

- `spec.new_game(players, seed, options=None, deal=None)`; `deal` fixes the
  first deal (see each game's module docstring for its shape).
- `state.to_act()` is the seats that must act now: one seat in Goodge and
  Golden 10, every seat in a Goof tick.
- `state.legal_actions(seat)`, `state.apply(seat, action)`; in Goof
  `state.apply_tick(actions, order)` applies a whole tick at once, and
  `apply` collects a tick's actions in arrival order until every seat has
  acted.
- `state.observation(seat)` is JSON-ready and holds only what `seat` may
  know, as the game's TypedDict (`goodge.GoodgeObservation`, ...);
  `state.is_over()`, `state.result()` (rank 1 is best, ties share);
  `state.log()` and `games.replay(log)`.
- `state.clone()` is an independent copy with the same future, for search;
  `state.clone(this_round_only=True)` ends its game with the current round.
- What not every game can do, its spec declares: `spec.simultaneous` (ticks),
  `spec.sample_deal` and `spec.state_from_observation` (guessing what a seat
  cannot see; `games.sampling`). Each engine module also exports the rules
  that others need (card points, trick winners, the end-of-game test, card
  notation), so no one outside `games` writes them again.
- Every action has one text notation: `str(action)` gives it and
  `spec.parse_action(text)` reads it back; `apply` takes either.
- An action the rules forbid raises `games.IllegalAction` (a ValueError)
  whose message says what was wrong and what is allowed.

Notation, per game (full tables in docs/rules/):
- Goodge: cards `1S` .. `10S` in suits S (Spades), D (Diamonds),
  R (staRs), H (Hearts), C (Clubs), and `CR` for the Crown; `bid:55`,
  `pass`, `trump:H`. Discards and plays are the card itself.
- Golden 10: cards `1R` .. `14R` in colours R, Y, B, G.
- Goof: cards `AS`, `2S` .. `10S`, `JS`, `QS`, `KS` in suits S, H, D, C;
  the card ids in zones and observations add the owner, `7H@2`; actions
  are `7H>p3` (onto pile 3), `AS>new` (an Ace starts a pile), `turn`, `wait`.
"""

from __future__ import annotations

from games import golden10, goodge, goof
from games.core import (
    Action,
    GameLog,
    GameSpec,
    IllegalAction,
    OptionSpec,
    Result,
    State,
    TickState,
    parse_option_pairs,
)

__all__ = [
    "Action",
    "GameLog",
    "GameSpec",
    "IllegalAction",
    "OptionSpec",
    "Result",
    "State",
    "TickState",
    "get",
    "names",
    "parse_option_pairs",
    "replay",
]

_SPECS: dict[str, GameSpec] = {spec.name: spec for spec in (goodge.SPEC, golden10.SPEC, goof.SPEC)}


def names() -> list[str]:
    """The names of all games, as `get` takes them."""
    return list(_SPECS)


def get(name: str) -> GameSpec:
    """The spec of the game called `name` (goodge, golden10 or goof)."""
    try:
        return _SPECS[name]
    except KeyError:
        raise ValueError(f"no game called {name!r}; games are: {', '.join(_SPECS)}") from None


def replay(log: GameLog) -> State:
    """Rebuild the state that produced `log`, by replaying its moves."""
    spec = get(log["game"])
    state = spec.new_game(log["players"], log["seed"], log["options"], log["deal"])
    if isinstance(state, TickState) and spec.simultaneous:
        for tick in log["moves"]:
            order = [seat for seat, _ in tick]
            state.apply_tick({seat: action for seat, action in tick}, order)
    else:
        for seat, action in log["moves"]:
            state.apply(seat, action)
    return state
