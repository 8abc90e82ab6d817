"""ladder.pairing: round-robin plans (no database)."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from ladder import pairing


def test_round_robin_plays_every_combination_once_with_seeded_seats() -> None:
    entrants = ["a", "b", "c", "d", "e", "f"]
    plan = pairing.plan_round_robin(entrants, 4, seed=3)
    assert len(plan) == 15
    assert sorted(tuple(sorted(m)) for m in plan) == sorted(itertools.combinations(entrants, 4))
    assert plan == pairing.plan_round_robin(entrants, 4, seed=3)
    assert plan != pairing.plan_round_robin(entrants, 4, seed=4)  # seats shuffled by the seed
    assert {m[0] for m in plan} != {plan[0][0]}  # not always the same first seat


@pytest.mark.parametrize(
    ("n", "players", "limit"), [(9, 3, 30), (12, 4, 200), (10, 5, 7), (30, 2, 100)]
)
def test_balanced_subset_above_max_matches(n: int, players: int, limit: int) -> None:
    entrants = [f"bot{i}" for i in range(n)]
    plan = pairing.plan_round_robin(entrants, players, seed=11, max_matches=limit)
    assert len(plan) == limit
    groups = [frozenset(m) for m in plan]
    assert len(set(groups)) == limit, "no combination twice"
    assert all(len(g) == players for g in groups)
    played = Counter(bot for m in plan for bot in m)
    assert set(played) == set(entrants)
    assert max(played.values()) - min(played.values()) <= 1
    assert plan == pairing.plan_round_robin(entrants, players, seed=11, max_matches=limit)
