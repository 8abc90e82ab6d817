"""Sharing the cards a seat cannot see among the places they may be.

The trick engines guess hidden cards for `sample_deal` with `assign_hidden`:
it knows nothing of any game, only cards, places and which card may go where.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

__all__ = ["assign_hidden"]


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
