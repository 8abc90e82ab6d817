"""The intervals of the Plackett-Luce table (`ladder.plackett_luce`).

The cluster jackknife covariance (`_jackknife`), the Welch-Satterthwaite
degrees of freedom of each rating's variance (`_degrees_of_freedom`), and the
multiplier of a standard error they give (`_t_quantile`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import scipy.stats  # type: ignore[import-untyped]

from ladder.pl_likelihood import FloatArray, _cluster_parts, _Optimum


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


def _t_quantile(confidence: float, df: float | None) -> float:
    """The multiplier of a standard error for a two-sided interval: Student's t on
    `df` degrees of freedom, or the normal quantile when `df` is None."""
    level = 0.5 + confidence / 2.0
    if df is None:
        return NormalDist().inv_cdf(level)
    return float(scipy.stats.t.ppf(level, df))
