"""The ladder's standings: a Plackett-Luce fit of all its rated games, with uncertainty; pure.

`fit_ladder` rates every bot of a ladder from all its games at once, on the
Elo scale, each with a standard error. It is the tournament table's model
(`ladder.plackett_luce`, its likelihood and optimum in
`ladder.pl_likelihood`) with one difference: the Gaussian prior on each
strength is the spread of the ladder's field, not only a numerical guard.
A ladder keeps rating bots with a handful of games, and the prior then does
what the tournament table's bounds do for a finished round robin: it keeps
a bot that won (or lost) its few games from running off to infinity, so
every bot has a finite rating and an uncertainty (a bot with no games: the
field's centre, with the prior's spread).

The spread is learnt from the games (empirical Bayes): each fit says how
spread its field is (`LadderFit.field_sd`), and the next fit, after more
results, takes that as its prior (`FIELD_SD` before the first). With a
fixed prior wider than the field, the ratings of an adaptive ladder came
out too far apart: `ladder.matchmaking.information_tables` seats bots of
like rating together, whose games say little about the whole field's
width (in a field of 200 Elo, a mean error of 107 Elo at 10 games per bot
with the prior fixed at 300, 64 with the prior learnt: `bench.ladder_sim
--spread 200`).

Why this model and not the live Elo or an online Bayesian rater: for bots of
fixed strength a fit of all the games reads each game with the opponents'
ratings as they are known now, not as they were then. In `python -m
bench.ladder_sim` (128 bots, 4 seats, 16 fields) its Kendall tau at 10 games
per bot was 0.783 on the new matchmaking's games, where TrueSkill had 0.774
and OpenSkill's Plackett-Luce 0.701 on the very same games, and the live Elo
0.736 on today's pairing; with duplicate deals 0.774 against TrueSkill's
0.733. The prior's spread is what a temperature of the likelihood would
learn (the ordering does not depend on the scale; the luck of the deal
flattens the ratings the games show by about 0.81, `bench.ladder_sim`'s
`luck_scale`, and the learnt spread follows the flattened field). Measured
on the same games (the new matchmaking's, 16 fields): the learnt prior 0.783
at 10 games and 0.843 at 20; priors fixed at 120, 180, 250 and 400 Elo
0.772, 0.784, 0.784 and 0.781 at 10 (0.824, 0.841, 0.844, 0.845 at 20); the
spread iterated to its fixed point at every fit 0.778 and 0.843: within the
noise of the learnt one, which needs no guess of the field. A fit is cheap:
0.05 s for 128 bots of 40 games each, 0.5 s for 512 of 100 (one BLAS
thread), so the standings can be refitted after every result.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ladder.elo import ELO_PER_NAT, ELO_START, Ranking, uncertain
from ladder.pl_likelihood import _optimum, _stages

__all__ = ["FIELD_SD", "MIN_FIELD_SD", "LadderFit", "LadderRating", "fit_ladder"]

FIELD_SD = 300.0
"""Standard deviation, in Elo, of the prior on each bot's rating: how far apart a field's
bots are believed to be before their games say anything."""

MIN_FIELD_SD = 50.0
"""The narrowest prior `LadderFit.field_sd` gives: games among bots of like rating
alone say little about the field's width, and an estimate that shrank with each
fit would pull every rating to the centre."""


@dataclass(frozen=True)
class LadderRating:
    """One bot's line: `rating` on the Elo scale (the field's mean is 1500), `se` its
    standard error relative to that mean, `games` the games with others it played."""

    rating: float
    se: float
    games: int

    @property
    def provisional(self) -> bool:
        """Whether the games leave the rating too uncertain to rank the bot with confidence."""
        return uncertain(self.se)


@dataclass(frozen=True)
class LadderFit:
    """The result of `fit_ladder`: one `LadderRating` per bot, by bot number."""

    bots: tuple[LadderRating, ...]
    converged: bool

    @property
    def field_sd(self) -> float:
        """The prior's spread (Elo) for the next fit: an expectation-maximisation step,
        the root mean square over the bots of their rating's distance from 1500 and
        its error, and never below `MIN_FIELD_SD`."""
        if not self.bots:
            return FIELD_SD
        spread = sum((bot.rating - ELO_START) ** 2 + bot.se**2 for bot in self.bots)
        return max(MIN_FIELD_SD, math.sqrt(spread / len(self.bots)))

    @property
    def ratings(self) -> list[float]:
        """The ratings alone, by bot number."""
        return [bot.rating for bot in self.bots]


def fit_ladder(
    n_bots: int,
    rankings: Sequence[Ranking],
    *,
    prior_sd: float = FIELD_SD,
    offsets: Sequence[Sequence[float]] | None = None,
) -> LadderFit:
    """The posterior mode of each bot's rating from all the ladder's games, and its error.

    Model: `ladder.plackett_luce`'s Plackett-Luce likelihood (ties by
    Breslow's approximation), times an independent Gaussian prior
    N(1500, `prior_sd`^2) on each rating, maximised over the strengths
    summing to zero (the prior's mode has that sum anyway: the likelihood's
    gradient sums to zero). The standard error is from the inverse of the
    observed information (the Hessian of the penalised negative
    log-likelihood: a Laplace approximation of the posterior) on that
    sum-zero subspace, so it is the doubt about a bot's rating relative to
    the field's mean. Games are taken as independent: the seat rotations of
    a duplicate deal share their luck, which the errors do not see.

    `offsets`, per game and entry of its ranking, are advantages known apart
    from the bots (nats added to the entry's strength in that game); a real
    ladder knows none, and `bench.ladder_sim` gives its deals' luck to show
    what knowing it would be worth.
    """
    if n_bots < 0:
        raise ValueError("n_bots must not be negative")
    if not prior_sd > 0.0:
        raise ValueError("prior_sd must be positive")
    if n_bots < 2:
        # One bot is its own field: it sits at the centre with no doubt.
        games = _stages(n_bots, rankings, offsets).games
        return LadderFit(tuple(LadderRating(ELO_START, 0.0, count) for count in games), True)
    fit = _optimum(n_bots, rankings, (ELO_PER_NAT / prior_sd) ** 2, offsets)
    games = fit.stages.games
    covariance = fit.basis @ fit.inverse @ fit.basis.T
    se = np.sqrt(np.clip(np.diag(covariance), 0.0, None)) * ELO_PER_NAT
    ratings = ELO_START + ELO_PER_NAT * fit.theta
    return LadderFit(
        tuple(
            LadderRating(float(rating), float(error), count)
            for rating, error, count in zip(ratings, se, games, strict=True)
        ),
        fit.converged,
    )
