"""How fast does a live ladder learn? A simulated ladder of bots of known strength.

Prints one JSON line per policy and budget, {"policy", "games_per_bot",
"kendall_tau", "kendall_tau_se", "top10_share", "mae_elo", "games_to_best", "fewest_games",
"runs"}; then one per tournament format (`bench.swiss_sim`), {"format", "bots",
"order_rounds", "kendall_tau", "top10_share", "games_per_bot_to_clear", "runs"}; then
a last line {"runtime_s"}.

The field: `--bots` bots whose true ratings are drawn normal around 1500,
`--spread` Elo apart (standard deviation), the best `NEAR_TIES` then set
`NEAR_TIE_GAP` Elo apart (near-ties at the top); their authors are drawn so
that some have several bots. Every tick (a minute), each bot is online with
chance `--online`; the policy seats the online bots at tables of `--seats`,
and each table plays one game (with `--duplicate`, one per rotation of the
seats of one deal): a Plackett-Luce draw around the true strengths plus the
luck of the deal (every seat's own advantage, normal, `--luck` nats), as
`bench.coverage` simulates them. Its default, 0.8, makes duplicate deals of
close bots cut the variance of their rating difference to 0.76 of
independent games' (`ladder.plackett_luce.duplicate_variance_ratios`), near
the 0.7 that real Golden 10 games of the reference bots show (docs/bots.md).
Every policy plays the same budget of games: at `games_per_bot` B,
B * bots / seats games in all.

Policies:

* "today": the ladder as it is: `ladder.matchmaking.fewest_games_tables` and
  the live Elo (`ladder.elo.elo_update`, standings by rating).
* "today_fit": today's games, rated by `ladder.ladder_fit.fit_ladder`: what
  the rating alone gains.
* "new": `ladder.matchmaking.information_tables`, fed the ratings and errors
  of `ladder.ladder_fit.fit_ladder` (refitted after each tick), which also
  gives the standings.
* "trueskill", "openskill": the `trueskill` package and OpenSkill's
  Plackett-Luce model rating the very games "new" plays, online, one game at
  a time. They start from the fit's first prior (1500, `FIELD_SD`) and have
  no drift (the bots' strengths are fixed); each one's performance noise is
  set so that its win chance between two certain ratings follows the Elo
  curve.
* "known_luck": not a policy a ladder can have, but its ceiling: "new"'s
  matchmaking fed by a fit that knows every deal's luck exactly (each game's
  seat advantages as offsets of the fit, `ladder.ladder_fit.fit_ladder`),
  on its own games. No way of taking the luck of the deal out (duplicate
  deals shared by many tables, the house's own bots playing each deal
  again) can do better than this; its "mae_elo" is against the true
  ratings, not flattened ones.

Measures, at each budget, of the standings (ratings) against the truth:

* "kendall_tau": Kendall's tau-b between the standings and the true ratings;
  "kendall_tau_se" its standard error over the fields (null for one field).
  It is the measure's real noise: the fit's ratings choose the next tables,
  so a difference in the last bits of a float (another numpy or CPU) plays
  other games from there on. One version of the code gave "new" at 10 games
  0.7826 on one machine and 0.7695 on another (16 fields, se about 0.005);
  over 64 fields, 0.777 and 0.778. Over 64 fields (`--runs 64`), one run: "today"
  0.744, 0.787 and 0.807 at 10, 16 and 20 games (se about 0.003), "new" 0.778, 0.829
  and 0.849, "known_luck" 0.807 at 10: "new" reaches today's order at 20 games
  after about 13 (interpolated).
* "top10_share": the share of the true top 10 in the standings' top 10.
* "mae_elo": the mean absolute error of the ratings, both centred on their
  mean. The truth here is the true ratings times `luck_scale`: the luck of
  the deal is noise that Plackett-Luce does not model, and it flattens the
  ratings that games can show (as `bench.coverage` notes), so even all the
  games in the world would rate the field closer together than it is.
* "games_to_best": games per bot (the field's, not the best bot's) when the
  true best bot became first (alone) and stayed first to the end of the
  budget; null when it is not first at the end. Checked every tick.
* "fewest_games": the games of the bot that played fewest, over the mean
  (fairness: 1 when all played alike).

With `--runs` R, each run is a new field, and the line holds the means over
the runs, except "games_to_best": the median (a run where it is null counting
as never, so null when it is in half the runs or more).

Tournaments (the issue's question for a large field): over `--swiss-runs`
fields of `--swiss-bots` bots (default `bench.swiss_sim.BOTS`, a multiple of
`--seats`) at `--seats`, the Swiss format and the balanced round robin: how
well the tournament table orders the field after `order_rounds`
(`bench.swiss_sim.ORDER_ROUNDS`) rounds ("kendall_tau", "top10_share", means
over the fields), and how many games per bot they play until the true best
bot's 95% interval in the table is clear of the true second's: the median
over the fields, a field not clear within `bench.swiss_sim.CAP_ROUNDS`
rounds counting as never (null when half of them or more are never).

    python -m bench.ladder_sim [--bots 128] [--seats 4] [--budgets 5,10,20,40]
        [--runs 16] [--seed 1] [--jobs CPUS] [--policies today,today_fit,new,trueskill,openskill,known_luck]
        [--swiss-runs 10] [--swiss-bots 64]
"""

from __future__ import annotations

import os

# The fits' dense algebra is on 128 x 128 matrices: one BLAS thread does it fastest, and
# more only fight over the cores (three times slower on a busy two-core machine). Set
# before numpy loads its BLAS, so only when this module is what imports numpy first.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import dataclasses
import functools
import json
import math
import multiprocessing
import random
import statistics
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from bench import swiss_sim
from bench.coverage import DEFAULT_LUCK, LuckyGame, lucky_deal
from bench.ladder_raters import EloRater, FitRater, OpenSkillRater, Rater, TrueSkillRater
from bench.order_measures import kendall_tau, top_share
from ladder import matchmaking
from ladder.elo import ELO_PER_NAT, ELO_START, Ranking
from ladder.plackett_luce import plackett_luce

FloatArray = npt.NDArray[np.float64]

POLICIES = ("today", "today_fit", "new", "trueskill", "openskill", "known_luck")
SPREAD = 300.0
"""The true ratings' standard deviation (Elo): a field from near-random bots to the best,
as the reference bots' tables in docs/bots.md span (random 500 to 1000 Elo below the
rule-based bots, which are within about 100 of the search bots)."""
NEAR_TIES = 3
"""How many of the best bots are near-tied."""
NEAR_TIE_GAP = 25.0
"""Elo between one near-tied bot and the next."""
TICK_S = 60.0
"""Seconds between two ticks of the ladder."""
RECENT_TICKS = 30
"""Ticks whose tables `information_tables` avoids repeating."""
SCALE_GAMES_PER_BOT = 200
"""Games per bot of the many random games `luck_scale` fits."""
TOP = 10


@dataclass(frozen=True)
class Field:
    """The bots: true ratings (Elo, mean about 1500) and authors, by bot number."""

    elo: FloatArray
    authors: tuple[str, ...]

    @property
    def theta(self) -> FloatArray:
        """The true log-strengths (nats), as the simulated games use them."""
        return (self.elo - ELO_START) / ELO_PER_NAT


def draw_field(rng: np.random.Generator, bots: int, spread: float) -> Field:
    """`bots` true ratings N(1500, spread^2), the best `NEAR_TIES` near-tied, in random order."""
    elo = np.sort(rng.normal(ELO_START, spread, size=bots))[::-1].copy()
    ties = min(NEAR_TIES, bots)
    elo[:ties] = elo[0] - NEAR_TIE_GAP * np.arange(ties)
    rng.shuffle(elo)
    # About three authors for every four bots: most have one bot, some several.
    authors = tuple(f"author{int(a)}" for a in rng.integers(0, max(1, 3 * bots // 4), bots))
    return Field(elo, authors)


def play_table(
    rng: np.random.Generator, field: Field, table: Sequence[int], luck: float, duplicate: bool
) -> list[LuckyGame]:
    """The games of one table: one deal, in every rotation of its seats if `duplicate`."""
    games = lucky_deal(rng, field.theta, table, luck)
    return games if duplicate else games[:1]


def random_games(
    rng: np.random.Generator, field: Field, seats: int, luck: float, duplicate: bool, count: int
) -> list[Ranking]:
    """`count` games or more at random tables."""
    games: list[Ranking] = []
    while len(games) < count:
        table = [int(bot) for bot in rng.choice(len(field.elo), size=seats, replace=False)]
        games += [game for game, _ in play_table(rng, field, table, luck, duplicate)]
    return games


def luck_scale(
    rng: np.random.Generator, field: Field, seats: int, luck: float, duplicate: bool
) -> float:
    """How much the luck of the deal flattens the ratings games show: the slope of the
    ratings fitted from very many random games (`SCALE_GAMES_PER_BOT` each) on the truth."""
    count = SCALE_GAMES_PER_BOT * len(field.elo) // seats
    games = random_games(rng, field, seats, luck, duplicate, count)
    fitted = np.array(plackett_luce(len(field.elo), games, prior_sd=None).ratings)
    truth = field.elo - field.elo.mean()
    return float(truth @ (fitted - fitted.mean()) / (truth @ truth))


@dataclass
class Ladder:
    """What the pairing may know besides the ratings: games, last play, recent tables."""

    games: list[int]
    last_played: list[float | None]
    recent: deque[list[frozenset[str]]] = dataclasses.field(
        default_factory=lambda: deque(maxlen=RECENT_TICKS)
    )


Pairing = Callable[[list[int], float, Ladder], list[tuple[int, ...]]]


def today_pairing(seats: int, rng: random.Random) -> Pairing:
    """The ladder's first rule: fewest games first (`fewest_games_tables`)."""

    def pair(free: list[int], now: float, ladder: Ladder) -> list[tuple[int, ...]]:
        played = {str(bot): ladder.games[bot] for bot in free}
        tables = matchmaking.fewest_games_tables(
            sorted(str(bot) for bot in free), played, seats, rng
        )
        return [tuple(int(bot) for bot in table) for table in tables]

    return pair


def new_pairing(seats: int, rng: random.Random, rater: FitRater, field: Field) -> Pairing:
    """`information_tables` fed the fit's ratings and errors."""

    def pair(free: list[int], now: float, ladder: Ladder) -> list[tuple[int, ...]]:
        fit = rater.fit()
        candidates = [
            matchmaking.Candidate(
                str(bot),
                fit.bots[bot].rating,
                fit.bots[bot].se,
                ladder.last_played[bot],
                field.authors[bot],
            )
            for bot in free
        ]
        recent = {table for tick in ladder.recent for table in tick}
        tables = matchmaking.information_tables(candidates, seats, recent, now, rng)
        return [tuple(int(bot) for bot in table) for table in tables]

    return pair


@dataclass(frozen=True)
class Checkpoint:
    """The measures of one rater's standings at one budget."""

    kendall_tau: float
    top10_share: float
    mae_elo: float
    games_to_best: float | None
    fewest_games: float


def measure(
    standings: FloatArray, field: Field, scale: float, best_since: float | None, games: list[int]
) -> Checkpoint:
    """A rater's standings against the truth (see the module's docstring)."""
    truth = scale * (field.elo - field.elo.mean())
    mae = float(np.mean(np.abs(standings - standings.mean() - truth)))
    fewest = min(games) / statistics.mean(games)
    return Checkpoint(
        kendall_tau(standings, field.elo),
        top_share(standings, field.elo, TOP),
        mae,
        best_since,
        fewest,
    )


def leads(standings: FloatArray, best: int) -> bool:
    """Whether bot `best` is first in the standings, alone."""
    others = np.delete(standings, best)
    return bool(standings[best] > others.max())


@dataclass(frozen=True)
class Settings:
    """The simulation's parameters (the command's options)."""

    bots: int
    seats: int
    budgets: tuple[int, ...]
    spread: float
    online: float
    luck: float
    duplicate: bool


def play_ladder(
    settings: Settings,
    field: Field,
    scale: float,
    pairing: Pairing,
    raters: dict[str, Rater],
    seeds: tuple[int, int],
) -> dict[str, list[Checkpoint]]:
    """Play the ladder to the largest budget; per rater, its checkpoint at each budget.

    Every rater rates every game; `pairing` chooses the tables (from what
    its own rater, bound into it, says).
    """
    online_rng = np.random.default_rng([seeds[0], seeds[1], 1])
    game_rng = np.random.default_rng([seeds[0], seeds[1], 2])
    bots = settings.bots
    targets = deque(sorted(settings.budgets))
    best = int(np.argmax(field.elo))
    ladder = Ladder([0] * bots, [None] * bots)
    since: dict[str, float | None] = dict.fromkeys(raters)
    checkpoints: dict[str, list[Checkpoint]] = {name: [] for name in raters}
    played = 0

    def per_bot() -> float:
        return played * settings.seats / bots

    def follow_leader() -> None:
        for name, rater in raters.items():
            if not leads(rater.standings(), best):
                since[name] = None
            elif since[name] is None:
                since[name] = per_bot()

    tick = 0
    while targets:
        now = tick * TICK_S
        follow_leader()
        free = [bot for bot in range(bots) if online_rng.random() < settings.online]
        tables = pairing(free, now, ladder)
        for table in tables:
            for game, luck in play_table(game_rng, field, table, settings.luck, settings.duplicate):
                for rater in raters.values():
                    rater.rate(game, luck)
                played += 1
            for bot in table:
                ladder.games[bot] += 1
                ladder.last_played[bot] = now
            if targets and per_bot() >= targets[0]:
                targets.popleft()
                follow_leader()
                for name, rater in raters.items():
                    checkpoints[name].append(
                        measure(rater.standings(), field, scale, since[name], ladder.games)
                    )
        ladder.recent.append([frozenset(str(bot) for bot in table) for table in tables])
        tick += 1
    return checkpoints


def run(
    settings: Settings, policies: Sequence[str], seed: int, number: int
) -> dict[str, list[Checkpoint]]:
    """One field, played by the pairings the `policies` need; per policy, its checkpoints."""
    field_rng = np.random.default_rng([seed, number, 0])
    field = draw_field(field_rng, settings.bots, settings.spread)
    scale = luck_scale(field_rng, field, settings.seats, settings.luck, settings.duplicate)
    results: dict[str, list[Checkpoint]] = {}
    today: dict[str, Rater] = {}
    if "today" in policies:
        today["today"] = EloRater(settings.bots)
    if "today_fit" in policies:
        today["today_fit"] = FitRater(settings.bots)
    if today:
        pairing = today_pairing(settings.seats, random.Random(f"today:{seed}:{number}"))
        results |= play_ladder(settings, field, scale, pairing, today, (seed, number))
    if {"new", "trueskill", "openskill"} & set(policies):
        fit = FitRater(settings.bots)
        new: dict[str, Rater] = {"new": fit}
        if "trueskill" in policies:
            new["trueskill"] = TrueSkillRater(settings.bots)
        if "openskill" in policies:
            new["openskill"] = OpenSkillRater(settings.bots, settings.seats)
        pairing = new_pairing(settings.seats, random.Random(f"new:{seed}:{number}"), fit, field)
        results |= play_ladder(settings, field, scale, pairing, new, (seed, number))
    if "known_luck" in policies:
        known = FitRater(settings.bots, knows_luck=True)
        pairing = new_pairing(settings.seats, random.Random(f"new:{seed}:{number}"), known, field)
        # Knowing the luck, the fit is not flattened by it: its truth is the true ratings.
        results |= play_ladder(settings, field, 1.0, pairing, {"known_luck": known}, (seed, number))
    return results


def median_or_none(values: Sequence[float | None]) -> float | None:
    """The median, a None counting as never (larger than any number); None if it is never."""
    ordered = sorted(values, key=lambda value: math.inf if value is None else value)
    middle = ordered[(len(ordered) - 1) // 2 : len(ordered) // 2 + 1]
    if any(value is None for value in middle):
        return None
    return statistics.mean(value for value in middle if value is not None)


def standard_error(values: Sequence[float]) -> float | None:
    """The standard error of the mean of `values`, over the fields (None for one field)."""
    if len(values) < 2:
        return None
    return round(statistics.stdev(values) / math.sqrt(len(values)), 4)


def lines(
    settings: Settings, policies: Sequence[str], runs: list[dict[str, list[Checkpoint]]]
) -> list[dict[str, object]]:
    """The JSON lines: per policy and budget, the measures over the runs."""
    out: list[dict[str, object]] = []
    for policy in policies:
        for number, budget in enumerate(sorted(settings.budgets)):
            points = [result[policy][number] for result in runs]
            since = median_or_none([point.games_to_best for point in points])
            out.append(
                {
                    "policy": policy,
                    "games_per_bot": budget,
                    "kendall_tau": round(statistics.mean(p.kendall_tau for p in points), 4),
                    "kendall_tau_se": standard_error([p.kendall_tau for p in points]),
                    "top10_share": round(statistics.mean(p.top10_share for p in points), 3),
                    "mae_elo": round(statistics.mean(p.mae_elo for p in points), 1),
                    "games_to_best": None if since is None else round(since, 1),
                    "fewest_games": round(statistics.mean(p.fewest_games for p in points), 3),
                    "runs": len(points),
                }
            )
    return out


def tournament_lines(
    settings: Settings, runs: int, seed: int, pool: Executor, bots: int = swiss_sim.BOTS
) -> list[dict[str, object]]:
    """The JSON lines of the tournament formats: the order after a few rounds, and games
    per bot until the best is clear."""
    out: list[dict[str, object]] = []
    for form in swiss_sim.FORMATS:
        play = functools.partial(
            swiss_sim.play_tournament, form, bots, settings.seats, settings.spread, settings.luck
        )
        played = list(pool.map(play, [(seed, n) for n in range(runs)]))
        median = median_or_none([run.games_to_clear for run in played])
        out.append(
            {
                "format": form,
                "bots": bots,
                "order_rounds": swiss_sim.ORDER_ROUNDS,
                "kendall_tau": round(statistics.mean(run.kendall_tau for run in played), 4),
                "top10_share": round(statistics.mean(run.top10_share for run in played), 3),
                "games_per_bot_to_clear": None if median is None else round(median, 1),
                "runs": runs,
            }
        )
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.ladder_sim",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--bots", type=int, default=128, help="bots in the field (default 128)")
    parser.add_argument("--seats", type=int, default=4, help="seats per table (default 4)")
    parser.add_argument(
        "--budgets",
        default="5,10,20,40",
        help="games per bot, comma-separated (default 5,10,20,40)",
    )
    parser.add_argument("--runs", type=int, default=16, help="fields simulated (default 16)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="fields simulated at once, one process each (default: one per CPU)",
    )
    parser.add_argument(
        "--policies", default=",".join(POLICIES), help=f"comma-separated, of {', '.join(POLICIES)}"
    )
    parser.add_argument(
        "--swiss-runs",
        type=int,
        default=10,
        help="fields of the tournament formats' lines (default 10, 0 for none)",
    )
    parser.add_argument(
        "--swiss-bots",
        type=int,
        default=swiss_sim.BOTS,
        help="bots in each of those fields, a multiple of --seats (default %(default)s)",
    )
    parser.add_argument(
        "--spread",
        type=float,
        default=SPREAD,
        help="true ratings' standard deviation, Elo (default %(default)s)",
    )
    parser.add_argument(
        "--online", type=float, default=0.75, help="chance a bot is free at a tick (default 0.75)"
    )
    parser.add_argument(
        "--luck", type=float, default=DEFAULT_LUCK, help="the deal's luck per seat, nats"
    )
    parser.add_argument(
        "--duplicate", action="store_true", help="play each deal in every rotation of its seats"
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    policies = [name for name in args.policies.split(",") if name]
    unknown = set(policies) - set(POLICIES)
    if unknown:
        parser.error(f"unknown policies: {', '.join(sorted(unknown))}")
    settings = Settings(
        args.bots,
        args.seats,
        tuple(int(text) for text in args.budgets.split(",")),
        args.spread,
        args.online,
        args.luck,
        args.duplicate,
    )
    if settings.bots < settings.seats or min(settings.budgets) < 1:
        parser.error("need at least a table's worth of bots, and budgets of a game or more")
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    if args.swiss_bots < settings.seats or args.swiss_bots % settings.seats:
        parser.error("--swiss-bots must be a multiple of --seats")
    # Each field is its own seeded run: in processes of their own, the lines are the same.
    # Spawned, not forked: a child forked from a process with threads (a test worker, after
    # gRPC and asyncio tests) inherits objects whose finalizers join threads the child does
    # not have; one such child hung in Thread.join, called from the fit, in a CI run.
    with ProcessPoolExecutor(args.jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        results = list(
            pool.map(functools.partial(run, settings, policies, args.seed), range(args.runs))
        )
        for line in lines(settings, policies, results):
            print(json.dumps(line), flush=True)
        if args.swiss_runs > 0:
            for line in tournament_lines(
                settings, args.swiss_runs, args.seed, pool, args.swiss_bots
            ):
                print(json.dumps(line), flush=True)
    print(json.dumps({"runtime_s": round(time.perf_counter() - started, 1)}), flush=True)


if __name__ == "__main__":
    main()
