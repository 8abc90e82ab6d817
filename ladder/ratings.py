"""The rating maths of the ladder: pure functions, no I/O.

Three tools, for three questions:

* `elo_update` -- the live rating. After every match each player's rating
  moves by a multiplayer Elo step: the game is split into all pairs of
  players, each pair scored 1 / 0.5 / 0 by rank, and the step is scaled by
  1/(N-1) so a four-player game moves a rating about as much as one
  two-player game.
* `plackett_luce` -- the tournament table. Maximum-likelihood Plackett-Luce
  ratings (Bradley-Terry when every game has two players) with 95% confidence
  intervals from all of a tournament's games, as BayesElo and Ordo rate engine
  round robins. Unlike live Elo the result does not depend on the order the
  games were played in.
* `likelihood_of_superiority`, `sprt` and `pairwise_record` -- "is bot A
  stronger than bot B?", with the statistics engine testers use.

Ratings are on the Elo scale throughout: a difference of D points means the
stronger side is expected to score 1/(1+10^(-D/400)) against the weaker.

A game result is given as a `Ranking`: one `(item, rank)` pair per
participant, rank 1 best, equal ranks tied (what `games.core.rank_scores`
produces). Items are numbered 0..n_items-1 by the caller.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import scipy.linalg  # type: ignore[import-untyped]
import scipy.optimize  # type: ignore[import-untyped]
import scipy.sparse  # type: ignore[import-untyped]
import scipy.sparse.csgraph  # type: ignore[import-untyped]
import scipy.special  # type: ignore[import-untyped]
import scipy.stats  # type: ignore[import-untyped]

__all__ = [
    "DEFAULT_PRIOR_SD",
    "ELO_PER_NAT",
    "ELO_START",
    "EloConfig",
    "ItemRating",
    "PLFit",
    "Ranking",
    "SprtResult",
    "Standing",
    "duplicate_variance_ratios",
    "elo_update",
    "expected_score",
    "is_provisional",
    "likelihood_of_superiority",
    "pairwise_record",
    "plackett_luce",
    "sprt",
    "table_line",
    "table_order",
]

Ranking = Sequence[tuple[int, int]]
"""One game's result: `(item, rank)` per participant; rank 1 is best, equal ranks tie."""

FloatArray = npt.NDArray[np.float64]

ELO_START = 1500.0
"""Where every rating starts, and the centre of the tournament table."""

ELO_PER_NAT = 400.0 / math.log(10.0)
"""Elo points per unit of log-strength: exp(theta) odds equal 10^(elo/400) odds."""

DEFAULT_PRIOR_SD = 1000.0
"""Standard deviation, in Elo, of the Gaussian prior `plackett_luce` puts on each rating.

Only a numerical guard. It no longer holds up an entrant the games cannot
measure (one that lost every game is shown as a bound, not a rating the
prior's width decided); on the measured entrants it pulls each rating
towards the centre by about rating gap * (se / 1000)^2, a small fraction of
an Elo in the tables of docs/bots.md.
"""


# --------------------------------------------------------------------------
# Live multiplayer Elo
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class EloConfig:
    """Parameters of the live multiplayer Elo.

    `k` is the step of an established player, `provisional_k` the larger step
    of a player with fewer than `provisional_games` games, so a new bot
    reaches its level quickly and an established one is not shaken by noise.
    """

    start: float = ELO_START
    k: float = 32.0
    provisional_k: float = 64.0
    provisional_games: int = 20


def expected_score(rating: float, opponent: float) -> float:
    """The expected score (win 1, draw 0.5, loss 0) of `rating` against `opponent`."""
    return 1.0 / (1.0 + math.pow(10.0, (opponent - rating) / 400.0))


def is_provisional(games_played: int, config: EloConfig = EloConfig()) -> bool:
    """Whether a player with `games_played` finished games is still provisional."""
    return games_played < config.provisional_games


def elo_update(
    ratings: Sequence[float],
    ranks: Sequence[int],
    games_played: Sequence[int],
    config: EloConfig = EloConfig(),
) -> list[float]:
    """The rating changes (deltas, not new ratings) of one game's players.

    The three sequences run over the game's players in the same order:
    their ratings before the game, their ranks in it (1 best, equal ranks
    tie) and the games each had finished before this one. Every pair of
    players (i, j) scores S_ij = 1, 0.5 or 0 for i by rank, against the
    expectation E_ij = 1/(1+10^((R_j-R_i)/400)), and

        delta_i = K_i/(N-1) * sum_{j != i} (S_ij - E_ij)

    with K_i = `provisional_k` while player i has fewer than
    `provisional_games` games, else `k`. When all K_i are equal the deltas
    sum to zero, since S_ij + S_ji = E_ij + E_ji = 1.

    Deltas are returned rather than new ratings because the store records
    each match's rating changes alongside the match.
    """
    n = len(ratings)
    if len(ranks) != n or len(games_played) != n:
        raise ValueError("ratings, ranks and games_played must have the same length")
    if n < 2:
        # A game with nobody to beat says nothing about strength.
        return [0.0] * n
    deltas = []
    for i in range(n):
        total = 0.0
        for j in range(n):
            if j == i:
                continue
            if ranks[i] < ranks[j]:
                score = 1.0
            elif ranks[i] == ranks[j]:
                score = 0.5
            else:
                score = 0.0
            total += score - expected_score(ratings[i], ratings[j])
        k = config.provisional_k if is_provisional(games_played[i], config) else config.k
        deltas.append(k / (n - 1) * total)
    return deltas


# --------------------------------------------------------------------------
# Tournament table: maximum-likelihood Plackett-Luce with Breslow ties
# --------------------------------------------------------------------------


Standing = Literal["measured", "below", "above", "unmeasured"]
"""What the games show about an item's rating (see `ItemRating`)."""


@dataclass(frozen=True)
class ItemRating:
    """One item's line of the tournament table.

    `standing` says what the games show:

    * "measured": `rating` is the estimate, `se` its standard error relative
      to the field's centre (1500, see `plackett_luce`), and `ci_low` and
      `ci_high` are `rating -/+ q * se`, q Student's t on `df` degrees of
      freedom (`_degrees_of_freedom`), or the normal quantile when `df` is
      None (no clusters, or fewer than two).
    * "below" ("above"): the item finished behind (ahead of) every measured
      item in each game it shared with them, so no finite estimate exists,
      however many such games there are; only a one-sided bound does.
      `rating` is that bound, at the fit's confidence: `ci_high` (`ci_low`)
      equals it, the other end is -inf (+inf), `se` is inf.
    * "unmeasured": no game sets the item against the measured ones; `rating`
      is nan, the interval (-inf, inf), `se` inf.

    `reason` says why an item is not "measured" ("" when it is), or, for the
    only measured item of a fit, that it is what the others are placed against
    (its interval is then its rating alone); `df` is None when it is not
    measured.
    """

    rating: float
    se: float
    ci_low: float
    ci_high: float
    games: int
    standing: Standing = "measured"
    reason: str = ""
    df: float | None = None


@dataclass(frozen=True)
class PLFit:
    """The result of `plackett_luce`: one `ItemRating` per item, by item number.

    `log_likelihood` is the Plackett-Luce (Breslow) log-likelihood, without
    the prior, of the measured items' games among themselves at the fitted
    strengths. `weights` are the items' shares of the table's centre (0 for an
    item that is not measured).
    """

    items: tuple[ItemRating, ...]
    log_likelihood: float
    converged: bool
    weights: tuple[float, ...]

    @property
    def ratings(self) -> list[float]:
        """The ratings alone, by item number (a bound or nan when not measured)."""
        return [item.rating for item in self.items]


@dataclass(frozen=True)
class _Stages:
    """The data as a list of choice stages, ready for vectorised sums.

    Each ranked game becomes stages, one per group of tied places except a
    last place held alone: stage s picks its tied group D_s out of the
    players R_s not yet placed. Then

        log L = sum_i wins_i * theta_i - sum_s |D_s| * log sum_{j in R_s} exp(theta_j)

    where wins_i counts the stages item i was picked at.
    """

    remaining: Any  # scipy.sparse CSR array, stages x items, 1 where j in R_s
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


def _stages(n_items: int, rankings: Sequence[Ranking]) -> _Stages:
    rows: list[int] = []
    cols: list[int] = []
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
                for item, _rank in ordered[start:end]:
                    wins[item] += 1.0
                    chosen_rows.append(stage)
                    chosen_cols.append(item)
                picked.append(float(end - start))
                game_of.append(number)
            start = end
    remaining = scipy.sparse.csr_array(
        (np.ones(len(rows)), (np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64))),
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


def _optimum(n_items: int, rankings: Sequence[Ranking], ridge: float) -> _Optimum:
    """Fit `n_items` >= 2 items whose comparison graph is strongly connected."""
    stages = _stages(n_items, rankings)
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
    # trust-exact may stop on a tiny trust radius at an optimum already
    # within rounding; judge convergence by the gradient instead.
    gradient = np.asarray(result.jac, dtype=np.float64)
    return _Optimum(
        stages,
        theta,
        basis,
        np.asarray(np.linalg.inv(basis.T @ observed @ basis), dtype=np.float64),
        observed,
        loglik,
        bool(result.success) or float(np.abs(gradient).max()) < 1e-6,
    )


@dataclass(frozen=True)
class _Jackknife:
    """The cluster jackknife of a fit, on its basis, and what `_degrees_of_freedom` needs.

    `leave_out[g]` is (H - H_g)^-1 and `informations[g]` is H_g, for each of
    the C = `count` clusters (`_jackknife`).
    """

    covariance: FloatArray
    count: int
    leave_out: FloatArray  # C x k x k
    informations: FloatArray  # C x k x k


def _jackknife(fit: _Optimum, clusters: Sequence[int]) -> _Jackknife:
    """The cluster jackknife covariance on the basis, over the clusters that hold stages.

    Leaving cluster g out moves the estimate by about D_g = (H - H_g)^-1 s_g,
    one Newton step from the optimum (H the observed information, H_g and
    s_g cluster g's information and summed score); the covariance is
    (C - 1)/C sum_g (D_g - mean D)(D_g - mean D)^T over the C clusters. In a
    balanced design it is about the CR1 sandwich H^-1 (sum_g s_g s_g^T) H^-1
    C/(C - 1); where a few clusters hold much of an item's information (an
    entrant in few of a tournament's matches) it is wider, as it should be:
    CR1 held 82% coverage there at two deals, this 94% (`bench.coverage`).
    With fewer than two clusters the spread between clusters cannot be
    estimated: the model's own covariance H^-1 is the covariance.
    """
    scores, parts = _cluster_parts(fit.stages, fit.theta, clusters)
    count = len(scores)
    informations = np.array([fit.basis.T @ part @ fit.basis for part in parts])
    if count < 2:
        return _Jackknife(fit.inverse, count, np.zeros_like(informations), informations)
    whole = fit.basis.T @ fit.information @ fit.basis
    leave_out = np.linalg.inv(whole[np.newaxis, :, :] - informations)
    steps = np.einsum("gij,gj->gi", leave_out, scores @ fit.basis)
    steps -= steps.mean(axis=0)
    covariance = np.asarray(steps.T @ steps * ((count - 1) / count), dtype=np.float64)
    return _Jackknife(covariance, count, leave_out, informations)


def _degrees_of_freedom(jack: _Jackknife, contrast: FloatArray) -> float:
    """Welch-Satterthwaite degrees of freedom of the jackknife variance of contrast' phi.

    That variance is (C - 1)/C sum_g (u_g - mean u)^2 over the clusters'
    pseudo-values u_g = c_g' s_g, c_g = (H - H_g)^-1 contrast. Taken as
    independent and normal with the variances the model gives them,
    e_g = c_g' H_g c_g (the working model of Bell and McCaffrey 2002), the
    sum is a quadratic form with matrix N = P diag(e) P, P centring over the
    clusters, and matching its first two moments to a scaled chi-square gives
    df = tr(N)^2 / tr(N^2), in closed form below. Clusters that inform the
    contrast alike (a duplicate deal played by the whole field) give
    df = C - 1; where a few clusters carry it (an entrant in two of a
    tournament's three deals) it falls towards 1, and so the interval is
    on as many degrees of freedom as the clusters that actually inform it.
    (Linearising further, the estimated scores sum to zero, which takes
    H_g H^-1 R^T terms off N: that pushed an entrant in two of three deals to
    1 df and 97.1% coverage, over the 93-97% band; this form holds 94.2%.)
    """
    count = jack.count
    leave = jack.leave_out @ contrast
    e = np.einsum("gi,gij,gj->g", leave, jack.informations, leave)
    total = float(e.sum())
    trace = (1.0 - 1.0 / count) * total
    square = (1.0 - 2.0 / count) * float(e @ e) + total**2 / count**2
    return trace**2 / square


def _placement_terms(others: FloatArray, below: bool) -> tuple[FloatArray, FloatArray]:
    """Signs and log-strength sums such that sum(sign / (1 + exp(sums - t))) is the
    Plackett-Luce chance that an item of log-strength t finishes behind
    (`below`) or ahead of all of `others`.

    Ahead of all: w / (w + sum w_j), one term. Behind all, by
    inclusion-exclusion over the subsets A of the others (the chance of
    beating all of A is w / (w + w_A)): sum_A (-1)^|A| w / (w + w_A).
    """
    if not below:
        return np.ones(1), np.array([float(scipy.special.logsumexp(others))])
    signs: list[float] = []
    sums: list[float] = []
    for size in range(len(others) + 1):
        for subset in itertools.combinations(others, size):
            signs.append(-1.0 if size % 2 else 1.0)
            sums.append(float(scipy.special.logsumexp(subset)) if subset else -math.inf)
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


ALONE = "the only bot the games measure: the others are placed against it"
"""Why the lone measured item of a fit has no interval: a rating is only ever relative."""


def _t_quantile(confidence: float, df: float | None) -> float:
    """The multiplier of a standard error for a two-sided interval: Student's t on
    `df` degrees of freedom, or the normal quantile when `df` is None."""
    level = 0.5 + confidence / 2.0
    if df is None:
        return NormalDist().inv_cdf(level)
    return float(scipy.stats.t.ppf(level, df))


def plackett_luce(
    n_items: int,
    rankings: Sequence[Ranking],
    *,
    prior_sd: float | None = DEFAULT_PRIOR_SD,
    confidence: float = 0.95,
    clusters: Sequence[int] | None = None,
) -> PLFit:
    """Maximum-likelihood Plackett-Luce ratings with confidence intervals.

    Model: item i has strength w_i = exp(theta_i). A game's ranking is built
    best place first; at each stage the next place goes to item i out of the
    not-yet-placed set R with chance w_i / sum_{j in R} w_j. Ties use
    Breslow's approximation: a group D tied for a place, with R remaining,
    contributes prod_{i in D} w_i / (sum_{j in R} w_j)^|D|. Without ties this
    is the ordinary Plackett-Luce likelihood; two-player games reduce it to
    Bradley-Terry (and a two-player draw counts as one win and one loss).

    Measured items: the estimate is finite only for items that reach each
    other along "finished ahead of or level with". The largest such group is
    fitted, from its games among themselves (an item that only ever finished
    behind them drops out of a ranking without changing the others' order,
    which is what its strength running to -infinity does to the
    likelihood). Every other item gets no estimate but, when the games allow
    it, a one-sided bound at `confidence` (`ItemRating`, "below" / "above",
    computed by `_bound`), or is "unmeasured".

    Identifiability: only strength ratios matter, so sum(theta) is pinned to
    0 by optimising over the sum-zero subspace.

    Prior: each measured theta_i gets an independent Gaussian N(0, s^2)
    prior, s = `prior_sd` / (400/ln 10), i.e. the penalty theta.theta / (2 s^2)
    is added to the negative log-likelihood. Since the measured items always
    have a finite maximum, it is only a numerical guard: it keeps the
    Hessian well conditioned when the data barely separate an item. It is
    symmetric in a shift of all the thetas, so it agrees with the sum-zero
    pinning. `prior_sd=None` fits pure maximum likelihood.

    Fit: Newton-type trust-region (`scipy.optimize.minimize`, "trust-exact")
    with the analytic gradient and Hessian; the problem is convex, so this
    converges to the unique optimum in a handful of steps.

    Ratings: 1500 + 400/ln(10) * (theta_i - c), so rating differences
    follow the Elo expected-score curve in head-to-head play. Intervals:
    rating +/- q * se, se from the covariance of theta on the sum-zero
    subspace. Without `clusters` it is the inverse of the observed
    information (Hessian of the penalised negative log-likelihood) and q the
    normal quantile (1.96 for 95%).

    The centre c, rated 1500, is the mean of the measured thetas weighted by
    how much the data tell about each (the diagonal of the observed
    information), and each se is relative to that centre. Only differences
    are identified, so some centre must be chosen; the plain mean would hand
    1/n of the doubt about a barely measured entrant (one that nearly always
    lost) to every other entrant's interval. Differences between ratings,
    and their doubt, do not depend on the centre.

    Clusters: games that are not independent (the seat rotations of one
    duplicate deal) share a label in `clusters` (one label per ranking).
    The covariance is then the cluster jackknife (`_jackknife`), and q
    Student's t on each interval's own degrees of freedom: the variance
    comes from C cluster totals (C the clusters holding games of measured
    items), and with few of them the normal quantile made the intervals far
    too narrow (70% coverage at two deals). Each interval is of an item's
    rating relative to the centre, and the clusters do not inform it alike
    when the item plays in only some of them (a tournament's deals), so its
    df is Welch-Satterthwaite's for that contrast (`_degrees_of_freedom`):
    C - 1 when every cluster holds the whole field, fewer otherwise. t on
    C - 1 for every interval held only 92.3% at three deals of five entrants
    at four players. `python -m bench.coverage` checks the coverage at 2 to
    20 deals. One cluster alone
    carries no spread between clusters: the intervals then fall back to the
    model's (games counted as independent), and claim too much.

    `games` counts the games with at least two participants an item took
    part in; games with fewer are ignored.
    """
    if n_items < 0:
        raise ValueError("n_items must not be negative")
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be between 0 and 1")
    if prior_sd is not None and not prior_sd > 0.0:
        raise ValueError("prior_sd must be positive, or None for no prior")
    if clusters is not None and len(clusters) != len(rankings):
        raise ValueError("clusters must give one label per ranking")
    # An infinitely wide prior is no prior.
    ridge = 0.0 if prior_sd is None else (ELO_PER_NAT / prior_sd) ** 2
    games = _stages(n_items, rankings).games
    if n_items <= 1:
        # One item is its own field: it sits at the centre with no doubt.
        alone = tuple(ItemRating(ELO_START, 0.0, ELO_START, ELO_START, count) for count in games)
        return PLFit(alone, 0.0, True, tuple(1.0 for _ in games))

    standings = _standings(n_items, rankings, games)
    measured = [item for item in range(n_items) if standings[item] == "measured"]
    index = {item: number for number, item in enumerate(measured)}
    among = [[(index[item], rank) for item, rank in game if item in index] for game in rankings]
    labels = list(range(len(rankings))) if clusters is None else list(clusters)
    theta = np.zeros(len(measured))
    covariance = np.zeros((len(measured), len(measured)))
    weights = np.ones(len(measured)) / max(len(measured), 1)
    dfs: list[float | None] = [None] * len(measured)
    loglik, converged = 0.0, True
    if len(measured) > 1:
        fit = _optimum(len(measured), among, ridge)
        weights = np.diag(fit.information) / np.trace(fit.information)
        centring = np.eye(len(measured)) - np.outer(np.ones(len(measured)), weights)
        theta = centring @ fit.theta
        # Row i: item i's rating relative to the centre, as a contrast on the basis.
        contrasts = centring @ fit.basis
        inverse = fit.inverse
        if clusters is not None:
            jack = _jackknife(fit, clusters)
            inverse = jack.covariance
            if jack.count >= 2:
                dfs = [_degrees_of_freedom(jack, row) for row in contrasts]
        covariance = contrasts @ inverse @ contrasts.T
        model = np.diag(contrasts @ fit.inverse @ contrasts.T)
        # Clusters that all agree exactly (each one's scores balanced at the fit) give the
        # jackknife no spread to see: as with a single cluster, the model's variance then.
        agreeing = np.diag(covariance) <= 1e-9 * model
        covariance[agreeing, agreeing] = model[agreeing]
        dfs = [None if agreed else df for agreed, df in zip(agreeing, dfs, strict=True)]
        loglik, converged = fit.log_likelihood, fit.converged
    se = np.sqrt(np.clip(np.diag(covariance), 0.0, None)) * ELO_PER_NAT
    strength = {item: float(theta[index[item]]) for item in measured}
    items: list[ItemRating] = []
    for item in range(n_items):
        standing = standings[item]
        if standing == "measured":
            number = index[item]
            rating = ELO_START + ELO_PER_NAT * theta[number]
            quantile = _t_quantile(confidence, dfs[number])
            items.append(
                ItemRating(
                    rating=float(rating),
                    se=float(se[number]),
                    ci_low=float(rating - quantile * se[number]),
                    ci_high=float(rating + quantile * se[number]),
                    games=games[item],
                    reason="" if len(measured) > 1 else ALONE,
                    df=dfs[number],
                )
            )
            continue
        bound = None
        if standing != "unmeasured":
            below = standing == "below"
            bound = _bound(item, below, rankings, labels, strength, 1.0 - confidence)
        if bound is None:
            reason = "no games against the measured entrants" if games[item] else "no games"
            items.append(
                ItemRating(
                    math.nan, math.inf, -math.inf, math.inf, games[item], "unmeasured", reason
                )
            )
            continue
        rating = ELO_START + ELO_PER_NAT * bound[0]
        side = "behind" if below else "ahead of"
        reason = f"{side} every measured entrant in all {bound[1]} of its games with them"
        low, high = (-math.inf, rating) if below else (rating, math.inf)
        items.append(ItemRating(rating, math.inf, low, high, games[item], standing, reason))
    shares = [float(weights[index[item]]) if item in index else 0.0 for item in range(n_items)]
    return PLFit(tuple(items), loglik, converged, tuple(shares))


_STANDING_ORDER: dict[Standing, int] = {"above": 0, "measured": 1, "below": 2, "unmeasured": 3}


def table_order(item: ItemRating) -> tuple[int, float]:
    """A sort key, best first: above the field, then the measured by rating, then
    below the field, then the unmeasured (an item below the field finished
    behind every measured one, whatever its bound says)."""
    rating = item.rating if math.isfinite(item.rating) else 0.0
    return _STANDING_ORDER[item.standing], -rating


def table_line(item: ItemRating, digits: int | None) -> dict[str, Any]:
    """An item's line as JSON: its numbers rounded to `digits` (None: to an int).

    Keys: "rating", "ci_low", "ci_high", "games", "measured" (whether the games
    measure it), "bound" ("below" or "above" when only a one-sided bound
    exists, else null) and "reason" (why it is not measured, else null). A
    bounded line has the bound as "rating" and as the interval's closed end,
    the open end null; an unmeasured line has null rating and interval.
    """

    def number(value: float) -> float | int | None:
        if not math.isfinite(value):
            return None
        return round(value) if digits is None else round(value, digits)

    return {
        "rating": number(item.rating),
        "ci_low": number(item.ci_low),
        "ci_high": number(item.ci_high),
        "games": item.games,
        "measured": item.standing == "measured",
        "bound": item.standing if item.standing in ("below", "above") else None,
        "reason": item.reason or None,
    }


def duplicate_variance_ratios(
    n_items: int,
    rankings: Sequence[Ranking],
    clusters: Sequence[int],
    *,
    prior_sd: float | None = DEFAULT_PRIOR_SD,
) -> dict[tuple[int, int], float]:
    """What duplicate play saved: per pair of measured items (a < b), the variance of
    their rating difference from these clustered games over its variance had
    the same games been independent.

    Both come from the same fit: the cluster jackknife over the
    clusters (the deals, each played in every rotation), and over single
    games, which is what one rotation per deal would give with as many
    games (its spread is the games' own, around the same model). Below 1,
    the rotations of a deal cancel each other's luck; about 1, they do not.
    """
    if len(clusters) != len(rankings):
        raise ValueError("clusters must give one label per ranking")
    ridge = 0.0 if prior_sd is None else (ELO_PER_NAT / prior_sd) ** 2
    games = _stages(n_items, rankings).games
    if n_items < 2:
        return {}
    standings = _standings(n_items, rankings, games)
    measured = [item for item in range(n_items) if standings[item] == "measured"]
    if len(measured) < 2:
        return {}
    index = {item: number for number, item in enumerate(measured)}
    among = [[(index[item], rank) for item, rank in game if item in index] for game in rankings]
    fit = _optimum(len(measured), among, ridge)
    duplicate = _jackknife(fit, clusters).covariance
    independent = _jackknife(fit, range(len(rankings))).covariance
    ratios: dict[tuple[int, int], float] = {}
    for a, b in itertools.combinations(measured, 2):
        contrast = fit.basis[index[a]] - fit.basis[index[b]]
        spread = float(contrast @ independent @ contrast)
        if spread > 0.0:
            ratios[(a, b)] = float(contrast @ duplicate @ contrast) / spread
    return ratios


# --------------------------------------------------------------------------
# Is bot A stronger than bot B?
# --------------------------------------------------------------------------


def pairwise_record(rankings: Sequence[Ranking], a: int, b: int) -> tuple[int, int, int]:
    """A's (wins, draws, losses) against B over the games where both took part.

    A win is a better (lower) rank than B's, whatever the other players did.
    """
    if a == b:
        raise ValueError("a and b must be different items")
    wins = draws = losses = 0
    for game in rankings:
        ranks = dict(game)
        if len(ranks) != len(game):
            raise ValueError("an item appears twice in one game")
        if a not in ranks or b not in ranks:
            continue
        if ranks[a] < ranks[b]:
            wins += 1
        elif ranks[a] == ranks[b]:
            draws += 1
        else:
            losses += 1
    return wins, draws, losses


def likelihood_of_superiority(wins: float, losses: float) -> float:
    """The chance that A is stronger than B given A's wins and losses against B.

    LOS = 0.5 * (1 + erf((wins - losses) / sqrt(2 * (wins + losses)))), the
    normal approximation engine testers use; draws carry no information on
    which side is stronger, so they are left out. With no decisive games it
    is 0.5.
    """
    if wins < 0 or losses < 0:
        raise ValueError("wins and losses must not be negative")
    if wins + losses == 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * (wins + losses))))


@dataclass(frozen=True)
class SprtResult:
    """The state of a sequential probability ratio test.

    Stop and accept H1 (A is `elo1` stronger) when `llr >= upper`, accept H0
    (A is only `elo0` stronger) when `llr <= lower`, otherwise keep playing.
    """

    llr: float
    lower: float
    upper: float
    decision: Literal["H0", "H1", "continue"]


# Zero counts are replaced by this when estimating the score variance (as
# fishtest does), so that e.g. a run of only wins has a tiny but positive
# variance instead of an undefined test.
_SPRT_EPSILON = 1e-3


def sprt(
    wins: float,
    draws: float,
    losses: float,
    elo0: float = 0.0,
    elo1: float = 10.0,
    alpha: float = 0.05,
    beta: float = 0.05,
) -> SprtResult:
    """Sequential probability ratio test of H0: elo = elo0 against H1: elo = elo1.

    The trinomial generalised SPRT in its normal approximation, as fishtest
    and cutechess use it with the logistic Elo model. With N games, score
    s = (W + D/2)/N, per-game variance var = (W + D/4)/N - s^2 and the
    expected scores s_k = 1/(1+10^(-elo_k/400)) of the hypotheses,

        LLR = N * (s1 - s0) * (2s - s0 - s1) / (2 var)

    which is the log-likelihood ratio of the two hypotheses when the mean
    score is normal with that variance. Wald's bounds are
    lower = ln(beta/(1-alpha)) and upper = ln((1-beta)/alpha).
    """
    if min(wins, draws, losses) < 0:
        raise ValueError("counts must not be negative")
    if not (0.0 < alpha < 1.0 and 0.0 < beta < 1.0):
        raise ValueError("alpha and beta must be between 0 and 1")
    lower = math.log(beta / (1.0 - alpha))
    upper = math.log((1.0 - beta) / alpha)
    n = wins + draws + losses
    llr = 0.0
    if n > 0:
        w, d, lo = (max(count, _SPRT_EPSILON) for count in (wins, draws, losses))
        total = w + d + lo
        score = (w + d / 2.0) / total
        variance = (w + d / 4.0) / total - score**2
        s0 = expected_score(elo0, 0.0)
        s1 = expected_score(elo1, 0.0)
        llr = n * (s1 - s0) * (2.0 * score - s0 - s1) / (2.0 * variance)
    decision: Literal["H0", "H1", "continue"]
    if llr >= upper:
        decision = "H1"
    elif llr <= lower:
        decision = "H0"
    else:
        decision = "continue"
    return SprtResult(llr, lower, upper, decision)
