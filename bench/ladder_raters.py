"""The raters `bench.ladder_sim` compares: each rates the games one at a time and gives
its standings (one rating per bot, Elo scale) when asked.

Each game comes with the luck of the deal its entries had (`bench.coverage.LuckyGame`);
only a `FitRater` made to know it reads it: no real ladder can."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import trueskill  # type: ignore[import-untyped]
from openskill.models import PlackettLuce, PlackettLuceRating

from ladder.elo import ELO_PER_NAT, ELO_START, Ranking, elo_update
from ladder.ladder_fit import FIELD_SD, LadderFit, fit_ladder

FloatArray = npt.NDArray[np.float64]


class EloRater:
    """The live Elo of `ladder.elo`, every bot starting at 1500."""

    def __init__(self, bots: int) -> None:
        self.elo = np.full(bots, ELO_START)
        self.games = [0] * bots

    def rate(self, game: Ranking, luck: Sequence[float]) -> None:
        bots = [bot for bot, _ in game]
        deltas = elo_update(
            [float(self.elo[bot]) for bot in bots],
            [rank for _, rank in game],
            [self.games[bot] for bot in bots],
        )
        for bot, delta in zip(bots, deltas, strict=True):
            self.elo[bot] += delta
            self.games[bot] += 1

    def standings(self) -> FloatArray:
        return self.elo


class FitRater:
    """`ladder.ladder_fit.fit_ladder` of every game so far, refitted when asked after new
    games, each fit's prior the spread the fit before it found.

    With `knows_luck`, each game's luck of the deal is the fit's offset for it: the
    ratings a fit would give if every deal's advantages were known exactly.
    """

    def __init__(self, bots: int, *, knows_luck: bool = False) -> None:
        self.bots = bots
        self.games: list[Ranking] = []
        self.luck: list[Sequence[float]] | None = [] if knows_luck else None
        self.last: LadderFit | None = None
        self.prior_sd = FIELD_SD

    def rate(self, game: Ranking, luck: Sequence[float]) -> None:
        self.games.append(game)
        if self.luck is not None:
            self.luck.append(luck)
        self.last = None

    def fit(self) -> LadderFit:
        if self.last is None:
            self.last = fit_ladder(self.bots, self.games, prior_sd=self.prior_sd, offsets=self.luck)
            self.prior_sd = self.last.field_sd
        return self.last

    def standings(self) -> FloatArray:
        return np.array(self.fit().ratings)


class TrueSkillRater:
    """TrueSkill (the `trueskill` package) on the Elo scale.

    Its performance noise beta is set so that two certain ratings D apart
    win as the Elo curve says: Phi(D / (sqrt(2) beta)) is about
    1/(1 + 10^(-D/400)) when sqrt(2) beta = 1.702 * 400/ln 10.
    """

    BETA = 1.702 * ELO_PER_NAT / math.sqrt(2.0)

    def __init__(self, bots: int) -> None:
        self.env = trueskill.TrueSkill(
            mu=ELO_START, sigma=FIELD_SD, beta=self.BETA, tau=0.0, draw_probability=0.0
        )
        self.ratings = [self.env.create_rating() for _ in range(bots)]

    def rate(self, game: Ranking, luck: Sequence[float]) -> None:
        groups = [(self.ratings[bot],) for bot, _ in game]
        rated = self.env.rate(groups, ranks=[rank for _, rank in game])
        for (bot, _), (rating,) in zip(game, rated, strict=True):
            self.ratings[bot] = rating

    def standings(self) -> FloatArray:
        return np.array([float(rating.mu) for rating in self.ratings])


class OpenSkillRater:
    """OpenSkill's Plackett-Luce model (Weng and Lin) on the Elo scale.

    Its strengths are exp(mu / c), c = sqrt(sum over the table of
    sigma^2 + beta^2); beta = (400/ln 10) / sqrt(seats) makes c the Elo scale's
    400/ln 10 once the ratings are certain.
    """

    def __init__(self, bots: int, seats: int) -> None:
        self.model = PlackettLuce(
            mu=ELO_START, sigma=FIELD_SD, beta=ELO_PER_NAT / math.sqrt(seats), tau=0.0
        )
        self.ratings: list[PlackettLuceRating] = [self.model.rating() for _ in range(bots)]

    def rate(self, game: Ranking, luck: Sequence[float]) -> None:
        teams = [[self.ratings[bot]] for bot, _ in game]
        rated = self.model.rate(teams, ranks=[float(rank) for _, rank in game])
        for (bot, _), (rating,) in zip(game, rated, strict=True):
            self.ratings[bot] = rating

    def standings(self) -> FloatArray:
        return np.array([rating.mu for rating in self.ratings])


Rater = EloRater | FitRater | TrueSkillRater | OpenSkillRater
