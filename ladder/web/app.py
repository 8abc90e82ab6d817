"""The standings web app: HTML pages and a JSON API over the same data.

`create_app(store)` builds a FastAPI app; nothing is created at import time.
Pages: `/` (standings of every ladder), `/bots/{bot_id}`, `/authors/{name}`, `/tournaments`,
`/tournaments/{id}`, `/matches/{match_id}` (result and replay viewer), `/play` and
`/play/{play_id}` (a person's seat against the bots, `ladder.web.play`).
JSON under `/api/...` (described at `/openapi.json`, rate-bounded per client
address), Prometheus metrics at `/metrics`, liveness at `/healthz`. Every
response carries the security headers of `ladder.web.security`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Query, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.gzip import GZipMiddleware
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from markupsafe import Markup
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy.exc import OperationalError
from starlette.exceptions import HTTPException as StarletteHTTPException

from ladder import queries
from ladder.store import Store
from ladder.web import author_views, live, play, play_api, views
from ladder.web.charts import Band, Point, interval_bar, interval_scale, line_chart
from ladder.web.metrics import MetricsMiddleware, WebMetrics
from ladder.web.schemas import (
    AuthorPageOut,
    BotPageOut,
    ErrorOut,
    FramesOut,
    HealthOut,
    LadderOut,
    LaddersOut,
    LogsOut,
    MatchOut,
    TournamentPageOut,
    TournamentsOut,
)
from ladder.web.security import (
    API_BURST,
    API_RATE,
    SECURITY_HEADERS,
    RateLimitMiddleware,
    SecurityHeadersMiddleware,
    TokenBuckets,
    visible,
)
from ladder.web.settings import DEFAULTS

HERE = Path(__file__).parent
POLL_SECONDS = DEFAULTS.poll_seconds
ERRORS: dict[int | str, dict[str, Any]] = {404: {"model": ErrorOut, "description": "Not found"}}
UNTIL_FINISHED: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    409: {"model": ErrorOut, "description": "The match has not finished"},
}


def _when(value: datetime | None) -> str:
    if value is None:
        return ""
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _shown(value: object) -> object:
    """What a template prints for `value`: text made `visible` (markup is built already)."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return visible(value)
    return value


def _wants_json(request: Request) -> bool:
    path = request.url.path
    return path.startswith("/api/") or path in ("/healthz", "/metrics", "/openapi.json")


DATABASE_UNAVAILABLE = "the database is unavailable for a moment; try again shortly"
RETRY_AFTER_S = 5


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    yield
    desk = play.desk_of(app)
    if desk is not None:
        await desk.close()  # the play bot's session ends with the web


def create_app(
    store: Store,
    *,
    poll_seconds: float = POLL_SECONDS,
    api_rate: float = API_RATE,
    api_burst: int = API_BURST,
) -> FastAPI:
    """The web app over `store` (which the caller owns and closes).

    Each client address may make `api_rate` requests a second to /api/ on
    average and `api_burst` at once; a page's live refresh makes one every
    `poll_seconds`.
    """
    app = FastAPI(
        title="Card Arena standings",
        version="1",
        description="Ladders, bots, tournaments and match replays of Card Arena.",
        docs_url=None,  # the interactive docs load scripts from a CDN; /openapi.json is enough
        redoc_url=None,
        lifespan=_lifespan,
    )
    metrics = WebMetrics.create()
    cache = views.FrameCache()
    fits = views.StandingCache()
    app.state.store = store
    app.state.metrics = metrics
    app.add_middleware(GZipMiddleware, minimum_size=2048)
    app.add_middleware(RateLimitMiddleware, buckets=TokenBuckets(api_rate, api_burst))
    app.add_middleware(MetricsMiddleware, metrics=metrics)  # counts the 429s too
    app.add_middleware(SecurityHeadersMiddleware)  # outermost: on every response
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    templates = Jinja2Templates(directory=HERE / "templates")
    # Every printed value goes through _shown: names, versions, reasons and
    # error details may hold characters a bot chose to reorder the page.
    templates.env.finalize = _shown
    templates.env.filters["when"] = _when
    templates.env.filters["game_title"] = views.game_title
    templates.env.globals.update(
        label=views.label,
        game_title=views.game_title,
        split_ladder=views.split_ladder,
        poll_ms=int(poll_seconds * 1000),
        provisional_se=queries.PROVISIONAL_SE,
    )

    def page(request: Request, name: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        context.setdefault("play_on", play.desk_of(request.app) is not None)
        return templates.TemplateResponse(request, name, context, status_code=status_code)

    def error(request: Request, status: int, detail: str) -> Response:
        if _wants_json(request):
            return JSONResponse({"detail": detail}, status_code=status)
        return page(request, "error.html", status, status=status, detail=detail)

    @app.exception_handler(views.WebError)
    async def web_error(request: Request, exc: views.WebError) -> Response:
        return error(request, exc.status, exc.detail)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        detail = str(exc.detail)
        if exc.status_code == 404 and detail == "Not Found":
            detail = f"there is no page at {request.url.path}"
        return error(request, exc.status_code, detail)

    @app.exception_handler(OperationalError)
    async def database_unavailable(request: Request, exc: OperationalError) -> Response:
        # Not a bug of the page's: the database is away for a while (a failover, a restart,
        # the network). The driver's text, with the database's address, stays out of it.
        response = error(request, 503, DATABASE_UNAVAILABLE)
        response.headers["Retry-After"] = str(RETRY_AFTER_S)
        return response

    @app.exception_handler(Exception)
    async def server_error(request: Request, exc: Exception) -> Response:
        # Starlette answers unhandled errors outside every middleware, so this
        # response gets its headers here. The exception's text stays in the log:
        # it may quote SQL and its parameters, seeds among them.
        response = error(request, 500, "internal error: the server could not answer this request")
        response.headers.update(SECURITY_HEADERS)
        return response

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> Response:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg', 'invalid')}"
            for e in exc.errors()
        )
        if _wants_json(request):
            return JSONResponse(
                {"detail": f"bad request: {problems}", "errors": jsonable_encoder(exc.errors())},
                status_code=422,
            )
        return error(request, 422, f"bad request: {problems}")

    # Pages ---------------------------------------------------------------------------

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def standings_page(request: Request) -> HTMLResponse:
        return page(request, "standings.html", data=views.ladders(store))

    @app.get("/bots/{bot_id}", response_class=HTMLResponse, include_in_schema=False)
    def bot_page(request: Request, bot_id: str) -> HTMLResponse:
        data = views.bot_page(store, bot_id)
        charts = []
        for rating in data.ratings:
            points = [p for p in data.history if p.ladder_id == rating.ladder_id]
            series = [
                Point(
                    p.rating,
                    str(p.games),
                    f"{p.rating:.1f} after game {p.games} ({p.match_id}, {_when(p.at)})",
                )
                for p in points
            ]
            if rating.start_rating is not None:
                series.insert(
                    0, Point(rating.start_rating, "0", f"start {rating.start_rating:.1f}")
                )
            # The history is the live Elo's; the ladder's fit is drawn as it stands now, its
            # rating and 95% band (rating +- 2 se): the fit has no history of its own.
            band = None
            if rating.se is not None:
                band = Band(
                    rating.rating,
                    rating.rating - 2 * rating.se,
                    rating.rating + 2 * rating.se,
                    f"the ladder's fit now: {rating.rating:.0f} \u00b1 {2 * rating.se:.0f} "
                    "(rating \u00b1 2 standard errors)",
                )
            charts.append(
                (
                    rating,
                    line_chart(
                        series,
                        title=f"live Elo of {views.label(data.bot)} on {rating.ladder_id}",
                        baseline=rating.start_rating,
                        band=band,
                        x_label="rated matches played",
                        y_label="rating (Elo)",
                    ),
                )
            )
        return page(request, "bot.html", data=data, charts=charts)

    @app.get("/authors/{name}", response_class=HTMLResponse, include_in_schema=False)
    def author_page(request: Request, name: str) -> HTMLResponse:
        return page(request, "author.html", data=author_views.author_page(store, name))

    @app.get("/tournaments", response_class=HTMLResponse, include_in_schema=False)
    def tournaments_page(request: Request) -> HTMLResponse:
        data = views.tournaments(store)
        signature = ",".join(
            f"{t.id}:{t.status}:{t.matches_finished}/{t.matches_in_all}" for t in data.tournaments
        )
        return page(request, "tournaments.html", data=data, signature=signature)

    @app.get("/tournaments/{tournament_id}", response_class=HTMLResponse, include_in_schema=False)
    def tournament_page(request: Request, tournament_id: str) -> HTMLResponse:
        data = views.tournament(store, tournament_id, fits)
        measured = [
            (line.rating, line.ci_low, line.ci_high)
            for line in data.table
            if line.rating is not None and line.ci_low is not None and line.ci_high is not None
        ]
        scale = interval_scale([(low, high) for _, low, high in measured])
        # A bot its games do not measure has no interval to draw: its cell says why.
        drawn = iter(interval_bar(*numbers, scale) for numbers in measured)
        bars = [next(drawn) if line.measured else Markup("") for line in data.table]
        return page(request, "tournament.html", data=data, bars=bars, scale=scale)

    @app.get("/matches/{match_id}", response_class=HTMLResponse, include_in_schema=False)
    def match_page(request: Request, match_id: str) -> HTMLResponse:
        data = views.match(store, match_id)
        if data.status == "running":
            # Watched live: the public table as it is played (ladder.web.live).
            has_feed = live.feed_of(request.app) is not None
            return page(request, "live.html", data=data, has_feed=has_feed)
        seats = views.bot_refs(store, (b for g in data.games for b in g.seats))
        return page(request, "match.html", data=data, seat_refs=seats)

    @app.get("/play", response_class=HTMLResponse, include_in_schema=False)
    def play_page(request: Request) -> HTMLResponse:
        desk = play_api.desk(request)
        return page(
            request,
            "play.html",
            nav="play",
            games=desk.games(),
            opponents=desk.opponents(),
            bounds=desk.bounds,
        )

    @app.get("/play/{play_id}", response_class=HTMLResponse, include_in_schema=False)
    def play_seat_page(request: Request, play_id: str) -> HTMLResponse:
        seat = play_api.desk(request).get(play_id)
        data = views.match(store, seat.match_id)
        has_feed = live.feed_of(request.app) is not None
        response = page(
            request, "play_seat.html", nav="play", data=data, play=seat, has_feed=has_feed
        )
        response.headers.update(play_api.PRIVATE)
        return response

    # JSON API -------------------------------------------------------------------------

    app.include_router(live.router)
    app.include_router(play_api.router)

    @app.get("/api/ladders", response_model=LaddersOut, tags=["ladders"])
    def api_ladders() -> LaddersOut:
        """Every ladder with its standings, best first."""
        return views.ladders(store)

    @app.get(
        "/api/ladders/{ladder_id}", response_model=LadderOut, responses=ERRORS, tags=["ladders"]
    )
    def api_ladder(ladder_id: str) -> LadderOut:
        """One ladder's standings, e.g. `goodge-4p`."""
        return views.ladder(store, ladder_id)

    @app.get("/api/bots/{bot_id}", response_model=BotPageOut, responses=ERRORS, tags=["bots"])
    def api_bot(bot_id: str) -> BotPageOut:
        """A bot (by id, name or name@version): ratings, rating history, recent matches."""
        return views.bot_page(store, bot_id)

    @app.get(
        "/api/authors/{name}", response_model=AuthorPageOut, responses=ERRORS, tags=["authors"]
    )
    def api_author(name: str) -> AuthorPageOut:
        """An author (by name, any spelling of it, or id): its bots with their versions and
        ratings, and the recent matches they played."""
        return author_views.author_page(store, name)

    @app.get("/api/tournaments", response_model=TournamentsOut, tags=["tournaments"])
    def api_tournaments() -> TournamentsOut:
        """Tournaments, newest first."""
        return views.tournaments(store)

    @app.get(
        "/api/tournaments/{tournament_id}",
        response_model=TournamentPageOut,
        responses=ERRORS,
        tags=["tournaments"],
    )
    def api_tournament(tournament_id: str) -> TournamentPageOut:
        """One tournament: settings, progress, planned matches and table (rating with
        95% interval)."""
        return views.tournament(store, tournament_id, fits)

    @app.get("/api/matches/{match_id}", response_model=MatchOut, responses=ERRORS, tags=["matches"])
    def api_match(match_id: str) -> MatchOut:
        """A match: its entries, status and, once finished, its result per game."""
        return views.match(store, match_id)

    @app.get(
        "/api/matches/{match_id}/frames",
        response_model=FramesOut,
        responses=UNTIL_FINISHED,
        tags=["matches"],
    )
    def api_frames(
        match_id: str,
        game: int = Query(0, ge=0, description="which game of the match (duplicate rotation)"),
    ) -> FramesOut:
        """The replay of one game of a finished match, frame by frame, every card face up."""
        return views.frames(store, match_id, game, cache)

    @app.get(
        "/api/matches/{match_id}/logs",
        response_model=LogsOut,
        responses=UNTIL_FINISHED,
        tags=["matches"],
    )
    def api_logs(match_id: str) -> LogsOut:
        """The engine log of every game of a finished match: with its seed, enough to
        replay and check every game (`arena match verify --web`)."""
        return views.logs(store, match_id)

    # Operations --------------------------------------------------------------------------

    @app.get("/healthz", response_model=HealthOut, tags=["operations"])
    def healthz() -> Response:
        """200 when the database answers, else 503."""
        try:
            store.ping()
        except Exception:
            body = HealthOut(status="unavailable", database=False)
            return JSONResponse(body.model_dump(), status_code=503)
        return JSONResponse(HealthOut(status="ok", database=True).model_dump())

    @app.get("/metrics", include_in_schema=False)
    def prometheus() -> Response:
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    return app
