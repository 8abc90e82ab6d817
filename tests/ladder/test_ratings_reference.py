"""ladder.plackett_luce: the tournament table against independent implementations.

choix (a third-party Plackett-Luce fitter) on tie-free data, and, with ties, an MM
algorithm and a Nelder-Mead fit of the Breslow likelihood written here from the
formula, sharing no code with the module.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import choix
import numpy as np
import numpy.typing as npt
import pytest
import scipy.optimize  # type: ignore[import-untyped]

from ladder.elo import ELO_PER_NAT, Ranking
from ladder.plackett_luce import plackett_luce
from tests.support.ratings import mean_centred, simulate_game, to_elo

# --------------------------------------------------------------------------
# Tournament table against independent implementations
# --------------------------------------------------------------------------


def choix_data(games: Sequence[Ranking]) -> list[tuple[int, ...]]:
    """Tie-free (item, rank) games as choix rankings (items best first)."""
    return [tuple(item for item, _rank in sorted(game, key=lambda pair: pair[1])) for game in games]


def test_matches_choix_without_prior() -> None:
    rng = np.random.default_rng(2024)
    theta = rng.normal(0.0, 1.0, size=8)
    games = [
        simulate_game(rng, theta, list(rng.choice(8, size=4, replace=False))) for _ in range(300)
    ]
    fit = plackett_luce(8, games, prior_sd=None)
    reference = choix.opt_rankings(8, choix_data(games), alpha=0.0, method="BFGS", tol=1e-10)
    difference = np.abs(mean_centred(fit) - to_elo(reference)).max()
    assert difference < 0.5, difference


def test_matches_choix_with_the_same_prior() -> None:
    # A narrow prior (100 Elo) pulls the ratings in, the same way in both:
    # choix's penalty is alpha * sum(theta^2); ours is theta.theta / (2 s^2).
    rng = np.random.default_rng(7)
    theta = rng.normal(0.0, 1.5, size=6)
    games = [
        simulate_game(rng, theta, list(rng.choice(6, size=3, replace=False))) for _ in range(200)
    ]
    fit = plackett_luce(6, games, prior_sd=100.0)
    alpha = 0.5 * (ELO_PER_NAT / 100.0) ** 2
    reference = choix.opt_rankings(6, choix_data(games), alpha=alpha, tol=1e-12)
    difference = np.abs(mean_centred(fit) - to_elo(reference)).max()
    assert difference < 0.5, difference
    # The default prior is a numerical guard: it moves these ratings by a
    # small fraction of an Elo.
    guarded = mean_centred(plackett_luce(6, games))
    assert np.abs(guarded - mean_centred(plackett_luce(6, games, prior_sd=None))).max() < 0.5


def breslow_mm(n_items: int, games: Sequence[Ranking]) -> npt.NDArray[np.float64]:
    """Breslow-tied Plackett-Luce ML log-strengths by an MM algorithm (Hunter 2004).

    log L = sum_s [sum_{i in D_s} log w_i - |D_s| log sum_{j in R_s} w_j];
    minorising -log x by -log y - x/y + 1 at the current w gives the update
    w_i <- (#stages i is picked at) / sum_{s: i in R_s} |D_s| / sum_{R_s} w.
    """
    members: list[list[int]] = []
    sizes: list[int] = []
    picks = np.zeros(n_items)
    for game in games:
        by_rank: dict[int, list[int]] = {}
        for item, rank in game:
            by_rank.setdefault(rank, []).append(item)
        groups = [by_rank[rank] for rank in sorted(by_rank)]
        for k, group in enumerate(groups):
            rest = [item for later in groups[k:] for item in later]
            members.append(rest)
            sizes.append(len(group))
            for item in group:
                picks[item] += 1
    matrix = np.zeros((len(members), n_items))
    for s, rest in enumerate(members):
        matrix[s, rest] = 1.0
    d = np.array(sizes, dtype=float)
    w = np.ones(n_items)
    for _ in range(100_000):
        new = picks / (matrix.T @ (d / (matrix @ w)))
        new /= np.exp(np.mean(np.log(new)))
        if np.abs(np.log(new) - np.log(w)).max() < 1e-13:
            w = new
            break
        w = new
    return np.log(w)


def breslow_log_likelihood(
    theta: Sequence[float] | npt.NDArray[np.float64], games: Sequence[Ranking]
) -> float:
    """The Breslow-tied Plackett-Luce log-likelihood, straight from the formula."""
    total = 0.0
    for game in games:
        for item, rank in game:
            # Each member of a tied group D contributes w_i / sum_R w, which
            # multiplies out to prod_D w_i / (sum_R w)^|D|.
            remaining = [other for other, other_rank in game if other_rank >= rank]
            total += theta[item] - math.log(sum(math.exp(theta[j]) for j in remaining))
    return total


def test_matches_mm_algorithm_with_ties() -> None:
    rng = np.random.default_rng(11)
    theta = [0.8, 0.3, 0.0, -0.4, -0.9]
    games = [
        simulate_game(
            rng, theta, list(rng.choice(5, size=int(rng.integers(3, 6)), replace=False)), 0.25
        )
        for _ in range(300)
    ]
    assert sum(1 for game in games if len({rank for _item, rank in game}) < len(game)) > 100
    fit = plackett_luce(5, games, prior_sd=None)
    reference = breslow_mm(5, games)
    difference = np.abs(mean_centred(fit) - to_elo(reference)).max()
    assert difference < 0.5, difference
    # Same optimum, same likelihood, computed independently.
    assert fit.log_likelihood == pytest.approx(breslow_log_likelihood(reference, games), abs=1e-6)


def test_matches_nelder_mead_with_ties() -> None:
    rng = np.random.default_rng(5)
    theta = [0.6, 0.0, -0.6]
    games = [simulate_game(rng, theta, [0, 1, 2], 0.3) for _ in range(40)]

    def negative(free: npt.NDArray[np.float64]) -> float:
        return -breslow_log_likelihood([free[0], free[1], -free[0] - free[1]], games)

    result = scipy.optimize.minimize(
        negative,
        [0.0, 0.0],
        method="Nelder-Mead",
        options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 10_000},
    )
    reference = [result.x[0], result.x[1], -result.x[0] - result.x[1]]
    fit = plackett_luce(3, games, prior_sd=None)
    difference = np.abs(mean_centred(fit) - to_elo(reference)).max()
    assert difference < 0.5, difference
