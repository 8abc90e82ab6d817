"""`arena demo`: the whole arena on one machine, with one command.

A referee, a worker and the web start as processes on localhost; six
reference bots connect over gRPC, each its own process; a duplicate round
robin runs in goodge-4p, golden10-5p and goof-4p, with progress bars; then
the tables with 95% intervals, the ladder standings and the URLs are printed.
Embedded defaults need no server (SQLite, the filesystem broker); set
ARENA_DATABASE_URL and ARENA_BROKER_URL to run it on PostgreSQL and Redis.
With --serve everything keeps running, the continuous ladder on, until Ctrl-C,
and a person can play the bots in the browser (Play, /play).
Every process it started is stopped before it exits.

The data folder must be new, empty or an earlier demo's (which it marks):
the demo never deletes anything it did not make.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

MARKER = ".arena-demo"
"""The file by which a demo knows its own data folder again."""
OWN = ("arena.db", "arena.db-journal", "arena.db-wal", "arena.db-shm", ".arena", "logs")
"""What a demo leaves in its data folder (SQLite database, embedded broker, logs):
all that reusing the folder deletes."""


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `demo` on the `arena` parser."""
    parser = commands.add_parser(
        "demo",
        help="run the whole arena locally: referee, worker, web, six bots, three tournaments",
        description=__doc__.split("\n\n")[1] if __doc__ else None,
    )
    parser.add_argument(
        "--serve",
        action="store_true",
        help="keep everything running (continuous ladder on) until Ctrl-C",
    )
    parser.add_argument(
        "--data",
        default=".arena-demo",
        help="folder for the demo's database, broker and logs: new, empty, or an earlier demo's "
        "(whose database and logs are deleted first); default .arena-demo",
    )
    parser.add_argument(
        "--matches",
        type=int,
        default=15,
        help="at most this many matches per tournament (default 15: every combination of the six bots)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help="seed of the tournaments' plans and deals; default: secret seeds drawn at random",
    )
    parser.add_argument(
        "--deadline-ms", type=int, default=500, help="per-move deadline (default 500)"
    )
    parser.add_argument(
        "--timeout-s",
        type=float,
        default=900,
        help="give up if the tournaments have not finished by then (default 900)",
    )
    parser.set_defaults(run=run_demo)


def prepare_data(data: Path) -> None:
    """Make `data` ready for a demo, or refuse it (ValueError) having deleted nothing.

    A missing or empty folder is used; an earlier demo's (it holds MARKER) is
    emptied of the demo's own things (OWN), anything else in it is kept.
    """
    unused = not data.exists() or (data.is_dir() and not any(data.iterdir()))
    if not (unused or (data / MARKER).is_file()):
        raise ValueError(
            f"--data {data} is not empty and is not an earlier demo's folder "
            f"(no {MARKER} file): refusing to touch it; give a new or empty folder"
        )
    for name in OWN:
        path = data / name
        # A symbolic link is removed, never followed.
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
    (data / "logs").mkdir(parents=True)
    (data / MARKER).write_text(
        "Made by `arena demo`: a later demo here deletes the database, broker and logs.\n"
    )


def run_demo(args: argparse.Namespace) -> int:
    """Run the demo; 0 when every tournament finished."""
    if args.matches < 1:
        raise ValueError("--matches must be at least 1")
    data = Path(args.data).resolve()
    prepare_data(data)
    # Imported here: the demo's processes, Celery, the store and rich are loaded
    # only to run it, not for `arena --help`.
    from arena_cli.demo_run import run

    return run(args, data)
