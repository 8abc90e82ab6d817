"""`arena ladder`: the standings of one ladder or of all, each rating with its uncertainty.

The store is imported when the command runs, so `arena --help` stays quick.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from arena_cli.columns import table
from arena_cli.db_cmd import open_store
from arena_cli.env import add_database
from ladder.wording import plural

if TYPE_CHECKING:
    from ladder.queries import PracticeLine, Standing


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `ladder` on the `arena` parser."""
    parser = commands.add_parser(
        "ladder",
        help="standings of a ladder (or of all ladders): rating +- error, live Elo",
        description="The standings: one ladder per game and player count, e.g. goodge-4p. "
        "The rating is the ladder's Plackett-Luce fit of all its rated games on the Elo scale, "
        "refreshed after each result, +- its standard error; the standings rank by it. The "
        "live multiplayer Elo, moved by each result, is shown beside it. A rating is "
        "provisional while its error is too large to rank the bot with confidence (the "
        "threshold is printed below the table), or before the bot's first fit; a new bot's "
        "first ladder matches are unrated practice "
        "(ARENA_LADDER_PRACTICE_MATCHES). Retired bots are left out.",
    )
    parser.add_argument("ladder", nargs="?", help="a ladder id such as goodge-4p (default: all)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    add_database(parser)
    parser.set_defaults(run=run_ladder)


def run_ladder(args: argparse.Namespace) -> int:
    """Print standings."""
    from ladder import queries

    store = open_store(args)
    try:
        known = queries.ladders(store)
        if args.ladder is not None and args.ladder not in known:
            raise ValueError(
                f"no ladder {args.ladder!r}; ladders are: {', '.join(known) or 'none yet'}"
            )
        chosen = [args.ladder] if args.ladder else known
        tables = {lid: queries.standings(store, lid) for lid in chosen}
        practice = {lid: queries.in_practice(store, lid) for lid in chosen}
    finally:
        store.close()
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "ladder": lid,
                        "rank": line.rank,
                        "bot": line.bot,
                        "bot_id": line.bot_id,
                        "version": line.version,
                        "rating": round(line.rating, 2),
                        "se": None if line.se is None else round(line.se, 2),
                        "elo": round(line.elo, 2),
                        "games": line.games,
                        "provisional": line.provisional,
                        "online": line.online,
                    }
                    for lid, lines in tables.items()
                    for line in lines
                ]
                + [
                    {
                        "ladder": lid,
                        "bot": line.bot,
                        "bot_id": line.bot_id,
                        "practice_matches": line.played,
                        "online": line.online,
                    }
                    for lid, lines in practice.items()
                    for line in lines
                ]
            )
        )
        return 0
    print(standings_text(tables, practice))
    return 0


def standings_text(
    tables: Mapping[str, Sequence[Standing]],
    practice: Mapping[str, Sequence[PracticeLine]] | None = None,
) -> str:
    """Ladder standings as `arena ladder` prints them, with the bots still in practice."""
    from ladder.queries import PROVISIONAL_SE

    out = []
    for lid, lines in tables.items():
        out.append(f"{lid}:")
        if lines:
            rows = [
                (
                    f"{line.rank}.",
                    f"{line.bot}@{line.version}",
                    f"{line.rating:.0f}",
                    "" if line.se is None else f"\u00b1 {line.se:.0f}",
                    f"{line.elo:.1f}",
                    plural(line.games, "match", "matches"),
                    ", ".join(
                        word
                        for word, shown in (
                            ("provisional", line.provisional),
                            ("online", line.online),
                        )
                        if shown
                    ),
                )
                for line in lines
            ]
            out.append(
                table(
                    ("#", "bot", "rating", "\u00b1 error", "live Elo", "rated", ""),
                    rows,
                    right={0, 2, 3, 4},
                    indent="  ",
                )
            )
        else:
            out.append("  (no rated bots yet)")
        for line in (practice or {}).get(lid, ()):
            out.append(
                f"  in practice (unrated): {line.bot}, "
                f"{plural(line.played, 'match', 'matches')} so far"
            )
    if any(line.provisional for lines in tables.values() for line in lines):
        out.append(
            f"provisional: an error above \u00b1 {PROVISIONAL_SE:.0f} Elo, or not fitted yet"
        )
    return "\n".join(out) if out else "no ladders yet"
