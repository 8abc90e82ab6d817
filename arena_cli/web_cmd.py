"""`arena web`: serve the standings web app (FastAPI on uvicorn)."""

from __future__ import annotations

import argparse
import signal
from types import FrameType

from arena_cli.env import add_database, add_env_option, env

DEFAULT_PORT = 8000
DEFAULT_HOST = "127.0.0.1"
# ladder.web.security's defaults, repeated so that `arena --help` need not load
# the web stack (tests/cli/test_web_cmd.py checks they agree).
DEFAULT_API_RATE = 20.0
DEFAULT_API_BURST = 60


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `web` on the `arena` parser."""
    parser = commands.add_parser(
        "web",
        help="serve the standings web pages and JSON API",
        description="Serve the standings, bot pages, tournaments and match replays over HTTP, "
        "with a JSON API (/api/..., described at /openapi.json) and Prometheus /metrics. "
        "SIGTERM or Ctrl-C stops it.",
    )
    add_env_option(parser, "--port", "WEB_PORT", DEFAULT_PORT, "TCP port", int)
    parser.add_argument(
        "--host",
        default=env("WEB_HOST", DEFAULT_HOST),
        help=f"address to listen on (env ARENA_WEB_HOST; default {DEFAULT_HOST}; "
        "0.0.0.0 for every interface)",
    )
    add_database(parser)
    add_env_option(
        parser,
        "--poll-seconds",
        "WEB_POLL_S",
        5,
        "how often open pages fetch fresh results",
        float,
        metavar="S",
    )
    add_env_option(
        parser,
        "--api-rate",
        "WEB_API_RATE",
        DEFAULT_API_RATE,
        "JSON API requests a second each client address may make on average; beyond it 429",
        float,
        metavar="N",
    )
    add_env_option(
        parser,
        "--api-burst",
        "WEB_API_BURST",
        DEFAULT_API_BURST,
        "JSON API requests a client address may make at once",
        int,
        metavar="N",
    )
    parser.set_defaults(run=run_web)


def run_web(args: argparse.Namespace) -> int:
    """Serve until SIGTERM or SIGINT."""
    if not 0 < args.port < 65536:
        raise ValueError(f"--port must be 1..65535, got {args.port}")
    if not 0.2 <= args.poll_seconds <= 3600:
        raise ValueError(f"--poll-seconds must be 0.2..3600, got {args.poll_seconds:g}")
    if args.api_rate <= 0 or args.api_burst < 1:
        raise ValueError(
            f"--api-rate must be positive and --api-burst at least 1, got {args.api_rate:g} "
            f"and {args.api_burst}"
        )
    # Imported here so that other subcommands do not load the web stack.
    import uvicorn

    from ladder.store import Store
    from ladder.web import create_app

    store = Store(args.db)
    # Uvicorn stops cleanly on SIGTERM/SIGINT, then raises the signal again with
    # the handler it found; with this one in place a clean stop exits with status 0.
    previous = {signum: signal.signal(signum, _stopped) for signum in STOP_SIGNALS}
    try:
        uvicorn.run(
            create_app(
                store,
                poll_seconds=args.poll_seconds,
                api_rate=args.api_rate,
                api_burst=args.api_burst,
            ),
            host=args.host,
            port=args.port,
            log_level="info",
            access_log=False,
            proxy_headers=False,
        )
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        store.close()
    return 0


STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def _stopped(signum: int, frame: FrameType | None) -> None:
    """Uvicorn has already shut down when it hands the signal on: nothing left to do."""
