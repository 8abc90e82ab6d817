"""Guessing the hidden cards of a game from one seat's observation.

Search bots (and anyone who wants to ask "what if") need whole states while a
seat sees only part of one. A game whose spec declares `sample_deal` and
`state_from_observation` (see `games.core.GameSpec`) turns an observation into:

- `sample_deal(observation, rng)`: one assignment of every card the seat
  cannot see, consistent with all it has seen: its own hand, the cards
  played, the suits (colours) others showed they lack by not following, the
  Stash the Goodge made, the number of cards each seat holds and the cards
  set aside. The result has the shape of the game's `deal` and lists the
  cards where they are NOW: at the start of a round (Goodge bidding, Golden
  10 before the first card) it is a valid `deal` for `new_game`.
- `determinize(observation, rng)`: a full state at the observation's point
  of the round (hands, trick in progress, bids, trump, scores ...) with the
  hidden cards drawn by `sample_deal`; `state_from_observation` builds one
  from a deal you chose yourself. Such a state plays on by the rules like any
  other (its RNG is drawn from `rng`), but its `log()` starts at that point,
  so it is for simulation, not for replays.

Goodge and Golden 10 declare both; in Goof nothing that matters is hidden.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import games
from games.core import JSON, SampleDeal, State, StateFromObservation

__all__ = ["determinize", "sample_deal", "state_from_observation"]


def _capabilities(observation: Mapping[str, Any]) -> tuple[SampleDeal, StateFromObservation]:
    """The spec's sampler and rebuilder for the observation's game; ValueError if it has none."""
    spec = games.get(str(observation.get("game")))
    if spec.sample_deal is None or spec.state_from_observation is None:
        able = [name for name in games.names() if games.get(name).sample_deal is not None]
        raise ValueError(f"cannot sample the hidden cards of {spec.name!r}: {', '.join(able)} only")
    return spec.sample_deal, spec.state_from_observation


def sample_deal(observation: Mapping[str, Any], rng: random.Random) -> dict[str, JSON]:
    """Where every card is now, with the hidden ones drawn to fit what the seat saw."""
    sample, _ = _capabilities(observation)
    return sample(observation, rng)


def state_from_observation(
    observation: Mapping[str, Any], deal: Mapping[str, Any], seed: int = 0
) -> State:
    """The state at the observation's point with the cards placed as `deal` says.

    `seed` seeds the state's RNG (the shuffles of later rounds).
    """
    _, rebuild = _capabilities(observation)
    return rebuild(observation, deal, seed)


def determinize(observation: Mapping[str, Any], rng: random.Random) -> State:
    """A full state at the observation's point, the hidden cards drawn by `sample_deal`."""
    sample, rebuild = _capabilities(observation)
    return rebuild(observation, sample(observation, rng), rng.getrandbits(63))
