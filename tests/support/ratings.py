"""Simulated Plackett-Luce games, and log-strengths and fits on the Elo scale.

For the tests of the tournament table (tests/ladder/test_ratings_*.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ladder.elo import ELO_PER_NAT
from ladder.plackett_luce import PLFit


def simulate_game(
    rng: np.random.Generator,
    theta: Sequence[float] | npt.NDArray[np.float64],
    players: Sequence[int],
    tie_prob: float = 0.0,
) -> list[tuple[int, int]]:
    """One Plackett-Luce game among `players`, as (item, rank) pairs.

    Sorting theta + Gumbel noise draws a ranking from Plackett-Luce exactly.
    With `tie_prob`, each place is merged into the one above it with that
    chance, which makes ties (competition ranks: 1 + number strictly better).
    """
    noisy = [theta[p] + rng.gumbel() for p in players]
    order = [players[i] for i in np.argsort(noisy)[::-1]]
    result = []
    rank = 1
    for position, item in enumerate(order):
        if position > 0 and rng.random() >= tie_prob:
            rank = position + 1
        result.append((item, rank))
    return result


def to_elo(theta: Sequence[float] | npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Log-strengths on the Elo scale, their plain mean at 1500."""
    centred = np.asarray(theta, dtype=np.float64) - np.mean(theta)
    return np.asarray(1500.0 + ELO_PER_NAT * centred, dtype=np.float64)


def mean_centred(fit: PLFit) -> npt.NDArray[np.float64]:
    """The fit's ratings moved so that their plain mean is 1500, like `to_elo`.

    The table centres on an information-weighted mean; only differences are
    identified, so comparisons with other fits use the same centre.
    """
    ratings = np.asarray(fit.ratings, dtype=np.float64)
    return np.asarray(ratings - ratings.mean() + 1500.0, dtype=np.float64)
