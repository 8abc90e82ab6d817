"""`arena web`: serve the standings web app (FastAPI on uvicorn)."""

from __future__ import annotations

import argparse
import signal
from types import FrameType

from arena_cli.env import add_database, add_settings
from ladder.settings import from_values
from ladder.web.settings import WebSettings


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `web` on the `arena` parser."""
    parser = commands.add_parser(
        "web",
        help="serve the standings web pages and JSON API",
        description="Serve the standings, bot pages, tournaments and match replays over HTTP, "
        "with a JSON API (/api/..., described at /openapi.json) and Prometheus /metrics, the "
        "live view of running matches and Play (/play: a person plays a seat against the bots "
        "on the referee; the tokens it needs are variables only, ARENA_WEB_PLAY_TOKEN and "
        "ARENA_WEB_PLAY_BOT_TOKEN). SIGTERM or Ctrl-C stops it.",
    )
    add_settings(parser, WebSettings)
    add_database(parser)
    parser.set_defaults(run=run_web)


def run_web(args: argparse.Namespace) -> int:
    """Serve until SIGTERM or SIGINT."""
    settings = from_values(WebSettings, vars(args))
    settings.check()
    # Imported here so that other subcommands do not load the web stack.
    import uvicorn

    from arena_cli.live_feed import RefereeFeed
    from arena_cli.play_host import RefereeSeatHost
    from ladder.store import Store
    from ladder.web import create_app, live, play

    store = Store(args.db)
    app = create_app(
        store,
        poll_seconds=settings.poll_seconds,
        api_rate=settings.api_rate,
        api_burst=settings.api_burst,
    )
    live.attach(app, RefereeFeed(settings.referee))
    host = None
    if settings.play:
        host = RefereeSeatHost(
            settings.referee,
            settings.play_bot,
            settings.play_at_once,
            store.retire_bot,
            token=settings.play_token,
            bot_token=settings.play_bot_token,
        )
    bounds = play.Bounds(
        settings.play_at_once,
        settings.play_per_address,
        settings.play_deadline_ms,
        settings.play_tick_ms,
    )
    play.attach(app, host, store, bounds, settings.play_bot)
    # Uvicorn stops cleanly on SIGTERM/SIGINT, then raises the signal again with
    # the handler it found; with this one in place a clean stop exits with status 0.
    previous = {signum: signal.signal(signum, _stopped) for signum in STOP_SIGNALS}
    try:
        uvicorn.run(
            app,
            host=settings.host,
            port=settings.port,
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
