"""How strong are the reference bots? Duplicate games in this process, rated by Plackett-Luce.

    python -m bench.strength golden10 --bots random,rules,search,rules --deals 40
    python -m bench.strength goof --bots random,rules,racer,rules --deals 20

Each deal (seed) is played once per rotation of the seats, so every entrant
plays every position of the same cards (duplicate format). Every game's
ranking goes to `ladder.ratings.plackett_luce`; the table printed is each
entrant's rating with its 95% interval. An entrant named twice is rated as
two entrants ("rules", "rules#2"), which shows the noise between equals.
Prints one JSON line per game with --verbose and the table (also as JSON
with --json). `--budget` sets the search bot's time per move.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import bots
from bots.local import play_game
from bots.search import SearchBot
from ladder.ratings import plackett_luce


def _bot(name: str, seed: int, budget: float) -> bots.Bot:
    if name == "search":
        return SearchBot(seed, time_budget_s=budget)
    return bots.reference(name, seed)


def play_deal(job: tuple[str, list[str], int, float, dict[str, Any]]) -> list[list[int]]:
    """Every rotation of one deal; per game, the rank of each entrant (by entrant index)."""
    game, names, seed, budget, options = job
    players = len(names)
    out = []
    for shift in range(players):
        seats = [(seat + shift) % players for seat in range(players)]
        lineup = [
            _bot(names[entrant], seed * 100 + seat, budget) for seat, entrant in enumerate(seats)
        ]
        state = play_game(game, lineup, seed, options)
        ranks = [0] * players
        for seat, entrant in enumerate(seats):
            ranks[entrant] = state.result().ranks[seat]
        out.append(ranks)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("game")
    parser.add_argument("--bots", required=True, help="comma-separated entrants, one per seat")
    parser.add_argument("--deals", type=int, default=20)
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--budget", type=float, default=0.03, help="search seconds per move")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--option", action="append", default=[], help="key=value game option")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    names = args.bots.split(",")
    labels = []
    for name in names:
        label = name
        copy = 2
        while label in labels:
            label = f"{name}#{copy}"
            copy += 1
        labels.append(label)
    options = dict(pair.split("=", 1) for pair in args.option)
    jobs = [
        (args.game, names, seed, args.budget, options)
        for seed in range(args.first_seed, args.first_seed + args.deals)
    ]
    started = time.perf_counter()
    rankings: list[list[tuple[int, int]]] = []
    clusters: list[int] = []
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for number, deal in enumerate(pool.map(play_deal, jobs)):
            for ranks in deal:
                rankings.append(list(enumerate(ranks)))
                # The rotations of one deal are not independent games.
                clusters.append(number)
                if args.verbose:
                    print(json.dumps({"ranks": dict(zip(labels, ranks, strict=True))}))
    fit = plackett_luce(len(labels), rankings, clusters=clusters)
    table = sorted(
        (
            {
                "bot": label,
                "rating": round(item.rating),
                "ci_low": round(item.ci_low),
                "ci_high": round(item.ci_high),
                "games": item.games,
            }
            for label, item in zip(labels, fit.items, strict=True)
        ),
        key=lambda row: -int(row["rating"]),
    )
    seconds = time.perf_counter() - started
    if args.json:
        print(
            json.dumps(
                {
                    "game": args.game,
                    "games": len(rankings),
                    "seconds": round(seconds),
                    "table": table,
                }
            )
        )
    else:
        print(f"{args.game}, {len(names)} players: {len(rankings)} games in {seconds:.0f} s")
        print("| bot | rating | 95% interval | games |\n|---|---|---|---|")
        for row in table:
            print(
                f"| {row['bot']} | {row['rating']} | {row['ci_low']} .. {row['ci_high']} | {row['games']} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
