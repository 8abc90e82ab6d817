"""`arena beat`: Celery beat, which starts scheduled tournaments and ticks the continuous ladder.

Celery and the store are imported when the command runs, so `arena --help`
stays quick.
"""

from __future__ import annotations

import argparse

from arena_cli.broker import add_broker, worker_settings
from arena_cli.env import add_admin_token, add_database, add_referee, add_settings
from workers.settings import WorkerSettings


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `beat` on the `arena` parser."""
    parser = commands.add_parser(
        "beat",
        help="run Celery beat: scheduled tournaments and the continuous ladder",
        description="Run Celery beat (exactly one per arena). Every minute it starts the runs of "
        "scheduled tournaments that are due; every --ladder-interval-s seconds it pairs the "
        "connected bots that are free into ladder matches. Workers do the work.",
    )
    add_database(parser)
    add_broker(parser)
    add_referee(parser)
    add_admin_token(parser)
    add_settings(parser, WorkerSettings, "ladder_interval_s")
    parser.add_argument(
        "--schedule-file",
        metavar="PATH",
        help="beat's state file (default .arena/beat-schedule beside the database)",
    )
    parser.add_argument("--loglevel", default="INFO", help="log level (default INFO)")
    parser.set_defaults(run=run_beat)


def run_beat(args: argparse.Namespace) -> int:
    """Run beat until it is stopped."""
    from workers import make_app

    if args.ladder_interval_s < 0:
        raise ValueError("--ladder-interval-s must be 0 (off) or positive")
    settings = worker_settings(args, ladder_interval_s=args.ladder_interval_s, metrics_port=0)
    schedule = args.schedule_file
    if schedule is None:
        settings.folder.mkdir(parents=True, exist_ok=True)
        schedule = str(settings.folder / "beat-schedule")
    app = make_app(settings=settings)
    try:
        app.start(["beat", f"--loglevel={args.loglevel}", f"--schedule={schedule}"])
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else 0
    return 0  # pragma: no cover - start always exits
