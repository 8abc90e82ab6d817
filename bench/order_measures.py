"""How well standings order a field of known strengths: shared by the ladder's and the
tournaments' simulations (`bench.ladder_sim`, `bench.swiss_sim`)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import scipy.stats  # type: ignore[import-untyped]

FloatArray = npt.NDArray[np.float64]


def kendall_tau(scores: FloatArray, truth: FloatArray) -> float:
    """Kendall's tau-b between the standings' scores (higher is better) and the truth."""
    return float(scipy.stats.kendalltau(scores, truth).statistic)


def top_share(scores: FloatArray, truth: FloatArray, top: int) -> float:
    """The share of the true best `top` (or the field, when smaller) in the standings' best."""
    top = min(top, len(truth))
    best = set(np.argsort(-truth)[:top].tolist())
    # The bots are numbered in random order, so a stable sort favours none of those level.
    shown = set(np.argsort(-scores, kind="stable")[:top].tolist())
    return len(best & shown) / top
