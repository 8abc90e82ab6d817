"""Round-robin plans: which groups of entrants meet, and in which seats. Pure, seeded.

No database and no clock: the same entrants, player count and seed give the
same plan, so a retried tournament creation or scheduled run plans the same
matches.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Sequence

from ladder.errors import LeagueError

BALANCE_SEARCH = 2000
"""The most combinations `_balanced_groups` looks at for one group."""


def plan_round_robin(
    entrants: Sequence[str], players: int, seed: int, max_matches: int = 200
) -> list[tuple[str, ...]]:
    """The matches of a round robin: seat orders, one per chosen group of entrants.

    Every combination of `players` entrants plays once when there are at most
    `max_matches` combinations; otherwise a balanced subset of `max_matches`
    of them, chosen greedily so that every entrant plays in about the same
    number of matches (at most one apart), ties broken by the seed. Each
    match seats its bots in a seeded random order.
    """
    if players < 1 or len(entrants) < players:
        raise LeagueError(f"{players} players need at least {players} entrants")
    if max_matches < 1:
        raise LeagueError("max_matches must be at least 1")
    rng = random.Random(seed)
    total = math.comb(len(entrants), players)
    if total <= max_matches:
        groups = [tuple(group) for group in itertools.combinations(entrants, players)]
    else:
        groups = _balanced_groups(list(entrants), players, max_matches, rng)
    plan = []
    for group in groups:
        seats = list(group)
        rng.shuffle(seats)
        plan.append(tuple(seats))
    return plan


def _balanced_groups(
    entrants: list[str], players: int, count: int, rng: random.Random
) -> list[tuple[str, ...]]:
    """`count` distinct groups of `players`, each entrant in about the same number.

    Each step orders the entrants by matches so far (fewest first, seeded
    ties) and looks at the unused combinations in that order, taking the one
    whose busiest member has played least (then the least in total). The
    search stops at the first combination as good as any can be, and looks
    at no more than `BALANCE_SEARCH` of them.
    """
    played: Counter[str] = Counter()
    used: set[frozenset[str]] = set()
    groups: list[tuple[str, ...]] = []
    while len(groups) < count:
        keys = {entrant: rng.random() for entrant in entrants}
        order = sorted(entrants, key=lambda entrant: (played[entrant], keys[entrant]))
        ideal = (played[order[players - 1]], sum(played[e] for e in order[:players]))
        best: tuple[str, ...] | None = None
        best_score = (math.inf, math.inf)
        for looked, group in enumerate(itertools.combinations(order, players)):
            if looked >= BALANCE_SEARCH and best is not None:
                break
            if frozenset(group) in used:
                continue
            score = (max(played[e] for e in group), sum(played[e] for e in group))
            if score < best_score:
                best, best_score = group, score
                if score == ideal:
                    break
        assert best is not None
        used.add(frozenset(best))
        played.update(best)
        groups.append(best)
    _even_out(groups, used, played, entrants)
    return [tuple(sorted(group, key=entrants.index)) for group in groups]


def _even_out(
    groups: list[tuple[str, ...]],
    used: set[frozenset[str]],
    played: Counter[str],
    entrants: list[str],
) -> None:
    """Swap the busiest entrants for the idlest in chosen groups until counts are one apart.

    The greedy choice can end with an entrant one match ahead and another one
    behind when the combinations that would even them out are used up; a
    swap (busiest out, idlest in, the group still new) fixes that.
    """
    for _ in range(4 * len(groups)):
        most = max(played.values())
        least = min(played[e] for e in entrants)
        if most - least <= 1:
            return
        busiest = [e for e in entrants if played[e] == most]
        idlest = [e for e in entrants if played[e] == least]
        swapped = False
        for number, group in enumerate(groups):
            for out in (e for e in group if e in busiest):
                for into in (e for e in idlest if e not in group):
                    changed = frozenset(group) - {out} | {into}
                    if changed in used:
                        continue
                    used.discard(frozenset(group))
                    used.add(changed)
                    groups[number] = tuple(into if e == out else e for e in group)
                    played[out] -= 1
                    played[into] += 1
                    swapped = True
                    break
                if swapped:
                    break
            if swapped:
                break
        if not swapped:
            return
