"""One-sided bounds for the entrants the games cannot measure (`ladder.plackett_luce`).

An entrant that finished behind (or ahead of) every measured one in each game
it shared with them has no finite rating, only a bound at the fit's
confidence (`_bound`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import scipy.optimize  # type: ignore[import-untyped]

from ladder.elo import Ranking
from ladder.pl_likelihood import FloatArray


def _placement_terms(others: FloatArray, below: bool) -> tuple[FloatArray, FloatArray]:
    """Signs and log-strength sums such that sum(sign / (1 + exp(sums - t))) is the
    Plackett-Luce chance that an item of log-strength t finishes behind
    (`below`) or ahead of all of `others`.

    Ahead of all: w / (w + sum w_j), one term. Behind all, by
    inclusion-exclusion over the subsets A of the others (the chance of
    beating all of A is w / (w + w_A)): sum_A (-1)^|A| w / (w + w_A).
    """
    # numpy's logaddexp.reduce rather than scipy's logsumexp: the same stable sum,
    # without scipy's per-call overhead, which was half of a tournament table's time.
    if not below:
        return np.ones(1), np.array([float(np.logaddexp.reduce(others))])
    signs: list[float] = []
    sums: list[float] = []
    for size in range(len(others) + 1):
        for subset in itertools.combinations(others, size):
            signs.append(-1.0 if size % 2 else 1.0)
            sums.append(float(np.logaddexp.reduce(subset)) if subset else -math.inf)
    return np.array(signs), np.array(sums)


def _bound(
    item: int,
    below: bool,
    rankings: Sequence[Ranking],
    clusters: Sequence[int],
    strength: dict[int, float],
    alpha: float,
) -> tuple[float, int] | None:
    """A one-sided bound on an item's log-strength, and the games it rests on.

    Per game with measured items, P_g(t) is the Plackett-Luce chance, their
    strengths held at the fit, that an item of log-strength t finishes
    behind (`below`) or ahead of all of them, as it did. The games of one
    cluster may depend on each other in any way, so a cluster's chance is at
    most its least likely game's; clusters are independent, so the chance of
    all the item did is at most prod_c min_g P_g(t). The bound is where that
    falls to `alpha`: beyond it, what happened would have had less than
    `alpha` chance. None when the item shared no game with a measured item.
    """
    per_cluster: dict[int, list[tuple[FloatArray, FloatArray]]] = {}
    shared = 0
    for number, game in enumerate(rankings):
        others = [strength[other] for other, _rank in game if other in strength]
        if others and item in dict(game):
            per_cluster.setdefault(clusters[number], []).append(
                _placement_terms(np.array(others), below)
            )
            shared += 1
    if not per_cluster:
        return None
    direction = 1.0 if below else -1.0

    def excess(u: float) -> float:
        """log(prod_c min_g P_g) - log(alpha) at t = direction * u: falls as u grows."""
        t = direction * u
        total = 0.0
        for terms in per_cluster.values():
            chances = [float(signs @ (1.0 / (1.0 + np.exp(sums - t)))) for signs, sums in terms]
            total += math.log(max(min(chances), 1e-300))
        return total - math.log(alpha)

    # Step out from the measured strengths until the excess changes sign;
    # the chances stay far from rounding until then.
    values = [direction * value for value in strength.values()]
    low, high = min(values) - 1.0, max(values) + 1.0
    while excess(low) <= 0.0:
        low -= 1.0
    while excess(high) >= 0.0:
        high += 1.0
    root = float(scipy.optimize.brentq(excess, low, high, xtol=1e-9))
    return direction * root, shared
