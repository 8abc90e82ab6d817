"""Swiss tournaments' seating: who sits at which table in a round. Pure, seeded.

No database and no clock: the same standing, meetings and seed give the same
round. A Swiss tournament plays a few rounds in which every entrant sits at
one table of the tournament's player count; the first round seats the
entrants by a seeded draw (or by their ladder ratings), each later round by
their standing so far, so that bots of like strength meet, the leaders
among themselves, and the top of the field is sorted out in far fewer games
than a round robin plays.

The rules, and why:

- A round is cut from the standing (best first) into consecutive tables:
  the first `players` bots, the next `players`, ... That is where a game
  teaches most (bots of like strength) and, as in a chess Swiss, where the
  leaders meet each other.
- Repeat meetings come first: of all the ways to seat the round, one with
  the fewest repeat meetings (each pair at a table counts the times it has
  met before) is taken, and of those the first in the standing's order:
  the best bot's table with the best mates it may have, then the best bot
  left, and so on (as a chess Swiss pairs the top of a score group with the
  highest it may meet). `seat_round` searches this exactly (depth first,
  branch and bound) up to `SEARCH_NODES` steps, each table's first bot
  choosing among the `WINDOW` unseated bots nearest it (those it has not
  met first): on fields of up to `WINDOW` + 1 bots it is exact, on larger
  ones it is the best seating found.
- The remainder (entrants not a multiple of the player count) has a bye:
  it sits the round out and plays no game in it. Smaller tables are not
  used: a game at fewer seats is another game (other hands, another
  ladder), and its results would not rate on the tournament's ladder. The
  bye goes to the bots with the fewest byes so far, the lowest in the
  standing among them: the bottom of the table matters least to who is
  best, and nobody sits out twice before every bot has sat out once.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

__all__ = [
    "MAX_ROUNDS",
    "SEARCH_NODES",
    "WINDOW",
    "Seeding",
    "SwissRound",
    "meetings",
    "repeats",
    "round_rng",
    "seat_round",
    "standing_order",
]

MAX_ROUNDS = 64
"""The most rounds a Swiss tournament may have."""

SEARCH_NODES = 3000
"""The most partial seatings the search for the best round extends (enough, with margin, for
the fields of `WINDOW` + 1 bots on which it is exact)."""

WINDOW = 12
"""How many unseated bots, nearest in the standing, may join a table's first bot (those it
has not met come first)."""


class Seeding(StrEnum):
    """How the first round is seated."""

    DRAW = "draw"
    """A seeded random draw."""
    RATING = "rating"
    """By the entrants' ratings on the tournament's ladder, best first."""


@dataclass(frozen=True)
class SwissRound:
    """One round's seating: its tables (bot ids in seat order) and the bots with a bye."""

    tables: tuple[tuple[str, ...], ...]
    byes: tuple[str, ...]


def round_rng(seed: int, round_number: int) -> random.Random:
    """The seeded randomness of one round's seating: ties in the standing, seat orders."""
    return random.Random(f"{seed}:round{round_number}")


def standing_order(
    entrants: Sequence[str], ratings: Mapping[str, float], rng: random.Random
) -> list[str]:
    """The entrants best first by `ratings` (each entrant must have one), equal ratings in
    a seeded random order (all equal: a seeded draw)."""
    keys = {entrant: rng.random() for entrant in entrants}
    return sorted(entrants, key=lambda entrant: (-ratings[entrant], keys[entrant]))


def meetings(tables: Iterable[Sequence[str]]) -> Counter[frozenset[str]]:
    """How often each pair of bots sat at one table."""
    met: Counter[frozenset[str]] = Counter()
    for table in tables:
        met.update(frozenset(pair) for pair in itertools.combinations(table, 2))
    return met


def repeats(tables: Iterable[Sequence[str]], met: Mapping[frozenset[str], int]) -> int:
    """The repeat meetings of a seating: each pair at a table counts its earlier meetings."""
    return sum(
        met.get(frozenset(pair), 0) for table in tables for pair in itertools.combinations(table, 2)
    )


def seat_round(
    standing: Sequence[str],
    players: int,
    met: Mapping[frozenset[str], int],
    byes: Mapping[str, int],
    rng: random.Random,
    max_nodes: int = SEARCH_NODES,
) -> SwissRound:
    """Seat one round: the bye (see the module), then tables of `players` bots.

    `standing` is every entrant, best first; `met` how often each pair met in the
    earlier rounds (`meetings`); `byes` how many byes each bot had. Each table's
    seat order is a seeded shuffle (duplicate matches rotate it anyway).
    """
    if players < 1 or len(standing) < players:
        raise ValueError(f"{players} players need at least {players} entrants")
    if len(set(standing)) != len(standing):
        raise ValueError("an entrant is in the standing twice")
    remainder = len(standing) % players
    position = {bot: number for number, bot in enumerate(standing)}
    # Fewest byes first, then the lowest in the standing.
    sitting_out = sorted(standing, key=lambda bot: (byes.get(bot, 0), -position[bot]))[:remainder]
    seated = [bot for bot in standing if bot not in sitting_out]
    tables = []
    for table in _partition(seated, players, met, max_nodes):
        seats = list(table)
        rng.shuffle(seats)
        tables.append(tuple(seats))
    return SwissRound(tuple(tables), tuple(sorted(sitting_out, key=position.__getitem__)))


def _partition(
    order: Sequence[str], size: int, met: Mapping[frozenset[str], int], max_nodes: int
) -> list[tuple[str, ...]]:
    """`order` cut into tables of `size`: the fewest repeat meetings, and of those seatings
    the first in the standing's order (see the module).

    Depth first, each table's first bot the best unseated one, its mates' choices tried
    by their table's repeats, then by their places in the standing, so the first seating
    found is the greedy one; a branch that cannot have fewer repeats than the best found
    is cut, and a later seating replaces the best only with fewer repeats.
    """
    cost = [[met.get(frozenset((a, b)), 0) for b in order] for a in order]
    best: list[tuple[int, ...]] = []
    best_met = float("inf")
    chosen: list[tuple[int, ...]] = []
    nodes = 0

    def search(free: list[int], met_cost: int) -> None:
        nonlocal best, best_met, nodes
        if not free:
            if met_cost < best_met:
                best, best_met = list(chosen), met_cost
            return
        if best and nodes >= max_nodes:
            return
        nodes += 1
        head, rest = free[0], free[1:]
        # The nearest in the standing, those the head has not met first.
        near = sorted(rest, key=lambda p: cost[head][p] > 0)[:WINDOW]
        options = sorted(
            (sum(cost[a][b] for a, b in itertools.combinations(table, 2)), table)
            for table in (
                (head, *mates) for mates in itertools.combinations(sorted(near), size - 1)
            )
        )
        for table_met, table in options:
            if met_cost + table_met >= best_met:
                break  # the options are sorted: none after this one has fewer repeats
            chosen.append(table)
            search([p for p in rest if p not in table], met_cost + table_met)
            chosen.pop()
            if best and nodes >= max_nodes:
                return

    search(list(range(len(order))), 0)
    return [tuple(order[p] for p in table) for table in best]
