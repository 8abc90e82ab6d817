"""Play: a person plays one seat against bots on the referee, from the browser.

The web holds the person's seat. Whoever builds the app gives it a `SeatHost`
(`arena web` gives one over gRPC, `arena_cli.play_host`: one bot session on
the referee, the play bot's, whose capacity is this replica's bound of games
at once), as it gives the live view its feed: the ladder imports no gRPC.
Each person's game is a challenge of the play bot against the opponents the
person picked, so it is unrated and marked a challenge wherever a match is
shown, and the referee times the person's moves as a bot's: a late move is a
strike, and three forfeit the seat (a stand-in plays it to the end).

A `Desk` keeps the games of this replica, each a `Play`:

- its play id, drawn by `secrets.token_urlsafe` when the game starts and
  derived from nothing: only the browser that started the game is told it,
  and the seat's private view travels only on URLs keyed by it
  (`/play/{play_id}`, `/api/play/{play_id}/...`). The public match id,
  shown on every public page, reaches nothing of the seat.
- the seat's events (`SeatEvent`), relayed to the page as server-sent
  events; a page that joins late gets what it needs to draw the seat now
  (every event but the acts before the last).
- Goof, the real-time race: when a tick's time is nearly out and the page is
  open but the person has not moved, the desk answers the game's "do
  nothing" move (`wait`) for them, as the terminal does. With no page open
  nobody answers: the referee strikes, then forfeits the seat, as for a bot
  that left.

The bounds: games at once on this replica, and per client address.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import time
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError

import games
from ladder import queries
from ladder.models import OPERATOR_AUTHOR, BotNameRow, BotRow
from ladder.names import name_key
from ladder.records import MatchStatus
from ladder.store import NotFound, Store
from ladder.web.play_schemas import OpponentOut, PlayGameOut, PlayOut
from ladder.web.views import WebError
from ladder.wording import bot_label, plural

log = logging.getLogger(__name__)

ROUNDS_OPTION = {"goodge": "max_rounds", "golden10": "rounds", "goof": "rounds"}
"""The rules option that sets a game's length, per game: a person asks for a short one."""
MAX_ROUNDS = 10
"""The most rounds a person may ask for."""
TICK_DEFAULTS = {"goof": "wait"}
"""The move the desk makes for a person present but idle at a tick's end, per game."""
AUTO_MARGIN_MS = 250
"""How long before a tick's deadline the desk answers for an idle person."""
CHECK_S = 5.0
"""How often a play whose seat says nothing asks the store whether its match ended
(a match aborted by a referee that stopped sends its seats nothing)."""
KEEP_FINISHED_S = 900.0
"""How long a finished game stays reachable by its play id (its page shows the result)."""
MAX_FINISHED = 512
"""Finished games kept at most; the oldest go first."""
PAGES_PER_PLAY = 4
"""Pages (event streams) open at once on one game."""
KEEPALIVE_S = 15.0
"""A comment line on a quiet event stream this often, so that proxies keep it open."""


class Refusal(StrEnum):
    """Why a seat could not be had, as the HTTP status it is answered with."""

    BAD = "bad"  # 422: the request cannot be played (its game, players, options)
    CONFLICT = "conflict"  # 409: a bot went offline or refuses challenges
    NOT_FOUND = "not_found"  # 404: a bot the referee does not know
    BUSY = "busy"  # 429: a quota of the referee
    UNAVAILABLE = "unavailable"  # 503: the referee, or the play bot's session, is not there


STATUS = {
    Refusal.BAD: 422,
    Refusal.CONFLICT: 409,
    Refusal.NOT_FOUND: 404,
    Refusal.BUSY: 429,
    Refusal.UNAVAILABLE: 503,
}


class SeatRefused(Exception):
    """The seat host could not start a game or send a move; `detail` says why, in one line."""

    def __init__(self, refusal: Refusal, detail: str) -> None:
        super().__init__(detail)
        self.refusal = refusal
        self.detail = detail


@dataclass(frozen=True)
class SeatRequest:
    """A game to start: the play bot against `opponents` (bot ids), one seat each."""

    game: str
    opponents: tuple[str, ...]
    deadline_ms: int
    options: Mapping[str, str]
    """Rules options as texts, as `games.parse_option_pairs` reads them (`rounds` = "1")."""


@dataclass(frozen=True)
class Seated:
    """A game started: its match, and the play bot's id (the person's seat)."""

    match_id: str
    bot_id: str


class SeatEventType(StrEnum):
    """What the seat hears, and the keys of each event's data."""

    START = "seat_start"  # game_index, game, seat, seats (bot id per seat)
    ACT = "act"  # request_id, game_index, seat, view (the seat's observation), legal
    # (texts), deadline_ms, time_bank_ms: the clock as it stood when the referee sent it
    STRIKE = "seat_strike"  # game_index, reason, strikes, max_strikes
    FORFEIT = "seat_forfeit"  # reason
    GAME_END = "game_end"  # game_index, seat, scores, ranks (per seat)
    MATCH_END = "match_end"  # result: the match's result (MatchResult.json)


@dataclass(frozen=True)
class SeatEvent:
    """One thing the seat heard from the referee; `data` is JSON-ready."""

    type: SeatEventType
    data: Mapping[str, Any]

    def json(self) -> str:
        return json.dumps({"type": str(self.type), **self.data})


class SeatHost(Protocol):
    """Where a person's seats are held: the play bot's session on the referee."""

    async def start(self, request: SeatRequest) -> Seated:
        """Start the game (SeatRefused when it cannot be)."""
        ...

    def seat(self, match_id: str) -> AsyncGenerator[SeatEvent, None]:
        """The seat's events of a match this host started, each once, from the first,
        ending after MATCH_END."""
        ...

    async def answer(self, match_id: str, request_id: str, action: str) -> None:
        """Send the seat's move for an open request (SeatRefused when it cannot be sent)."""
        ...

    async def close(self) -> None:
        """End the session; the host is not used again."""
        ...


@dataclass(frozen=True)
class Bounds:
    """What one web replica allows (the web's settings)."""

    at_once: int
    per_address: int
    deadline_ms: int
    """A person's time for a move of Goodge and Golden 10."""
    tick_ms: int
    """A person's time for a Goof tick."""

    def deadline_of(self, game: str) -> int:
        return self.tick_ms if games.get(game).simultaneous else self.deadline_ms


class PlayStatus(StrEnum):
    PLAYING = "playing"
    FINISHED = "finished"
    ABORTED = "aborted"


@dataclass
class Play:
    """One person's game on this replica."""

    play_id: str
    match_id: str
    bot_id: str
    game: str
    players: int
    name: str
    address: str
    status: PlayStatus = PlayStatus.PLAYING
    ended_at: float = 0.0
    result: dict[str, Any] | None = None
    backlog: list[tuple[str, str]] = field(default_factory=list)
    """Every event so far, its type and JSON, but the acts before the last (and their
    answers): what a page joining now needs."""
    act: dict[str, Any] | None = None
    """The open request: the last act, until it is answered or closed."""
    pages: list[asyncio.Queue[str | None]] = field(default_factory=list)
    task: asyncio.Task[None] | None = None
    answering: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Held while a move is sent and its "answered" kept: the seat's next events (the
    referee may send them before the send returns) wait for it, so pages get them after."""

    def out(self) -> PlayOut:
        return PlayOut(
            match_id=self.match_id,
            game=self.game,
            players=self.players,
            name=self.name,
            bot_id=self.bot_id,
            status=str(self.status),
            result=self.result,
        )


_CLOSING = frozenset(
    {SeatEventType.STRIKE, SeatEventType.GAME_END, SeatEventType.MATCH_END, SeatEventType.FORFEIT}
)
"""Events after which the last act is not open any more (a strike: its time ran out)."""
_ONE_AT_A_TIME = frozenset({str(SeatEventType.ACT), "answered"})
"""Kinds of which a late page gets only the last: the open request and its answer."""


class Desk:
    """The person's games of one web replica: started here, held by `host`."""

    def __init__(self, host: SeatHost, store: Store, bounds: Bounds, play_name: str) -> None:
        """`play_name`: the play bot's name, whose seats are the people's."""
        self.host = host
        self.store = store
        self.bounds = bounds
        self.play_name = play_name
        self._plays: dict[str, Play] = {}
        self._starting: dict[str, int] = {}
        """Games being started now, per client address (counted against the bounds)."""
        self._clock_tasks: set[asyncio.Task[None]] = set()
        """The Goof clocks running (each ends by itself within its tick)."""

    # Choices --------------------------------------------------------------------------

    def games(self) -> list[PlayGameOut]:
        return [
            PlayGameOut(
                game=spec.name,
                title=spec.title,
                min_players=spec.min_players,
                max_players=spec.max_players,
                max_rounds=MAX_ROUNDS,
                deadline_ms=self.bounds.deadline_of(spec.name),
            )
            for spec in map(games.get, games.names())
        ]

    def opponents(self) -> list[OpponentOut]:
        """The bots online now, not retired, whose names accept challenges, but none of the
        play bot's author: that author may watch the play bot's seats (`WatchSeat`), which
        are the people's, and could tell a bot of its own at the table their hands. (The
        operator's play bot hides nothing of the operator's: it sees every seat anyway.)"""
        with self.store.session() as session:
            now = self.store.database_now(session)
            rows = [
                row
                for row in session.scalars(
                    select(BotRow)
                    .where(BotRow.online.is_(True), BotRow.retired_at.is_(None))
                    .order_by(BotRow.name, BotRow.version)
                )
                if queries.is_online(row, now)
            ]
            play_key = name_key(self.play_name)
            keys = {name_key(row.name) for row in rows} | {play_key}
            names = select(BotNameRow.name_key, BotNameRow.challenges, BotNameRow.author_id).where(
                BotNameRow.name_key.in_(keys)
            )
            accepts: dict[str, bool] = {}
            owners: dict[str, str] = {}
            for key, challenges, author_id in session.execute(names):
                accepts[key], owners[key] = challenges, author_id
        watcher = owners.get(play_key)
        if watcher == OPERATOR_AUTHOR:
            watcher = None
        return [
            OpponentOut(
                id=row.id,
                name=row.name,
                version=row.version,
                label=bot_label(row.name, row.version),
                games=list(row.games),
            )
            for row in rows
            if accepts.get(name_key(row.name), True)
            and (watcher is None or owners.get(name_key(row.name)) != watcher)
        ]

    # Starting -------------------------------------------------------------------------

    def playing(self, address: str | None = None) -> int:
        """Games being played or started now, on this replica or from one address."""
        plays = sum(
            1
            for play in self._plays.values()
            if play.status == PlayStatus.PLAYING and address in (None, play.address)
        )
        starting = self._starting.get(address, 0) if address else sum(self._starting.values())
        return plays + starting

    def check_request(
        self, game: str, players: int, opponents: list[str], rounds: int
    ) -> SeatRequest:
        """The request a person's choices make, or a WebError saying what is wrong."""
        try:
            spec = games.get(game)
            spec.check_players(players)
        except ValueError as error:
            raise WebError(422, str(error)) from None
        if len(opponents) != players - 1:
            raise WebError(
                422,
                f"a {players}-player game has {plural(players - 1, 'opponent', 'opponents')}; "
                f"{len(opponents)} given",
            )
        if len(set(opponents)) != len(opponents):
            raise WebError(422, "a bot takes one seat: each opponent once")
        if not 1 <= rounds <= MAX_ROUNDS:
            raise WebError(422, f"rounds must be 1..{MAX_ROUNDS}, not {rounds}")
        offered = {bot.id: bot for bot in self.opponents()}
        for bot_id in opponents:
            bot = offered.get(bot_id)
            if bot is None:
                raise WebError(
                    409, f"bot {bot_id[:40]!r} is not online, or does not accept challenges"
                )
            if game not in bot.games:
                raise WebError(409, f"bot {bot.label} does not play {game}")
        return SeatRequest(
            game=game,
            opponents=tuple(opponents),
            deadline_ms=self.bounds.deadline_of(game),
            options={ROUNDS_OPTION[game]: str(rounds)},
        )

    async def start(self, request: SeatRequest, players: int, name: str, address: str) -> Play:
        """Start a person's game within the bounds; WebError when it cannot be."""
        self._forget_old(time.monotonic())
        if self.playing(address) >= self.bounds.per_address:
            raise WebError(
                429,
                f"at most {plural(self.bounds.per_address, 'game', 'games')} at once from one "
                "address: finish one first",
            )
        if self.playing() >= self.bounds.at_once:
            raise WebError(
                503,
                f"this server holds {self.bounds.at_once} games at once, all taken now: "
                "try again when one ends",
            )
        self._starting[address] = self._starting.get(address, 0) + 1
        try:
            seated = await self.host.start(request)
        except SeatRefused as refused:
            raise WebError(STATUS[refused.refusal], refused.detail) from None
        finally:
            self._starting[address] -= 1
            if not self._starting[address]:
                del self._starting[address]
        play = Play(
            play_id=secrets.token_urlsafe(24),
            match_id=seated.match_id,
            bot_id=seated.bot_id,
            game=request.game,
            players=players,
            name=name,
            address=address,
        )
        self._plays[play.play_id] = play
        play.task = asyncio.create_task(self._follow(play))
        return play

    def _forget_old(self, now: float) -> None:
        ended = sorted(
            (play for play in self._plays.values() if play.status != PlayStatus.PLAYING),
            key=lambda play: play.ended_at,
        )
        for number, play in enumerate(ended):
            if now - play.ended_at > KEEP_FINISHED_S or len(ended) - number > MAX_FINISHED:
                del self._plays[play.play_id]

    # Following a game -----------------------------------------------------------------

    def get(self, play_id: str) -> Play:
        """The game with this play id, or a 404 that says nothing of other games."""
        play = self._plays.get(play_id) if len(play_id) <= 100 else None
        if play is None:
            raise WebError(
                404,
                "no game with this play id here: a game is reached only by the play id given "
                f"to the browser that started it, until {KEEP_FINISHED_S / 60:.0f} minutes "
                "after its end",
            )
        return play

    async def _follow(self, play: Play) -> None:
        """Relay the seat's events to the play's pages until the match ends."""
        events = self.host.seat(play.match_id)
        quiet_checks = 0
        pending: asyncio.Future[SeatEvent] = asyncio.ensure_future(anext(events))
        try:
            while True:
                done, _ = await asyncio.wait({pending}, timeout=CHECK_S)
                if not done:
                    quiet_checks = await self._check_stored(play, quiet_checks)
                    if play.status != PlayStatus.PLAYING:
                        return
                    continue
                quiet_checks = 0
                try:
                    event = pending.result()
                except StopAsyncIteration:
                    return
                async with play.answering:
                    self._publish(play, event)
                if event.type == SeatEventType.MATCH_END:
                    self._end(play, PlayStatus.FINISHED, dict(event.data["result"]))
                    return
                pending = asyncio.ensure_future(anext(events))
        except Exception:
            # Not the play id: it is a secret, and logs are read by more than its owner.
            log.exception("following the person's seat in match %s failed", play.match_id)
            lost = {"type": "seat_lost", "reason": "the web lost the seat"}
            self._keep(play, "seat_lost", json.dumps(lost))
        finally:
            pending.cancel()
            # The generator runs until its cancelled step has ended: only then can it close.
            with contextlib.suppress(BaseException):
                await pending
            await events.aclose()
            if play.status == PlayStatus.PLAYING:
                self._end(play, PlayStatus.ABORTED, None)

    async def _check_stored(self, play: Play, quiet_checks: int) -> int:
        """The seat is quiet: has its match ended without telling it (a referee that
        stopped aborts its matches and tells their seats nothing)? Two quiet checks in a
        row that find it ended end the play from what the store says."""
        try:
            match = await asyncio.to_thread(self.store.match, play.match_id)
        except NotFound:
            return 0
        except SQLAlchemyError as error:
            log.warning("cannot read match %s from the store: %s", play.match_id, error)
            return quiet_checks
        if match.status == MatchStatus.RUNNING:
            return 0
        if quiet_checks < 1:
            return quiet_checks + 1
        if match.status == MatchStatus.FINISHED and match.result is not None:
            result = match.result.to_json()
            self._publish(play, SeatEvent(SeatEventType.MATCH_END, {"result": result}))
            self._end(play, PlayStatus.FINISHED, dict(result))
        else:
            aborted = {"type": "match_aborted", "reason": match.reason}
            self._keep(play, "match_aborted", json.dumps(aborted))
            self._end(play, PlayStatus.ABORTED, None)
        return 0

    def _publish(self, play: Play, event: SeatEvent) -> None:
        if event.type == SeatEventType.ACT:
            play.act = dict(event.data)
            default = TICK_DEFAULTS.get(play.game)
            if default in event.data["legal"]:
                self._answer_later(play, str(event.data["request_id"]), str(default))
        elif event.type in _CLOSING:
            play.act = None
        self._keep(play, event.type, event.json())

    def _keep(self, play: Play, kind: str, text: str) -> None:
        """Add an event to the play's backlog (one open request at a time), and send it."""
        if kind == SeatEventType.ACT:
            play.backlog = [item for item in play.backlog if item[0] not in _ONE_AT_A_TIME]
        play.backlog.append((kind, text))
        self._send(play, text)

    @staticmethod
    def _send(play: Play, text: str) -> None:
        for page in play.pages:
            page.put_nowait(text)

    def _end(self, play: Play, status: PlayStatus, result: dict[str, Any] | None) -> None:
        play.status = status
        play.result = result
        play.act = None
        play.ended_at = time.monotonic()
        for page in play.pages:
            page.put_nowait(None)

    def _answer_later(self, play: Play, request_id: str, action: str) -> None:
        """At the tick's end, the default move for a person whose page is open but who has
        not moved: the tick's clock, as on the terminal."""
        assert play.act is not None
        delay_s = max(0, int(play.act["deadline_ms"]) - AUTO_MARGIN_MS) / 1000

        async def answer() -> None:
            await asyncio.sleep(delay_s)
            if play.pages:
                with contextlib.suppress(WebError):
                    await self.answer(play, request_id, action, by="clock")

        task = asyncio.create_task(answer())
        self._clock_tasks.add(task)  # a reference, so that it is not collected mid-tick
        task.add_done_callback(self._clock_tasks.discard)

    async def answer(self, play: Play, request_id: str, action: str, by: str = "you") -> None:
        """Send the person's move for the open request; WebError if it is not one now."""
        act = play.act
        if act is None or act["request_id"] != request_id:
            raise WebError(
                409, "no open move with this request id: it was made, or its time ran out"
            )
        if action not in act["legal"]:
            raise WebError(
                409, f"{action[:40]!r} is not a legal move now; legal: {', '.join(act['legal'])}"
            )
        play.act = None  # one answer per request, whoever sends it
        async with play.answering:
            try:
                await self.host.answer(play.match_id, request_id, action)
            except SeatRefused as refused:
                raise WebError(STATUS[refused.refusal], refused.detail) from None
            answered = {"type": "answered", "request_id": request_id, "action": action, "by": by}
            self._keep(play, "answered", json.dumps(answered))

    def check_pages(self, play: Play) -> None:
        """A 429 when the game has as many pages open as it may."""
        if len(play.pages) >= PAGES_PER_PLAY:
            raise WebError(429, f"at most {PAGES_PER_PLAY} pages at once on one game")

    async def events(self, play: Play) -> AsyncIterator[str]:
        """The JSON of the seat's events for one page: the backlog, then each as it comes,
        until the game's end; "" after each quiet KEEPALIVE_S (a keep-alive). The page
        counts as open (the person is there) while this runs."""
        page: asyncio.Queue[str | None] = asyncio.Queue()
        for _, kept in play.backlog:
            page.put_nowait(kept)
        if play.status != PlayStatus.PLAYING:
            page.put_nowait(None)
        play.pages.append(page)
        try:
            while True:
                try:
                    text = await asyncio.wait_for(page.get(), KEEPALIVE_S)
                except TimeoutError:
                    yield ""
                    continue
                if text is None:
                    return
                yield text
        finally:
            play.pages.remove(page)

    async def close(self) -> None:
        """Stop following every game and close the host (the web is stopping)."""
        for play in self._plays.values():
            if play.task is not None:
                play.task.cancel()
        await self.host.close()


def attach(
    app: FastAPI, host: SeatHost | None, store: Store, bounds: Bounds, play_name: str
) -> None:
    """Give `app` Play over `host`, whose bot is `play_name` (None: /play is off)."""
    app.state.play_desk = None if host is None else Desk(host, store, bounds, play_name)


def desk_of(app: FastAPI) -> Desk | None:
    """The app's Play desk, None when /play is off."""
    desk: Desk | None = getattr(app.state, "play_desk", None)
    return desk
