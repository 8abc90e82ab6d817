"""ladder.pairwise: A against B (the pairwise record, likelihood of superiority, SPRT)."""

from __future__ import annotations

import math

import pytest

from ladder.elo import Ranking
from ladder.pairwise import likelihood_of_superiority, pairwise_record, sprt

# --------------------------------------------------------------------------
# A against B
# --------------------------------------------------------------------------


def test_pairwise_record() -> None:
    games: list[Ranking] = [
        [(0, 1), (1, 2), (2, 3)],  # 0 beats 1
        [(1, 1), (0, 2)],  # 1 beats 0
        [(2, 1), (0, 2), (1, 2)],  # 0 and 1 tie (both behind 2)
        [(0, 1), (2, 2)],  # 1 absent
        [(3, 1), (1, 2), (0, 3)],  # 1 beats 0
    ]
    assert pairwise_record(games, 0, 1) == (1, 1, 2)
    assert pairwise_record(games, 1, 0) == (2, 1, 1)
    assert pairwise_record(games, 0, 4) == (0, 0, 0)
    with pytest.raises(ValueError):
        pairwise_record(games, 1, 1)


def test_likelihood_of_superiority() -> None:
    # erf(10 / sqrt(20)) = erf(2.2360680) = 0.9984346 -> 0.5 * 1.9984346.
    assert likelihood_of_superiority(10, 0) == pytest.approx(0.9992173, abs=1e-7)
    assert likelihood_of_superiority(0, 10) == pytest.approx(1 - 0.9992173, abs=1e-7)
    assert likelihood_of_superiority(37, 37) == 0.5
    assert likelihood_of_superiority(0, 0) == 0.5
    # 60-40: erf(20 / sqrt(200)) = erf(1.4142136) = 0.9544997 -> 0.9772499.
    assert likelihood_of_superiority(60, 40) == pytest.approx(0.9772499, abs=1e-7)


def test_sprt_bounds_and_clear_cases() -> None:
    # W 600, D 200, L 400: N = 1200, s = 700/1200 = 0.5833333,
    # var = 650/1200 - s^2 = 0.5416667 - 0.3402778 = 0.2013889;
    # s0 = 0.5, s1 = 1/(1+10^(-10/400)) = 0.5143868;
    # LLR = 1200 * 0.0143868 * (1.1666667 - 1.0143868) / (2 * 0.2013889) = 6.5273.
    result = sprt(600, 200, 400)
    assert result.lower == pytest.approx(math.log(0.05 / 0.95))
    assert result.upper == pytest.approx(math.log(0.95 / 0.05))
    assert result.llr == pytest.approx(6.5273, abs=1e-3)
    assert result.decision == "H1"
    # Mirror image: 2s - s0 - s1 = 0.8333333 - 1.0143868 -> LLR = -7.7607.
    result = sprt(400, 200, 600)
    assert result.llr == pytest.approx(-7.7607, abs=1e-3)
    assert result.decision == "H0"


def test_sprt_continue_and_edges() -> None:
    assert sprt(12, 5, 10).decision == "continue"
    assert sprt(0, 0, 0).llr == 0.0
    assert sprt(0, 0, 0).decision == "continue"
    # Only wins: the variance is regularised, the verdict is clear.
    assert sprt(50, 0, 0).decision == "H1"
    # Tighter error rates widen the bounds.
    strict = sprt(600, 200, 400, alpha=0.01, beta=0.01)
    assert strict.upper == pytest.approx(math.log(0.99 / 0.01))
    with pytest.raises(ValueError):
        sprt(-1, 0, 0)
