"""Watching a running match live: the referee's public stream, relayed as server-sent events.

`GET /api/matches/{match_id}/live` is `text/event-stream`: one `data:` line per
public event (the referee's JSON, docs/protocol.md "Watching a match"), the
last one the match's end. Only what every seat may see travels: the referee
projects it (WatchPublic); the web adds nothing and keeps nothing.

The web does not talk gRPC itself (the ladder imports neither the referee nor
the generated stubs): whoever builds the app gives it a `LiveFeed` with
`attach` (`arena web` gives one over gRPC). Without one, or when the referee
cannot be reached, the live view says so and the rest of the web is unchanged.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, Protocol

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import StreamingResponse

from ladder.web.schemas import ErrorOut
from ladder.web.views import WebError, checked_id


class LiveNotFound(LookupError):
    """The referee knows no match by that id."""


class LiveUnavailable(ConnectionError):
    """The referee cannot be reached, or refused the stream (its message says why)."""


class LiveFeed(Protocol):
    """Where the public events of matches come from."""

    def watch(self, match_id: str) -> AsyncGenerator[str, None]:
        """The JSON text of each public event of the match so far, then as they happen,
        ending after its end; LiveNotFound or LiveUnavailable instead."""
        ...


def attach(app: FastAPI, feed: LiveFeed | None) -> None:
    """Give `app` the feed its live views relay (None: no live view)."""
    app.state.live_feed = feed


def feed_of(app: FastAPI) -> LiveFeed | None:
    """The feed given to `app`, if any."""
    feed: LiveFeed | None = getattr(app.state, "live_feed", None)
    return feed


STREAM_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
"""No cache or proxy may hold the stream back (X-Accel-Buffering: nginx ingress)."""
LIVE_ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorOut, "description": "Not found"},
    503: {"model": ErrorOut, "description": "The referee cannot be reached"},
}

router = APIRouter()


def _sse(text: str) -> str:
    # The referee's JSON is on one line (json.dumps escapes every line break).
    return f"data: {text}\n\n"


@router.get(
    "/api/matches/{match_id}/live",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}, **LIVE_ERRORS},
    tags=["matches"],
)
async def live_events(request: Request, match_id: str) -> StreamingResponse:
    """A match's public events as server-sent events, one per update, until its end:
    game starts, the public table after each move (`view`), strikes, forfeits, game
    ends, then `match_end`. Never a hand, the Stash or the seed before the end."""
    checked_id("match", match_id)
    feed = feed_of(request.app)
    if feed is None:
        raise WebError(503, "this web app follows no referee: live views are off")
    events = feed.watch(match_id)
    # The first event is awaited here: an unknown match or an unreachable referee is
    # then an error status, not a stream that ends at once.
    try:
        first = await anext(events)
    except StopAsyncIteration:
        raise WebError(503, "the referee ended the stream at once") from None
    except LiveNotFound as error:
        raise WebError(404, str(error)) from None
    except LiveUnavailable as error:
        raise WebError(503, f"the referee cannot be reached: {error}") from None

    async def relay() -> AsyncIterator[str]:
        yield _sse(first)
        try:
            async for text in events:
                yield _sse(text)
        except (LiveNotFound, LiveUnavailable) as error:
            # Mid-stream the status is sent already: the page is told in an event.
            yield _sse(json.dumps({"type": "live_lost", "reason": str(error)}))
        finally:
            await events.aclose()  # the referee's stream ends with the page's

    return StreamingResponse(relay(), media_type="text/event-stream", headers=STREAM_HEADERS)
