"""`arena worker`: a Celery worker that plays tournaments' matches and records them.

Celery and the store are imported when the command runs, so `arena --help`
stays quick.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile

from arena_cli.broker import add_broker, worker_settings
from arena_cli.env import (
    add_admin_token,
    add_database,
    add_env_option,
    add_referee,
    add_settings,
    env,
)
from workers.settings import WorkerSettings

POOLS = ("threads", "prefork", "solo")


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `worker` on the `arena` parser."""
    parser = commands.add_parser(
        "worker",
        help="run a Celery worker: plays tournaments' matches on the referee and records them",
        description="Run a Celery worker. It takes tasks from the broker (create a round robin, "
        "play a match, finish a tournament, beat's ticks), asks the referee to play, and records "
        "every result exactly once in the database, which it must share with the referee. "
        "SIGTERM stops it after the running tasks (unfinished ones are redelivered).",
    )
    add_env_option(
        parser,
        "--concurrency",
        "WORKER_CONCURRENCY",
        8,
        "tasks at once (a match task mostly waits)",
        int,
        metavar="N",
    )
    parser.add_argument(
        "--pool",
        choices=POOLS,
        default=env("WORKER_POOL", "threads"),
        help="threads (default), prefork (processes) or solo (one task at a time); "
        "env ARENA_WORKER_POOL",
    )
    add_database(parser)
    add_broker(parser)
    add_referee(parser)
    add_admin_token(parser)
    add_settings(parser, WorkerSettings, "metrics_port", "metrics_host")
    parser.add_argument("--loglevel", default="INFO", help="log level (default INFO)")
    parser.set_defaults(run=run_worker)


def run_worker(args: argparse.Namespace) -> int:
    """Run a worker until it is stopped."""
    from workers import make_app
    from workers.celery_app import QUEUE
    from workers.metrics import MULTIPROC_ENV

    if args.concurrency < 1:
        raise ValueError("--concurrency must be at least 1")
    created_dir = None
    if args.pool == "prefork" and args.metrics_port and not os.environ.get(MULTIPROC_ENV):
        # Prefork children count in files that the main process sums for /metrics.
        created_dir = tempfile.mkdtemp(prefix="arena-worker-metrics-")
        os.environ[MULTIPROC_ENV] = created_dir
    app = make_app(settings=worker_settings(args, metrics_port=args.metrics_port))
    if args.metrics_port:
        # Before the worker starts: a port already taken stops it with one line.
        app.metrics.serve(args.metrics_host, args.metrics_port)
    argv = [
        "worker",
        f"--pool={args.pool}",
        f"--concurrency={args.concurrency}",
        f"--loglevel={args.loglevel}",
        f"--queues={QUEUE}",
        f"--hostname=arena-{os.getpid()}@%h",
        "--without-mingle",
        "--without-gossip",
    ]
    try:
        app.worker_main(argv)
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else 0
    finally:
        if created_dir is not None:
            shutil.rmtree(created_dir, ignore_errors=True)
    return 0  # pragma: no cover - worker_main always exits
