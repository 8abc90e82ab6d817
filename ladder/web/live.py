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

import asyncio
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
    """Give `app` the feed its live views relay (None: no live view), shared: one
    upstream stream per match however many pages watch it."""
    app.state.live_feed = None if feed is None else SharedFeed(feed)


_End = None | LiveNotFound | LiveUnavailable
"""What ends a watcher's queue: the stream's end (None) or its error."""


class _Upstream:
    """One match's upstream stream and the pages that follow it."""

    def __init__(self) -> None:
        self.backlog: list[str] = []
        """The events so far, views but the latest left out: what a page joining late
        needs to draw the table now (the referee gives late joiners the same)."""
        self.last_view: str | None = None
        self.pages: list[asyncio.Queue[str | _End]] = []
        self.task: asyncio.Task[None] | None = None

    def join(self) -> asyncio.Queue[str | _End]:
        queue: asyncio.Queue[str | _End] = asyncio.Queue()
        for text in self.backlog:
            queue.put_nowait(text)
        if self.last_view is not None:
            queue.put_nowait(self.last_view)
        self.pages.append(queue)
        return queue

    def publish(self, text: str) -> None:
        if _is_view(text):
            self.last_view = text
        else:
            if self.last_view is not None:
                self.backlog.append(self.last_view)
                self.last_view = None
            self.backlog.append(text)
        for queue in self.pages:
            queue.put_nowait(text)

    def end(self, error: LiveNotFound | LiveUnavailable | None) -> None:
        for queue in self.pages:
            queue.put_nowait(error)


def _is_view(text: str) -> bool:
    kind: object = json.loads(text).get("type")
    return kind == "view"


class SharedFeed:
    """A LiveFeed that opens one upstream stream per match, shared by every page on it
    (the referee bounds public streams per client address, and the web is one)."""

    def __init__(self, feed: LiveFeed) -> None:
        self._feed = feed
        self._matches: dict[str, _Upstream] = {}

    async def watch(self, match_id: str) -> AsyncGenerator[str, None]:
        """The match's public events, as the wrapped feed gives them."""
        upstream = self._matches.get(match_id)
        if upstream is None:
            upstream = self._matches[match_id] = _Upstream()
            upstream.task = asyncio.create_task(self._pump(match_id, upstream))
        queue = upstream.join()
        try:
            while isinstance(item := await queue.get(), str):
                yield item
            if item is not None:
                raise item
        finally:
            upstream.pages.remove(queue)
            if not upstream.pages and self._matches.get(match_id) is upstream:
                # The last page left: nobody needs the referee's stream any more.
                del self._matches[match_id]
                if upstream.task is not None:
                    upstream.task.cancel()

    async def _pump(self, match_id: str, upstream: _Upstream) -> None:
        error: LiveNotFound | LiveUnavailable | None = None
        events = self._feed.watch(match_id)
        try:
            async for text in events:
                upstream.publish(text)
        except (LiveNotFound, LiveUnavailable) as failed:
            error = failed
        finally:
            await events.aclose()
        # Pages that join from now on open a new upstream (which tells them the end).
        if self._matches.get(match_id) is upstream:
            del self._matches[match_id]
        upstream.end(error)


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
