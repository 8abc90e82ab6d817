"""`arena schedule list|cancel`: the scheduled tournaments (cron templates) beat runs.

A schedule is made by `arena tournament create --schedule CRON`; the store is
imported when a command runs, so `arena --help` stays quick.
"""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime

from arena_cli.columns import table
from arena_cli.db_cmd import open_store
from arena_cli.env import add_database
from arena_cli.tournament_cmd import cancel
from ladder.records import TournamentStatus
from ladder.wording import plural


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `schedule list` and `schedule cancel` on the `arena` parser."""
    parser = commands.add_parser(
        "schedule",
        help="list or cancel scheduled tournaments",
        description="Scheduled tournaments: templates made by `arena tournament create "
        "--schedule CRON`, from which beat starts a run at every tick (UTC).",
    )
    sub = parser.add_subparsers(dest="schedule_command", required=True, metavar="COMMAND")
    listing = sub.add_parser(
        "list", help="schedules with their next run", description="Active schedules, newest first."
    )
    listing.add_argument("--all", action="store_true", help="include cancelled schedules")
    listing.add_argument("--json", action="store_true", help="print JSON")
    add_database(listing)
    listing.set_defaults(run=run_list)
    stop = sub.add_parser(
        "cancel",
        help="stop a schedule: beat starts no more runs of it",
        description="Cancel a schedule. Runs already started go on (`arena tournament cancel "
        "RUN_ID` stops one).",
    )
    stop.add_argument("id", help="the schedule's id (from `arena schedule list`)")
    stop.add_argument("--json", action="store_true", help="print JSON")
    add_database(stop)
    stop.set_defaults(run=lambda args: cancel(args, template_only=True))


def run_list(args: argparse.Namespace) -> int:
    """Print the schedules."""
    from ladder import queries
    from ladder.schedules import next_run

    store = open_store(args)
    try:
        views = [view for view in queries.tournaments(store, limit=1000) if view.schedule]
    finally:
        store.close()
    if not args.all:
        views = [view for view in views if view.status == TournamentStatus.SCHEDULED]
    now = datetime.now(UTC)
    upcoming = {
        view.id: next_run(view.schedule or "", now)
        if view.status == TournamentStatus.SCHEDULED
        else None
        for view in views
    }
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "id": view.id,
                        "name": view.name,
                        "ladder": f"{view.game}-{view.players}p",
                        "schedule": view.schedule,
                        "format": view.format,
                        "rounds": view.rounds,
                        "status": view.status,
                        "entrants": view.entrants,
                        "next_run": (run := upcoming[view.id]) and run.isoformat(),
                    }
                    for view in views
                ]
            )
        )
        return 0
    if not views:
        print("no schedules (arena tournament create ... --schedule CRON makes one)")
        return 0
    cells = [
        (
            view.id,
            f"{view.game}-{view.players}p",
            view.schedule,
            f"Swiss, {plural(view.rounds, 'round', 'rounds')}"
            if view.format == "swiss"
            else "round robin",
            view.status,
            f"{run:%Y-%m-%d %H:%M} UTC" if (run := upcoming[view.id]) else "-",
            view.name,
        )
        for view in views
    ]
    print(table(("id", "ladder", "cron (UTC)", "format", "status", "next run", "name"), cells))
    return 0
