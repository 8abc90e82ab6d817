"""The Plackett-Luce likelihood of a tournament's games and its maximum (`ladder.plackett_luce`).

The games as choice stages, their log-likelihood and its derivatives, per
cluster for the jackknife (`ladder.intervals`); which items the games measure
(`_standings`); and the penalised optimum of the measured ones (`_optimum`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import scipy.linalg  # type: ignore[import-untyped]
import scipy.optimize  # type: ignore[import-untyped]
import scipy.sparse  # type: ignore[import-untyped]
import scipy.sparse.csgraph  # type: ignore[import-untyped]

from ladder.elo import Ranking

FloatArray = npt.NDArray[np.float64]

STEP_TOL = 1e-6
"""A fit has converged when the Newton step still to take is below this, in nats on every
strength (under 0.001 Elo)."""

Standing = Literal["measured", "below", "above", "unmeasured"]
"""What the games show about an item's rating (see `ItemRating`)."""


@dataclass(frozen=True)
class _Stages:
    """The data as a list of choice stages, ready for vectorised sums.

    Each ranked game becomes stages, one per group of tied places except a
    last place held alone: stage s picks its tied group D_s out of the
    players R_s not yet placed. Then

        log L = sum_i wins_i * theta_i - sum_s |D_s| * log sum_{j in R_s} exp(theta_j)

    where wins_i counts the stages item i was picked at. With offsets o_sj (an
    entry's advantage in its game), exp(theta_j) becomes exp(o_sj) exp(theta_j)
    and log L gains the constant sum of the picked entries' offsets, left out.
    """

    remaining: Any  # scipy.sparse CSR array, stages x items, exp(o_sj) where j in R_s
    picked: FloatArray  # |D_s| per stage
    wins: FloatArray  # per item
    games: list[int]  # per item
    chosen: Any  # scipy.sparse CSR array, stages x items, 1 where j in D_s
    game_of: list[int]  # per stage: the index of its game in the rankings


def _validate_game(n_items: int, game: Ranking) -> None:
    seen: set[int] = set()
    for item, _rank in game:
        if not 0 <= item < n_items:
            raise ValueError(f"item {item} is outside 0..{n_items - 1}")
        if item in seen:
            raise ValueError(f"item {item} appears twice in one game")
        seen.add(item)


def _stages(
    n_items: int, rankings: Sequence[Ranking], offsets: Sequence[Sequence[float]] | None = None
) -> _Stages:
    """The stages of `rankings`; with `offsets` (per game, one per entry of its ranking, in
    nats), each entry's strength in that game is its item's plus its offset: the
    weights exp(offset) stand in `remaining` where a plain fit has 1."""
    if offsets is not None and len(offsets) != len(rankings):
        raise ValueError("offsets must have one row per game")
    rows: list[int] = []
    cols: list[int] = []
    exponents: list[float] = []
    chosen_rows: list[int] = []
    chosen_cols: list[int] = []
    game_of: list[int] = []
    picked: list[float] = []
    wins = np.zeros(n_items)
    games = [0] * n_items
    for number, game in enumerate(rankings):
        _validate_game(n_items, game)
        if len(game) < 2:
            continue
        for item, _rank in game:
            games[item] += 1
        offset_of: dict[int, float] = {}
        if offsets is not None:
            if len(offsets[number]) != len(game):
                raise ValueError(f"game {number} needs one offset per entry")
            offset_of = {
                item: float(offset) for (item, _), offset in zip(game, offsets[number], strict=True)
            }
        ordered = sorted(game, key=lambda pair: pair[1])
        start = 0
        while start < len(ordered):
            end = start
            while end < len(ordered) and ordered[end][1] == ordered[start][1]:
                end += 1
            # A last place held alone contributes a factor of exactly 1.
            if len(ordered) - start > 1:
                stage = len(picked)
                for item, _rank in ordered[start:]:
                    rows.append(stage)
                    cols.append(item)
                    exponents.append(offset_of.get(item, 0.0))
                for item, _rank in ordered[start:end]:
                    wins[item] += 1.0
                    chosen_rows.append(stage)
                    chosen_cols.append(item)
                picked.append(float(end - start))
                game_of.append(number)
            start = end
    remaining = scipy.sparse.csr_array(
        (
            np.exp(np.array(exponents)),
            (np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64)),
        ),
        shape=(len(picked), n_items),
    )
    chosen = scipy.sparse.csr_array(
        (
            np.ones(len(chosen_rows)),
            (np.array(chosen_rows, dtype=np.int64), np.array(chosen_cols, dtype=np.int64)),
        ),
        shape=(len(picked), n_items),
    )
    return _Stages(remaining, np.array(picked, dtype=np.float64), wins, games, chosen, game_of)


def _cluster_parts(
    stages: _Stages, theta: FloatArray, clusters: Sequence[int]
) -> tuple[FloatArray, list[FloatArray]]:
    """Per cluster holding at least one stage: the sum of its stages' scores
    (gradients of log L), one row each, and its own observed information.

    A cluster whose games compare nobody has no stage and is no cluster of the fit.
    """
    shift = float(theta.max())
    w = np.exp(theta - shift)
    z: FloatArray = stages.remaining @ w
    p = scipy.sparse.csr_array(
        stages.remaining.multiply(w[np.newaxis, :]).multiply(1.0 / z[:, np.newaxis])
    )
    per_stage = stages.chosen - p.multiply(stages.picked[:, np.newaxis])
    labels = sorted({clusters[game] for game in stages.game_of})
    index = {label: number for number, label in enumerate(labels)}
    of_stage = np.array([index[clusters[game]] for game in stages.game_of], dtype=np.int64)
    membership = scipy.sparse.csr_array(
        (np.ones(len(of_stage)), (of_stage, np.arange(len(of_stage)))),
        shape=(len(labels), len(of_stage)),
    )
    scores = np.asarray((membership @ per_stage).toarray(), dtype=np.float64)
    order = np.argsort(of_stage, kind="stable")
    ends = np.searchsorted(of_stage[order], np.arange(1, len(labels) + 1))
    informations: list[FloatArray] = []
    for start, end in zip([0, *ends[:-1]], ends, strict=True):
        rows = order[start:end]
        chance = np.asarray(p[rows].toarray(), dtype=np.float64)
        picked = stages.picked[rows]
        expected = picked @ chance
        informations.append(np.diag(expected) - chance.T @ (picked[:, np.newaxis] * chance))
    return scores, informations


def _log_likelihood_parts(
    stages: _Stages, theta: FloatArray, *, with_hessian: bool
) -> tuple[float, FloatArray, FloatArray | None]:
    """The log-likelihood, its gradient and (if asked) its Hessian at `theta`."""
    remaining = stages.remaining
    d = stages.picked
    # Shifting by the largest strength keeps exp() in range; the log adds it back.
    shift = float(theta.max())
    w = np.exp(theta - shift)
    z: FloatArray = remaining @ w
    loglik = float(stages.wins @ theta - d @ (np.log(z) + shift))
    # p[s, j]: the chance item j is picked first among R_s (0 outside R_s).
    p = scipy.sparse.csr_array(
        remaining.multiply(w[np.newaxis, :]).multiply(1.0 / z[:, np.newaxis])
    )
    expected: FloatArray = p.T @ d
    grad = stages.wins - expected
    if not with_hessian:
        return loglik, grad, None
    weighted = scipy.sparse.csr_array(p.multiply(d[:, np.newaxis]))
    hess = np.asarray((p.T @ weighted).toarray(), dtype=np.float64) - np.diag(expected)
    return loglik, grad, hess


def _comparison_graph(n_items: int, rankings: Sequence[Ranking]) -> Any:
    """Edges i -> j, as a scipy.sparse array, where i finished ahead of or level with j.

    A tie counts in both directions, since the Breslow factor of a tied group
    is largest when its strengths are equal.
    """
    sources: list[int] = []
    targets: list[int] = []
    for game in rankings:
        for item, rank in game:
            for other, other_rank in game:
                if other != item and rank <= other_rank:
                    sources.append(item)
                    targets.append(other)
    return scipy.sparse.csr_array(
        (
            np.ones(len(sources)),
            (np.array(sources, dtype=np.int64), np.array(targets, dtype=np.int64)),
        ),
        shape=(n_items, n_items),
    )


def _standings(n_items: int, rankings: Sequence[Ranking], games: list[int]) -> list[Standing]:
    """Which items the games measure, and on which side of them the others stand.

    The likelihood has a finite maximum exactly when every item reaches every
    other along "finished ahead of or level with" (Hunter 2004); otherwise
    some group only ever beat the rest and its ratings run off to infinity.
    The measured items are the largest group that do reach each other (a
    strongly connected component; more games, then the lowest item number,
    break a tie). An item outside it is "below" when the measured items reach
    it but it reaches none of them, "above" the other way round, and
    "unmeasured" when neither or it has no games at all.
    """
    graph = _comparison_graph(n_items, rankings)
    _count, labels = scipy.sparse.csgraph.connected_components(graph, connection="strong")
    groups: dict[int, list[int]] = {}
    for item, label in enumerate(labels):
        groups.setdefault(int(label), []).append(item)
    largest = max(
        groups.values(), key=lambda group: (len(group), sum(games[i] for i in group), -group[0])
    )
    if sum(games[i] for i in largest) == 0:
        return ["unmeasured"] * n_items

    def reached(edges: Any) -> set[int]:
        order = scipy.sparse.csgraph.breadth_first_order(
            edges, largest[0], directed=True, return_predecessors=False
        )
        return {int(item) for item in order}

    below, above = reached(graph), reached(graph.T)
    standings: list[Standing] = []
    for item in range(n_items):
        if item in largest:
            standings.append("measured")
        elif games[item] and item in below:
            standings.append("below")
        elif games[item] and item in above:
            standings.append("above")
        else:
            standings.append("unmeasured")
    return standings


@dataclass(frozen=True)
class _Optimum:
    """The penalised maximum-likelihood fit of a strongly connected field.

    `theta` sums to zero; `inverse` is the inverse observed information on
    the orthonormal sum-zero `basis` (theta = basis @ phi).
    """

    stages: _Stages
    theta: FloatArray
    basis: FloatArray
    inverse: FloatArray
    information: FloatArray
    log_likelihood: float
    converged: bool


def _optimum(
    n_items: int,
    rankings: Sequence[Ranking],
    ridge: float,
    offsets: Sequence[Sequence[float]] | None = None,
) -> _Optimum:
    """Fit `n_items` >= 2 items whose comparison graph is strongly connected."""
    stages = _stages(n_items, rankings, offsets)
    basis: FloatArray = scipy.linalg.null_space(np.ones((1, n_items)))

    def objective(phi: FloatArray) -> tuple[float, FloatArray]:
        theta = basis @ phi
        loglik, grad, _ = _log_likelihood_parts(stages, theta, with_hessian=False)
        value = -loglik + 0.5 * ridge * float(theta @ theta)
        return value, basis.T @ (-grad + ridge * theta)

    def information(theta: FloatArray) -> FloatArray:
        """The observed information: the Hessian of the penalised negative log-likelihood."""
        _, _, hess = _log_likelihood_parts(stages, theta, with_hessian=True)
        assert hess is not None
        return -hess + ridge * np.eye(n_items)

    def hessian(phi: FloatArray) -> FloatArray:
        return basis.T @ information(basis @ phi) @ basis

    result = scipy.optimize.minimize(
        objective,
        np.zeros(n_items - 1),
        jac=True,
        hess=hessian,
        method="trust-exact",
        options={"gtol": 1e-10, "maxiter": 1000},
    )
    theta = basis @ np.asarray(result.x, dtype=np.float64)
    loglik, _, _ = _log_likelihood_parts(stages, theta, with_hessian=False)
    observed = information(theta)
    inverse = np.asarray(np.linalg.inv(basis.T @ observed @ basis), dtype=np.float64)
    # trust-exact may stop on a tiny trust radius at an optimum already within rounding;
    # judge convergence by the Newton step still to take (nats), not by the gradient,
    # which grows with the games: 600 games of 6 bots stopped at a gradient of 2.3e-6
    # (another numpy, another rounding), a step of about 1e-8 nats.
    step = inverse @ np.asarray(result.jac, dtype=np.float64)
    return _Optimum(
        stages,
        theta,
        basis,
        inverse,
        observed,
        loglik,
        bool(result.success) or float(np.abs(step).max()) < STEP_TOL,
    )
