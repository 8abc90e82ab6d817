"""Do the tables' 95% intervals hold? Simulated duplicate tournaments of known strengths.

Prints one JSON line per format and number of deals:
{"format", "entrants", "players", "deals", "simulations", "intervals", "coverage",
"normal_coverage", "common_df_coverage", "unmeasured", "bounds_held"}.

Each simulated deal is played once per rotation of the seats, as `arena
compare` and duplicate tournaments play it, and its games share the luck of
the cards: every seat of the deal gets a random advantage (normal, `--luck`
nats) that whoever sits there enjoys, on top of Plackett-Luce noise around
the entrants' true strengths. Two formats: "compare" (four entrants at four
players, every deal with all of them) and "tournament" (five entrants at four
players, deal k played by the k-th four of them, as a round robin of
`arena tournament` schedules them). Each simulation is rated by
`ladder.plackett_luce.plackett_luce` with the deals as clusters.

"coverage" is the share of the measured entrants' intervals that hold the
truth: the ratings all the games would show (`full_data_strengths`), on the
table's own centre (the fit's weights over its measured entrants). "normal_coverage" is the same with the normal
quantile (rating -/+ 1.96 se), the intervals before the small-sample
correction, and "common_df_coverage" with Student's t on deals - 1 for every
interval, before each got the degrees of freedom of its own contrast.
"unmeasured" is the share of entrants the games left unmeasured
(an entrant that was, say, last in every game), and "bounds_held" the share
of their one-sided bounds the truth kept to (null when there were none).

    python -m bench.coverage [--simulations 1000] [--deals 2,3,5,10,20] [--seed 1]
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import scipy.stats  # type: ignore[import-untyped]

from ladder.elo import ELO_PER_NAT, ELO_START, Ranking
from ladder.plackett_luce import plackett_luce

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Format:
    """Who plays: the entrants' true ratings (Elo offsets) and the players per game."""

    name: str
    strengths: tuple[float, ...]
    players: int


FORMATS = (
    Format("compare", (-120.0, -40.0, 40.0, 120.0), 4),
    Format("tournament", (-160.0, -80.0, 0.0, 80.0, 160.0), 4),
)
DEFAULT_LUCK = 0.8
"""Spread (standard deviation, nats) of a seat's advantage from the cards of a deal."""
FULL_DATA_DEALS = 5000
"""Deals whose fit stands for the truth (`full_data_strengths`)."""


LuckyGame = tuple[Ranking, tuple[float, ...]]
"""A game and the luck of the deal each of its ranking's entries had, in the same order."""


def lucky_deal(
    rng: np.random.Generator, theta: FloatArray, entrants: Sequence[int], luck: float
) -> list[LuckyGame]:
    """One duplicate deal among `entrants`: one game per rotation of the seats, each with
    the advantage its seats gave to who sat there (what a real table never shows)."""
    players = len(entrants)
    seat_luck = rng.normal(0.0, luck, size=players)
    games: list[LuckyGame] = []
    for shift in range(players):
        had = [float(seat_luck[(place + shift) % players]) for place in range(players)]
        noisy = [
            theta[entrant] + had[place] + rng.gumbel() for place, entrant in enumerate(entrants)
        ]
        order = [int(place) for place in np.argsort(noisy)[::-1]]
        games.append(
            (
                [(entrants[place], rank + 1) for rank, place in enumerate(order)],
                tuple(had[place] for place in order),
            )
        )
    return games


def simulate_deal(
    rng: np.random.Generator, theta: FloatArray, entrants: Sequence[int], luck: float
) -> list[Ranking]:
    """One duplicate deal among `entrants`: one ranking per rotation of the seats."""
    return [game for game, _ in lucky_deal(rng, theta, entrants, luck)]


@dataclass(frozen=True)
class Tally:
    """Counts over the simulations of one format and number of deals."""

    intervals: int = 0
    covered: int = 0
    normal_covered: int = 0
    common_covered: int = 0
    lines: int = 0
    unmeasured: int = 0
    bounds: int = 0
    bounds_held: int = 0


def tournament(
    rng: np.random.Generator, form: Format, deals: int, luck: float
) -> tuple[list[Ranking], list[int]]:
    """The games of `deals` simulated duplicate deals, and their deal (cluster) numbers."""
    theta = np.array(form.strengths) / ELO_PER_NAT
    lineups = list(itertools.combinations(range(len(theta)), form.players))
    rankings: list[Ranking] = []
    clusters: list[int] = []
    for deal in range(deals):
        games = simulate_deal(rng, theta, lineups[deal % len(lineups)], luck)
        rankings += games
        clusters += [deal] * len(games)
    return rankings, clusters


def full_data_strengths(
    rng: np.random.Generator, form: Format, luck: float, deals: int = FULL_DATA_DEALS
) -> FloatArray:
    """What the ratings estimate: their value from very many deals, as log-strengths.

    Not the simulated strengths themselves: the seat luck adds noise that is
    not Plackett-Luce's, which pulls every rating towards the centre, so the
    fit converges to strengths a little closer together. The intervals are
    meant to hold what all the games would show.
    """
    rankings, clusters = tournament(rng, form, deals, luck)
    fit = plackett_luce(len(form.strengths), rankings, clusters=clusters)
    return (np.array(fit.ratings) - ELO_START) / ELO_PER_NAT


def simulate(
    rng: np.random.Generator,
    form: Format,
    deals: int,
    luck: float,
    target: FloatArray,
    tally: Tally,
) -> Tally:
    """One simulated tournament of `deals` deals, rated and checked against `target`."""
    rankings, clusters = tournament(rng, form, deals, luck)
    fit = plackett_luce(len(target), rankings, clusters=clusters)
    weights = np.array(fit.weights)
    truth = ELO_START + ELO_PER_NAT * (target - weights @ target)
    normal = 1.959963984540054
    common = float(scipy.stats.t.ppf(0.975, deals - 1))
    intervals, covered, normal_covered, common_covered, bounds, held = (0, 0, 0, 0, 0, 0)
    for true, item in zip(truth, fit.items, strict=True):
        if item.standing == "measured":
            intervals += 1
            covered += item.ci_low <= true <= item.ci_high
            normal_covered += abs(true - item.rating) <= normal * item.se
            common_covered += abs(true - item.rating) <= common * item.se
        elif math.isfinite(item.rating):
            bounds += 1
            held += item.ci_low <= true <= item.ci_high
    return Tally(
        tally.intervals + intervals,
        tally.covered + covered,
        tally.normal_covered + normal_covered,
        tally.common_covered + common_covered,
        tally.lines + len(fit.items),
        tally.unmeasured + len(fit.items) - intervals,
        tally.bounds + bounds,
        tally.bounds_held + held,
    )


def coverage(
    rng: np.random.Generator,
    form: Format,
    deals: int,
    simulations: int,
    luck: float,
    target: FloatArray,
) -> dict[str, object]:
    """The JSON line of one format and number of deals."""
    tally = Tally()
    for _ in range(simulations):
        tally = simulate(rng, form, deals, luck, target, tally)
    return {
        "format": form.name,
        "entrants": len(form.strengths),
        "players": form.players,
        "deals": deals,
        "simulations": simulations,
        "intervals": tally.intervals,
        "coverage": round(tally.covered / tally.intervals, 4),
        "normal_coverage": round(tally.normal_covered / tally.intervals, 4),
        "common_df_coverage": round(tally.common_covered / tally.intervals, 4),
        "unmeasured": round(tally.unmeasured / tally.lines, 4),
        "bounds_held": round(tally.bounds_held / tally.bounds, 4) if tally.bounds else None,
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulations", type=int, default=1000)
    parser.add_argument("--deals", default="2,3,5,10,20", help="numbers of deals, comma-separated")
    parser.add_argument("--luck", type=float, default=DEFAULT_LUCK, help="seat luck, nats")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    sizes = [int(text) for text in args.deals.split(",")]
    for number, form in enumerate(FORMATS):
        target = full_data_strengths(np.random.default_rng([args.seed, number]), form, args.luck)
        for deals in sizes:
            rng = np.random.default_rng([args.seed, number, deals])
            line = coverage(rng, form, deals, args.simulations, args.luck, target)
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
