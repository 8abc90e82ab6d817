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

__all__ = [
    "DEFAULT_PRIOR_SD",
    "ELO_PER_NAT",
    "ELO_START",
    "EloConfig",
    "ItemRating",
    "PLFit",
    "Ranking",
    "SprtResult",
    "elo_update",
    "expected_score",
    "is_provisional",
    "likelihood_of_superiority",
    "pairwise_record",
    "plackett_luce",
    "sprt",
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

Wide enough that it moves a rating backed by a few dozen games by well under
one Elo, narrow enough that a bot that won (or lost) every game still gets a
finite rating and interval instead of running off to infinity.
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


@dataclass(frozen=True)
class ItemRating:
    """One item's line of the tournament table.

    `se` is the standard error of `rating` relative to the field's centre
    (1500, see `plackett_luce`); `ci_low` and `ci_high` are `rating -/+ z * se`.
    """

    rating: float
    se: float
    ci_low: float
    ci_high: float
    games: int


@dataclass(frozen=True)
class PLFit:
    """The result of `plackett_luce`: one `ItemRating` per item, by item number.

    `log_likelihood` is the Plackett-Luce (Breslow) log-likelihood of the
    data at the fitted strengths, without the prior.
    """

    items: tuple[ItemRating, ...]
    log_likelihood: float
    converged: bool

    @property
    def ratings(self) -> list[float]:
        """The ratings alone, by item number."""
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


def _cluster_scores(stages: _Stages, theta: FloatArray, clusters: Sequence[int]) -> FloatArray:
    """Per cluster, the sum of its stages' score vectors (gradients of log L)."""
    shift = float(theta.max())
    w = np.exp(theta - shift)
    z: FloatArray = stages.remaining @ w
    p = scipy.sparse.csr_array(
        stages.remaining.multiply(w[np.newaxis, :]).multiply(1.0 / z[:, np.newaxis])
    )
    per_stage = stages.chosen - p.multiply(stages.picked[:, np.newaxis])
    labels = sorted(set(clusters))
    index = {label: number for number, label in enumerate(labels)}
    of_stage = np.array([index[clusters[game]] for game in stages.game_of], dtype=np.int64)
    membership = scipy.sparse.csr_array(
        (np.ones(len(of_stage)), (of_stage, np.arange(len(of_stage)))),
        shape=(len(labels), len(of_stage)),
    )
    return np.asarray((membership @ per_stage).toarray(), dtype=np.float64)


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


def _strongly_connected(n_items: int, rankings: Sequence[Ranking]) -> bool:
    """Whether every item reaches every other along "finished ahead of or level with".

    This is the condition (Hunter 2004) for the Plackett-Luce likelihood to
    have a finite maximum: otherwise some group only ever beat the rest and
    its ratings run off to infinity. A tie counts in both directions, since
    the Breslow factor of a tied group is largest when its strengths are equal.
    """
    sources: list[int] = []
    targets: list[int] = []
    for game in rankings:
        for item, rank in game:
            for other, other_rank in game:
                if other != item and rank <= other_rank:
                    sources.append(item)
                    targets.append(other)
    graph = scipy.sparse.csr_array(
        (
            np.ones(len(sources)),
            (np.array(sources, dtype=np.int64), np.array(targets, dtype=np.int64)),
        ),
        shape=(n_items, n_items),
    )
    count, _labels = scipy.sparse.csgraph.connected_components(graph, connection="strong")
    return int(count) == 1


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

    Identifiability: only strength ratios matter, so sum(theta) is pinned to
    0 by optimising over the sum-zero subspace.

    Prior: each theta_i gets an independent Gaussian N(0, s^2) prior, s =
    `prior_sd` / (400/ln 10), i.e. the penalty theta.theta / (2 s^2) is added
    to the negative log-likelihood. It keeps the estimate finite for an item
    that always won or always lost, and makes the Hessian invertible for an
    item with no games (which then sits at 1500 with an interval of about
    +/- 1.96 * prior_sd). The penalty is symmetric in a shift of all the thetas,
    so it agrees with the sum-zero pinning: the penalised optimum is centred
    on its own. `prior_sd=None` fits pure maximum likelihood, which exists
    only when no group of items always finished ahead of the rest (the
    comparison graph is strongly connected); otherwise it raises ValueError.

    Fit: Newton-type trust-region (`scipy.optimize.minimize`, "trust-exact")
    with the analytic gradient and Hessian; the problem is convex, so this
    converges to the unique optimum in a handful of steps.

    Ratings: 1500 + 400/ln(10) * (theta_i - c), so rating differences
    follow the Elo expected-score curve in head-to-head play. Intervals: the
    covariance of theta is the inverse of the observed information (Hessian
    of the penalised negative log-likelihood) on the sum-zero subspace;
    rating +/- z * se with z = 1.96 for 95%.

    The centre c, rated 1500, is the mean of the thetas weighted by how much
    the data tell about each (the diagonal of the observed information), and
    each se is relative to that centre. Only differences are identified, so
    some centre must be chosen; the plain mean would hand 1/n of the doubt
    about an entrant the data barely measure (one that always lost, whose
    rating only the prior holds) to every other entrant's interval, so one
    hopeless entrant would blur a whole table. Differences between ratings,
    and their doubt, do not depend on the centre.

    Clusters: games that are not independent (the seat rotations of one
    duplicate deal) share a label in `clusters` (one label per ranking).
    The covariance is then the cluster-robust sandwich H^-1 M H^-1, M the
    sum over clusters of the outer products of their summed scores, scaled
    by C / (C - 1) for C clusters: counting correlated rotations as
    independent games would make the intervals too narrow.

    `games` counts the games with at least two participants an item took
    part in; games with fewer are ignored.
    """
    if n_items < 0:
        raise ValueError("n_items must not be negative")
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be between 0 and 1")
    if prior_sd is not None and not prior_sd > 0.0:
        raise ValueError("prior_sd must be positive, or None for no prior")
    # An infinitely wide prior is no prior.
    ridge = 0.0 if prior_sd is None else (ELO_PER_NAT / prior_sd) ** 2
    stages = _stages(n_items, rankings)
    if ridge == 0.0 and n_items > 1:
        if min(stages.games) == 0:
            missing = stages.games.index(0)
            raise ValueError(f"item {missing} has no games; it can only be rated with a prior")
        if not _strongly_connected(n_items, rankings):
            raise ValueError(
                "no maximum-likelihood estimate: some group of items never finished "
                "behind (or level with) the rest; rate them with a prior"
            )
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)

    if n_items <= 1:
        # One item is its own field: it sits at the centre with no doubt.
        items = tuple(
            ItemRating(ELO_START, 0.0, ELO_START, ELO_START, games) for games in stages.games
        )
        return PLFit(items, 0.0, True)

    # Orthonormal basis of the sum-zero subspace: theta = basis @ phi.
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
    phi = np.asarray(result.x, dtype=np.float64)
    theta = basis @ phi
    loglik, _, _ = _log_likelihood_parts(stages, theta, with_hessian=False)
    observed = information(theta)
    inverse = np.linalg.inv(basis.T @ observed @ basis)
    if clusters is not None and len(set(clusters)) > 1:
        if len(clusters) != len(rankings):
            raise ValueError("clusters must give one label per ranking")
        scores = _cluster_scores(stages, theta, clusters) @ basis
        count = len(scores)
        meat = scores.T @ scores * (count / (count - 1))
        inverse = inverse @ meat @ inverse
    weights = np.diag(observed) / np.trace(observed)
    centring = np.eye(n_items) - np.outer(np.ones(n_items), weights)
    theta = centring @ theta
    covariance = centring @ basis @ inverse @ basis.T @ centring.T
    se = np.sqrt(np.clip(np.diag(covariance), 0.0, None)) * ELO_PER_NAT
    rating = ELO_START + ELO_PER_NAT * theta
    items = tuple(
        ItemRating(
            rating=float(rating[i]),
            se=float(se[i]),
            ci_low=float(rating[i] - z * se[i]),
            ci_high=float(rating[i] + z * se[i]),
            games=stages.games[i],
        )
        for i in range(n_items)
    )
    # trust-exact may stop on a tiny trust radius at an optimum already
    # within rounding; judge convergence by the gradient instead.
    gradient = np.asarray(result.jac, dtype=np.float64)
    return PLFit(items, loglik, bool(result.success) or float(np.abs(gradient).max()) < 1e-6)


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
