"""`arena web`: serve the standings web app (FastAPI on uvicorn)."""

from __future__ import annotations

import argparse
import signal
from collections.abc import AsyncGenerator
from types import FrameType

import grpc

from arena_cli.env import add_database, add_settings
from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import arena_pb2_grpc as pb_grpc
from ladder.settings import from_values
from ladder.web.live import LiveNotFound, LiveUnavailable
from ladder.web.settings import WebSettings


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `web` on the `arena` parser."""
    parser = commands.add_parser(
        "web",
        help="serve the standings web pages and JSON API",
        description="Serve the standings, bot pages, tournaments and match replays over HTTP, "
        "with a JSON API (/api/..., described at /openapi.json) and Prometheus /metrics. "
        "SIGTERM or Ctrl-C stops it.",
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

    from ladder.store import Store
    from ladder.web import create_app, live

    store = Store(args.db)
    app = create_app(
        store,
        poll_seconds=settings.poll_seconds,
        api_rate=settings.api_rate,
        api_burst=settings.api_burst,
    )
    live.attach(app, RefereeFeed(settings.referee))
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


class RefereeFeed:
    """The referee's public streams (WatchPublic) for the web's live views.

    No token: the web relays only what the referee shows anyone. The channel is
    opened by the first watch, in the web's event loop, and shared by all.
    """

    def __init__(self, address: str) -> None:
        self.address = address
        self._stub: pb_grpc.RefereeServiceAsyncStub | None = None

    async def watch(self, match_id: str) -> AsyncGenerator[str, None]:
        """The JSON of each public event of the match (ladder.web.live.LiveFeed)."""
        if self._stub is None:
            self._stub = pb_grpc.RefereeServiceStub(grpc.aio.insecure_channel(self.address))
        call = self._stub.WatchPublic(pb.GetMatchRequest(match_id=match_id))
        try:
            async for event in call:
                yield event.json
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.NOT_FOUND:
                raise LiveNotFound(error.details() or f"no match {match_id}") from None
            raise LiveUnavailable(
                f"{self.address}: {error.code().name.lower()} ({error.details()})"
            ) from None
        finally:
            call.cancel()


def _stopped(signum: int, frame: FrameType | None) -> None:
    """Uvicorn has already shut down when it hands the signal on: nothing left to do."""
