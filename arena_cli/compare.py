"""`arena compare`: how strong are bots? Duplicate games in this process, one table.

Every deal (seed) is played once per rotation of the seats, so each entrant
plays every position of the same cards, and all the games are rated together
by Plackett-Luce (`ladder.plackett_luce.plackett_luce`, the tournament table's
method), the rotations of one deal counted as one cluster. An entrant named
twice is rated as two ("rules", "rules#2"): their gap shows the noise
between equals. An entrant the games cannot measure (last in every game,
say) is shown as such, with a bound where the games give one ("below 1066").
No server, no database; deals run in parallel processes.

The table goes to stdout, the time it took to stderr: with
`--search-playouts` (or no search bot) the same command prints the same
bytes. `--json` also gives, per pair, how much duplicate play cut the
variance of their difference (`ladder.plackett_luce.duplicate_variance_ratios`).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import signal
import sys
import time
from typing import TYPE_CHECKING, Any

import bots
import games
from arena_cli.env import add_env_option, add_rules_option
from arena_cli.progress import progress, wanted
from bots.local import play_rotations
from ladder.wording import plural, rating_cells

if TYPE_CHECKING:
    from ladder.elo import Ranking


def labels_for(names: list[str]) -> list[str]:
    """Table labels: a name given twice becomes "name", "name#2"."""
    labels: list[str] = []
    for name in names:
        label, copy = name, 2
        while label in labels:
            label, copy = f"{name}#{copy}", copy + 1
        labels.append(label)
    return labels


def _positive_seconds(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text!r}")
    return value


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text!r}")
    return value


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `compare` on the `arena` parser."""
    parser = commands.add_parser(
        "compare",
        help="rate bots against each other: duplicate games in this process (no server)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example: arena compare golden10 --bots random,rules,search,rules --deals 10 "
        "--search-playouts 30 (under a minute, the same table every time; Ctrl-C rates the "
        "deals that finished)",
    )
    parser.add_argument("game", choices=games.names(), help="the game to play")
    parser.add_argument(
        "--bots",
        required=True,
        metavar="A,B,...",
        help="one bot per seat: random, rules, search, racer or module:Class (repeats allowed)",
    )
    parser.add_argument(
        "--deals", type=_positive_int, default=20, help="deals to play (default 20)"
    )
    parser.add_argument(
        "--first-seed", type=int, default=1, help="seed of the first deal (default 1)"
    )
    parser.add_argument(
        "--jobs",
        type=_positive_int,
        default=os.cpu_count() or 1,
        help="deals played at once, one process each (default: one per CPU)",
    )
    add_env_option(
        parser,
        "--search-budget",
        "SEARCH_BUDGET_S",
        0.2,
        "the search bot's thinking time per move, seconds",
        type=_positive_seconds,
        metavar="S",
    )
    parser.add_argument(
        "--search-playouts",
        type=_positive_int,
        metavar="N",
        help="the search bot makes N draws per decision instead of watching the clock: "
        "the same command then gives the same table (--search-budget is then unused)",
    )
    add_rules_option(parser)
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object instead of a table"
    )
    parser.add_argument(
        "--verbose", action="store_true", help="also print each game's ranks as a JSON line"
    )
    parser.set_defaults(run=run_compare)


def _ignore_sigint() -> None:
    # Ctrl-C is the parent's to handle: it stops the pool (terminating the deals being
    # played) and rates what finished.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _deal(
    job: tuple[str, list[str], int, dict[str, object], float, int | None],
) -> tuple[int, list[list[int]]]:
    game, names, seed, options, budget, playouts = job
    return seed, play_rotations(
        game, names, seed, options, search_budget_s=budget, search_playouts=playouts
    )


def run_compare(args: argparse.Namespace) -> int:
    """Play the deals, print the table (of the deals that finished, after Ctrl-C)."""
    # scipy: loaded only to rate.
    from ladder.plackett_luce import (
        duplicate_variance_ratios,
        plackett_luce,
        table_line,
        table_order,
    )

    spec = games.get(args.game)
    names = [name.strip() for name in args.bots.split(",") if name.strip()]
    spec.check_players(len(names))
    for name in names:
        bots.load(name)  # an unknown bot is a usage error before any game
    options = spec.resolve_options(games.parse_option_pairs(args.option), len(names))
    labels = labels_for(names)
    jobs = [
        (args.game, names, seed, options, args.search_budget, args.search_playouts)
        for seed in range(args.first_seed, args.first_seed + args.deals)
    ]
    started = time.perf_counter()
    deals: dict[int, list[list[int]]] = {}
    interrupted = False
    pool = multiprocessing.Pool(min(args.jobs, args.deals), initializer=_ignore_sigint)
    try:
        with progress(f"{args.game} deals", args.deals, wanted(args.json)) as advance:
            for seed, deal in pool.imap_unordered(_deal, jobs):
                deals[seed] = deal
                for ranks in deal if args.verbose else ():
                    row = {"deal": seed - args.first_seed + 1, "seed": seed}
                    row["ranks"] = dict(zip(labels, ranks, strict=True))
                    print(json.dumps(row), flush=True)
                advance()
        pool.close()
    except KeyboardInterrupt:
        interrupted = True
        pool.terminate()
    pool.join()
    # In the order of the seeds, whatever order the deals finished in: the same table.
    rankings: list[Ranking] = []
    clusters: list[int] = []
    for seed in sorted(deals):
        rankings += [list(enumerate(ranks)) for ranks in deals[seed]]
        clusters += [seed] * len(deals[seed])
    played = len(deals)
    if interrupted:
        print(
            f"interrupted after {played} of {plural(args.deals, 'deal', 'deals')}", file=sys.stderr
        )
        if not played:
            return 130
    fit = plackett_luce(len(labels), rankings, clusters=clusters)
    ordered = sorted(zip(labels, fit.items, strict=True), key=lambda pair: table_order(pair[1]))
    ratios = duplicate_variance_ratios(len(labels), rankings, clusters)
    report: dict[str, Any] = {
        "game": args.game,
        "players": len(names),
        "deals": played,
        "first_seed": args.first_seed,
        "games": len(rankings),
        "search_budget_s": None if args.search_playouts else args.search_budget,
        "search_playouts": args.search_playouts,
        "interrupted": interrupted,
        "table": [{"bot": label, **table_line(item, None)} for label, item in ordered],
        "pairs": [
            {"a": labels[a], "b": labels[b], "duplicate_variance_ratio": round(ratio, 3)}
            for (a, b), ratio in sorted(ratios.items())
        ],
    }
    print(
        f"{plural(len(rankings), 'game', 'games')} in {time.perf_counter() - started:.0f} s",
        file=sys.stderr,
        flush=True,
    )
    print(json.dumps(report) if args.json else compare_text(report))
    return 130 if interrupted else 0


def compare_text(report: dict[str, Any]) -> str:
    """The table as Markdown, with what was played."""
    search = ""
    if any(row["bot"].partition("#")[0] == "search" for row in report["table"]):
        search = (
            f" (search: {report['search_playouts']} playouts per decision)"
            if report.get("search_playouts")
            else f" (search budget {report['search_budget_s']:g} s per move)"
        )
    stopped = " (interrupted: the deals that finished)" if report.get("interrupted") else ""
    lines = [
        f"{report['game']}, {report['players']} players: "
        f"{plural(report['deals'], 'deal', 'deals')} from seed "
        f"{report['first_seed']}, {plural(report['games'], 'game', 'games')}{search}{stopped}",
        "",
        "| bot | rating | 95% interval | games |",
        "| --- | --- | --- | --- |",
    ]
    for row in report["table"]:
        rating, interval = rating_cells(
            row["rating"], row["ci_low"], row["ci_high"], row["bound"], row["reason"]
        )
        lines.append(f"| {row['bot']} | {rating} | {interval} | {row['games']} |")
    return "\n".join(lines)
