"""Play's JSON API and the seat's event stream (`ladder.web.play` holds the games).

- `GET /api/play`: the games, the opponents online that accept challenges, the bounds;
- `POST /api/play`: start a game; the answer holds its secret play id;
- `GET /api/play/{play_id}`: the game as it stands, its result once finished;
- `GET /api/play/{play_id}/events`: the seat's events as server-sent events;
- `POST /api/play/{play_id}/answer`: the person's move.

The POSTs take JSON only, from pages of this site: a form of another site can
post neither JSON nor with this site's origin, and the answer's URL holds the
play id, which no other site knows. Every answer keyed by a play id is
`Cache-Control: no-store`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import StreamingResponse

from ladder.web.live import STREAM_HEADERS
from ladder.web.play import Desk, desk_of
from ladder.web.play_schemas import (
    AnswerIn,
    AnswerOut,
    PlayChoicesOut,
    PlayIn,
    PlayOut,
    PlayStartedOut,
)
from ladder.web.schemas import ErrorOut
from ladder.web.views import WebError

PRIVATE = {"Cache-Control": "no-store"}
"""On every answer keyed by a play id: no cache keeps a seat's view."""


def _error(description: str) -> dict[str, Any]:
    return {"model": ErrorOut, "description": description}


Responses = dict[int | str, dict[str, Any]]
OFF: Responses = {404: _error("Play is off on this server, or no game has this play id")}
STARTING: Responses = {
    **OFF,
    403: _error("A page of another site"),
    409: _error("An opponent went offline, or does not play the game"),
    415: _error("Not JSON"),
    422: _error("The game cannot be played so"),
    429: _error("This address plays as many games at once as it may"),
    503: _error("Every seat of this server is taken, or the referee cannot be reached"),
}
ANSWERING: Responses = {
    **OFF,
    403: _error("A page of another site"),
    409: _error("No open move with this id, or not a legal move now"),
    415: _error("Not JSON"),
}


def desk(request: Request) -> Desk:
    """The app's Play desk; a 404 when /play is off."""
    found = desk_of(request.app)
    if found is None:
        raise WebError(404, "Play is off on this server (the operator's --play setting)")
    return found


def from_this_site(request: Request) -> None:
    """A POST must be JSON and, when the browser names its origin, come from this site."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise WebError(
            415, f"send JSON (Content-Type: application/json), not {kind or 'nothing'!r}"
        )
    origin = request.headers.get("origin")
    if origin is not None and urlsplit(origin).netloc != request.headers.get("host"):
        raise WebError(403, "a request from a page of another site is refused")


def peer(request: Request) -> str:
    """The client's address, never a forwarded-for header (a client could forge that)."""
    return request.client.host if request.client else ""


router = APIRouter(tags=["play"])


@router.get("/api/play", response_model=PlayChoicesOut, responses=OFF)
def play_choices(request: Request) -> PlayChoicesOut:
    """What a person may play now: the games, the bots online that accept challenges, and
    the bounds of this server."""
    found = desk(request)
    return PlayChoicesOut(
        games=found.games(),
        opponents=found.opponents(),
        at_once=found.bounds.at_once,
        per_address=found.bounds.per_address,
    )


@router.post(
    "/api/play",
    status_code=201,
    response_model=PlayStartedOut,
    responses=STARTING,
    dependencies=[Depends(from_this_site)],
)
async def start_play(request: Request, body: PlayIn, response: Response) -> PlayStartedOut:
    """Start a game: the person's seat against the chosen bots, unrated (a challenge of the
    play bot). The answer's play id is the only key to the seat: keep it."""
    found = desk(request)
    seat = await asyncio.to_thread(
        found.check_request, body.game, body.players, body.opponents, body.rounds
    )
    play = await found.start(seat, body.players, body.name.strip() or "guest", peer(request))
    response.headers.update(PRIVATE)
    base = f"/api/play/{play.play_id}"
    return PlayStartedOut(
        play_id=play.play_id,
        url=f"/play/{play.play_id}",
        events=f"{base}/events",
        answer=f"{base}/answer",
        match_id=play.match_id,
    )


@router.get("/api/play/{play_id}", response_model=PlayOut, responses=OFF)
def play_state(request: Request, play_id: str, response: Response) -> PlayOut:
    """A game as it stands: playing, finished (with the result) or aborted."""
    play = desk(request).get(play_id)
    response.headers.update(PRIVATE)
    return play.out()


@router.get(
    "/api/play/{play_id}/events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}, **OFF},
)
async def play_events(request: Request, play_id: str) -> StreamingResponse:
    """The seat's events as server-sent events, from the game's start (a page that joins
    late gets the open move, not the ones before): `seat_start`, `act` (the seat's own
    view, its legal moves and clock), `answered`, `seat_strike`, `seat_forfeit`,
    `game_end`, then `match_end` (or `match_aborted`). The public table is the match's
    live stream (`/api/matches/{match_id}/live`)."""
    found = desk(request)
    play = found.get(play_id)
    found.check_pages(play)

    async def relay() -> AsyncIterator[str]:
        async for text in found.events(play):
            yield _sse(text)

    return StreamingResponse(
        relay(), media_type="text/event-stream", headers={**STREAM_HEADERS, **PRIVATE}
    )


def _sse(text: str) -> str:
    # A comment line keeps a quiet stream open; events are JSON on one line.
    return ": keep-alive\n\n" if not text else f"data: {text}\n\n"


@router.post(
    "/api/play/{play_id}/answer",
    response_model=AnswerOut,
    responses=ANSWERING,
    dependencies=[Depends(from_this_site)],
)
async def answer(request: Request, play_id: str, body: AnswerIn, response: Response) -> AnswerOut:
    """The person's move: one of the open request's legal moves, sent to the referee at
    once (within the move's time, as a bot's answer)."""
    found = desk(request)
    await found.answer(found.get(play_id), body.request_id, body.action)
    response.headers.update(PRIVATE)
    return AnswerOut(request_id=body.request_id, action=body.action)
