"""Guessing the hidden cards of a trick game from one seat's observation.

Search bots (and anyone who wants to ask "what if") need whole states while a
seat sees only part of one. This module turns an observation into:

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

Goodge and Golden 10 only: in Goof nothing that matters is hidden.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, cast

from games.core import JSON, State

__all__ = ["assign_hidden", "determinize", "sample_deal", "state_from_observation"]


def assign_hidden(
    cards: Sequence[int],
    capacities: Sequence[int],
    allowed: Mapping[int, int],
    rng: random.Random,
) -> list[list[int]]:
    """Share `cards` out among owners 0..k-1, owner i taking `capacities[i]` of them.

    `allowed[card]` is a bitmask of the owners that may take `card` (every
    owner when the card is missing). The draw is random; the most constrained
    cards go first, and when a card finds every allowed owner full an
    augmenting path moves other cards along to make room, so an assignment is
    found whenever one exists. ValueError if none does.
    """
    owners = len(capacities)
    if sum(capacities) != len(cards):
        raise ValueError(f"{len(cards)} hidden cards for {sum(capacities)} places")
    everyone = (1 << owners) - 1
    order = list(cards)
    rng.shuffle(order)
    order.sort(key=lambda card: (allowed.get(card, everyone) & everyone).bit_count())
    room = list(capacities)
    held: list[list[int]] = [[] for _ in range(owners)]
    for card in order:
        mask = allowed.get(card, everyone) & everyone
        choices = [o for o in range(owners) if mask >> o & 1 and room[o] > 0]
        if choices:
            owner = rng.choices(choices, weights=[room[o] for o in choices])[0]
            held[owner].append(card)
            room[owner] -= 1
            continue
        if not _make_room(card, mask, held, room, allowed, everyone):
            raise ValueError("no assignment of the hidden cards fits what was seen")
    return held


def _make_room(
    card: int,
    mask: int,
    held: list[list[int]],
    room: list[int],
    allowed: Mapping[int, int],
    everyone: int,
) -> bool:
    """Place `card` by moving a chain of held cards towards an owner with room (BFS)."""
    owners = len(room)
    # parent[o] = (previous owner, card moved from o to previous); start nodes: allowed owners.
    parent: dict[int, tuple[int, int] | None] = {o: None for o in range(owners) if mask >> o & 1}
    queue = list(parent)
    while queue:
        owner = queue.pop(0)
        for moved in held[owner]:
            targets = allowed.get(moved, everyone) & everyone
            for other in range(owners):
                if not targets >> other & 1 or other in parent:
                    continue
                parent[other] = (owner, moved)
                if room[other] > 0:
                    # Walk back: each card moves one step along the chain.
                    node = other
                    step = parent[node]
                    while step is not None:
                        previous, card_moved = step
                        held[previous].remove(card_moved)
                        held[node].append(card_moved)
                        node = previous
                        step = parent[node]
                    held[node].append(card)
                    room[other] -= 1
                    return True
                queue.append(other)
    return False


def sample_deal(observation: Mapping[str, Any], rng: random.Random) -> dict[str, JSON]:
    """Where every card is now, with the hidden ones drawn to fit what the seat saw."""
    game = observation.get("game")
    if game == "goodge":
        from games import goodge

        return goodge.sample_deal(observation, rng)
    if game == "golden10":
        from games import golden10

        return golden10.sample_deal(observation, rng)
    raise ValueError(f"cannot sample the hidden cards of {game!r}: goodge and golden10 only")


def state_from_observation(
    observation: Mapping[str, Any], deal: Mapping[str, Any], seed: int = 0
) -> State:
    """The state at the observation's point with the cards placed as `deal` says.

    `seed` seeds the state's RNG (the shuffles of later rounds).
    """
    game = observation.get("game")
    if game == "goodge":
        from games import goodge

        return cast(State, goodge.state_from_observation(observation, deal, seed))
    if game == "golden10":
        from games import golden10

        return cast(State, golden10.state_from_observation(observation, deal, seed))
    raise ValueError(f"cannot rebuild a state of {game!r}: goodge and golden10 only")


def determinize(observation: Mapping[str, Any], rng: random.Random) -> State:
    """A full state at the observation's point, the hidden cards drawn by `sample_deal`."""
    deal = sample_deal(observation, rng)
    return state_from_observation(observation, deal, rng.getrandbits(63))
