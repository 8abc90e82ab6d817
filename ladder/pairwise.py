"""Is bot A stronger than bot B? The statistics engine testers use; pure functions, no I/O.

`pairwise_record` counts A's wins, draws and losses against B,
`likelihood_of_superiority` and `sprt` test them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ladder.elo import Ranking, expected_score

__all__ = [
    "SprtResult",
    "likelihood_of_superiority",
    "pairwise_record",
    "sprt",
]


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
