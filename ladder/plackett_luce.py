"""The tournament table: maximum-likelihood Plackett-Luce ratings with intervals; pure functions, no I/O.

`plackett_luce` -- ratings (Bradley-Terry when every game has two players)
with 95% confidence intervals from all of a tournament's games, as BayesElo
and Ordo rate engine round robins. Unlike live Elo (`ladder.elo`) the result
does not depend on the order the games were played in. The likelihood and
its optimum are in `ladder.pl_likelihood`, the jackknife intervals in
`ladder.intervals`, the bounds of unmeasured entrants in `ladder.bounds`.
Also here: the table's order and JSON lines (`table_order`, `table_line`) and
what duplicate play saved (`duplicate_variance_ratios`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ladder.bounds import _bound
from ladder.elo import ELO_PER_NAT, ELO_START, Ranking
from ladder.intervals import _degrees_of_freedom, _jackknife, _t_quantile
from ladder.pl_likelihood import Standing, _optimum, _stages, _standings

__all__ = [
    "ALONE",
    "DEFAULT_PRIOR_SD",
    "ItemRating",
    "PLFit",
    "duplicate_variance_ratios",
    "plackett_luce",
    "table_line",
    "table_order",
]


DEFAULT_PRIOR_SD = 1000.0
"""Standard deviation, in Elo, of the Gaussian prior `plackett_luce` puts on each rating.

Only a numerical guard. It no longer holds up an entrant the games cannot
measure (one that lost every game is shown as a bound, not a rating the
prior's width decided); on the measured entrants it pulls each rating
towards the centre by about rating gap * (se / 1000)^2, a small fraction of
an Elo in the tables of docs/bots.md.
"""


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


ALONE = "the only bot the games measure: the others are placed against it"
"""Why the lone measured item of a fit has no interval: a rating is only ever relative."""


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
