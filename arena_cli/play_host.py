"""The seats the web holds for people (ladder.web.play), on the referee over gRPC.

Here and not in `ladder.web`: the ladder imports neither the referee nor the
generated stubs; `arena web` (the composition root) gives the app this host,
as it gives the live view `arena_cli.live_feed.RefereeFeed`.

The host is one bot to the referee, the play bot, with ONE session whose
capacity is the replica's bound of games at once; each person's game is a
`Challenge` of the play bot against the opponents the person picked. On first
use it gets the bot's token: the operator's (`ARENA_WEB_PLAY_BOT_TOKEN`), or
it registers the name's version `web` with the play token (the admin token or
the name's author's; none on a referee without an admin token) and, when that
version exists already (this web ran before), rotates its token, which ends
the earlier run's session. Then it turns challenges off for the name (no other
author can take the seats of people) and retires the version: the continuous
ladder seats no retired bot, so the play bot never sits in a rated match.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import Any

import grpc

import games
from bots.sdk import EOF, Backoff, channel, metadata
from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import arena_pb2_grpc as pb_grpc
from cardarena_api.v1 import cards_pb2 as cards
from ladder.store import NotFound
from ladder.web.play import Refusal, Seated, SeatEvent, SeatEventType, SeatRefused, SeatRequest
from referee.wire_actions import option_message

log = logging.getLogger(__name__)

PLAY_VERSION = "web"
"""The version of the play bot's name that the web registers."""
CLIENT = "card-arena-web-play/1"
OPEN_TIMEOUT_S = 10.0
"""How long the first game waits for the play bot's session to open."""
UNCLAIMED_S = 3600.0
"""A match's seat events that no game of this web follows (a match the operator started
with the play bot, or one of an earlier run) are dropped after this long."""

S = grpc.StatusCode
REFUSALS = {
    S.INVALID_ARGUMENT: Refusal.BAD,
    S.FAILED_PRECONDITION: Refusal.CONFLICT,
    S.NOT_FOUND: Refusal.NOT_FOUND,
    S.RESOURCE_EXHAUSTED: Refusal.BUSY,
}
"""How a refused challenge is told to the person; any other code is the server's."""


@dataclass
class _Seat:
    """A match's seat events not yet read."""

    queue: asyncio.Queue[SeatEvent] = field(default_factory=asyncio.Queue)
    followed: bool = False
    since: float = field(default_factory=time.monotonic)


class RefereeSeatHost:
    """ladder.web.play.SeatHost over gRPC: the play bot's session on the referee."""

    def __init__(
        self,
        address: str,
        bot_name: str,
        capacity: int,
        retire: Callable[[str], object],
        *,
        token: str = "",
        bot_token: str = "",
    ) -> None:
        self.address = address
        self.bot_name = bot_name
        self.capacity = capacity
        self._retire = retire
        """Retires a bot version in the store (by id)."""
        self._auth = metadata(token) if token else None
        self._given_token = bot_token
        self._channel: grpc.aio.Channel | None = None
        self._bot_token = ""
        self._bot_id = ""
        self._session: asyncio.Task[None] | None = None
        self._fatal = ""
        """Why the session stopped for good (a refused token)."""
        self._opening = asyncio.Lock()
        self._online = asyncio.Event()
        self._stream: grpc.aio.StreamStreamCall[Any, Any] | None = None
        self._writing = asyncio.Lock()
        self._seats: dict[str, _Seat] = {}

    # SeatHost ---------------------------------------------------------------------------

    async def start(self, request: SeatRequest) -> Seated:
        await self._open()
        players = 1 + len(request.opponents)
        try:
            resolved = games.get(request.game).resolve_options(request.options, players)
        except ValueError as error:
            raise SeatRefused(Refusal.BAD, str(error)) from None
        challenge = pb.ChallengeRequest(
            # Drawn, not derived: the match id it makes is public, and says nothing else.
            challenge_id=secrets.token_hex(8),
            bot=self._bot_id,
            opponents=list(request.opponents),
            game=request.game,
            deadline_ms=request.deadline_ms,
            option_values={name: option_message(resolved[name]) for name in request.options},
        )
        try:
            match = await self._authors().Challenge(challenge, metadata=self._auth, timeout=30)
        except grpc.aio.AioRpcError as error:
            refusal = REFUSALS.get(error.code(), Refusal.UNAVAILABLE)
            detail = error.details() or error.code().name
            if refusal == Refusal.UNAVAILABLE:
                detail = f"the referee did not start the game: {detail}"
            raise SeatRefused(refusal, detail) from None
        return Seated(match.match_id, self._bot_id)

    async def seat(self, match_id: str) -> AsyncGenerator[SeatEvent, None]:
        entry = self._seats.setdefault(match_id, _Seat())
        entry.followed = True
        try:
            while True:
                event = await entry.queue.get()
                yield event
                if event.type == SeatEventType.MATCH_END:
                    return
        finally:
            self._seats.pop(match_id, None)

    async def answer(self, match_id: str, request_id: str, action: str) -> None:
        stream = self._stream
        if stream is None:
            raise SeatRefused(
                Refusal.UNAVAILABLE,
                "the seat is reconnecting to the referee, which will ask for the move again",
            )
        message = pb.BotMessage(
            answer=pb.Answer(request_id=request_id, action=cards.Action(text=action))
        )
        try:
            async with self._writing:
                await stream.write(message)
        except (grpc.aio.AioRpcError, asyncio.InvalidStateError) as error:
            raise SeatRefused(
                Refusal.UNAVAILABLE, f"the move did not reach the referee: {error}"
            ) from None

    async def close(self) -> None:
        if self._session is not None:
            self._session.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._session
        if self._channel is not None:
            await self._channel.close(None)

    # The play bot ------------------------------------------------------------------------

    def _chan(self) -> grpc.aio.Channel:
        if self._channel is None:
            self._channel = channel(self.address)
        return self._channel

    def _authors(self) -> pb_grpc.AuthorServiceAsyncStub:
        return pb_grpc.AuthorServiceStub(self._chan())

    async def _open(self) -> None:
        """The play bot's session open, started on first use; SeatRefused if it cannot be."""
        async with self._opening:
            if self._session is None or self._session.done():
                if self._session is not None:
                    self._bot_token = ""  # it stopped for good: get a token again
                await self._prepare()
                self._fatal = ""
                self._session = asyncio.create_task(self._keep_session())
        online = asyncio.create_task(self._online.wait())
        try:
            await asyncio.wait(
                {online, self._session}, timeout=OPEN_TIMEOUT_S, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            online.cancel()
        if self._session.done():
            raise SeatRefused(Refusal.UNAVAILABLE, self._fatal or "the play bot's session ended")
        if not self._online.is_set():
            raise SeatRefused(
                Refusal.UNAVAILABLE,
                f"the play bot cannot reach the referee at {self.address}: try again soon",
            )

    async def _prepare(self) -> None:
        """The play bot's token; challenges off for its name; its version retired."""
        if not self._bot_token:
            self._bot_token, self._bot_id = await self._credentials()
        try:
            await self._authors().SetBot(
                pb.SetBotRequest(bot=self.bot_name, challenges=False),
                metadata=self._auth,
                timeout=10,
            )
        except grpc.aio.AioRpcError as error:
            raise SeatRefused(
                Refusal.UNAVAILABLE,
                f"the web cannot close its play bot {self.bot_name} to challenges: "
                f"{error.details() or error.code().name}",
            ) from None
        if self._bot_id:
            await self._retired(self._bot_id)

    async def _credentials(self) -> tuple[str, str]:
        """The play bot's token and id (an operator's token: the id comes with Welcome)."""
        if self._given_token:
            return self._given_token, ""
        bots = pb_grpc.BotServiceStub(self._chan())
        register = pb.RegisterRequest(name=self.bot_name, version=PLAY_VERSION, games=games.names())
        try:
            reply = await bots.Register(register, metadata=self._auth, timeout=10)
            return reply.token, reply.bot_id
        except grpc.aio.AioRpcError as error:
            if error.code() != S.ALREADY_EXISTS:
                raise SeatRefused(
                    Refusal.UNAVAILABLE,
                    f"the web cannot register its play bot {self.bot_name}: "
                    f"{error.details() or error.code().name}",
                ) from None
        rotate = pb.RotateBotTokenRequest(bot=f"{self.bot_name}@{PLAY_VERSION}")
        try:
            rotated = await self._authors().RotateBotToken(rotate, metadata=self._auth, timeout=10)
        except grpc.aio.AioRpcError as error:
            raise SeatRefused(
                Refusal.UNAVAILABLE,
                f"the web cannot take over its play bot {self.bot_name}@{PLAY_VERSION}: "
                f"{error.details() or error.code().name}",
            ) from None
        return rotated.token, rotated.bot_id

    async def _retired(self, bot_id: str) -> None:
        try:
            await asyncio.to_thread(self._retire, bot_id)
        except NotFound:
            raise SeatRefused(
                Refusal.UNAVAILABLE,
                f"the play bot {bot_id} is not in the web's database: the web and the referee "
                "must share one",
            ) from None

    # The session ---------------------------------------------------------------------------

    async def _keep_session(self) -> None:
        """Hold the session, reconnecting as a bot does, until a token is refused."""
        backoff = Backoff()
        while True:
            try:
                moved = await self._session_once(backoff)
            except SeatRefused as refused:
                self._fatal = refused.detail
                log.error("%s", self._fatal)
                return
            except grpc.aio.AioRpcError as error:
                if error.code() in (S.UNAUTHENTICATED, S.PERMISSION_DENIED):
                    self._fatal = f"the referee refused the play bot's token: {error.details()}"
                    log.error("%s", self._fatal)
                    return
                log.warning(
                    "play bot session with %s ended: %s %s",
                    self.address,
                    error.code().name,
                    error.details(),
                )
                moved = False
            if not moved:
                await asyncio.sleep(backoff.next())

    async def _session_once(self, backoff: Backoff) -> bool:
        """One session, until it ends; True when the referee asks for a new one now."""
        stubs = pb_grpc.BotServiceStub(self._chan())
        # read() and write() on the call, as the SDK's bots do (the stubs know only iterators).
        stream = stubs.Session(metadata=metadata(self._bot_token))  # type: ignore[call-arg]
        try:
            hello = pb.Hello(capacity=self.capacity, client=CLIENT, observation_json=True)
            await stream.write(pb.BotMessage(hello=hello))
            while (message := await stream.read()) is not EOF:
                assert isinstance(message, pb.RefereeMessage)
                kind = message.WhichOneof("kind")
                if kind == "welcome":
                    if not self._bot_id:
                        self._bot_id = message.welcome.bot_id
                        await self._retired(self._bot_id)
                    self._stream = stream
                    self._online.set()
                    backoff.reset()
                elif kind == "reconnect":
                    return True
                elif kind == "error":
                    log.info("referee to the play bot: %s", message.error.message)
                elif kind is not None:
                    self._hear(kind, message)
        finally:
            self._stream = None
            self._online.clear()
            stream.cancel()
        return False

    def _hear(self, kind: str, message: pb.RefereeMessage) -> None:
        """File a message of a match under that match's seat."""
        if kind == "act":
            act = message.act
            self._put(
                act.match_id,
                SeatEventType.ACT,
                request_id=act.request_id,
                game_index=act.game_index,
                seat=act.seat,
                view=json.loads(act.observation.json),
                legal=[action.text for action in act.legal],
                deadline_ms=act.deadline_ms,
                time_bank_ms=act.time_bank_ms,
            )
        elif kind == "game_start":
            start = message.game_start
            self._put(
                start.match_id,
                SeatEventType.START,
                game_index=start.game_index,
                game=start.game,
                seat=start.seat,
                seats=list(start.seats),
            )
        elif kind == "strike":
            strike = message.strike
            self._put(
                strike.match_id,
                SeatEventType.STRIKE,
                game_index=strike.game_index,
                reason=strike.reason,
                strikes=strike.strikes,
                max_strikes=strike.max_strikes,
            )
        elif kind == "forfeit":
            self._put(
                message.forfeit.match_id, SeatEventType.FORFEIT, reason=message.forfeit.reason
            )
        elif kind == "game_end":
            end = message.game_end
            self._put(
                end.match_id,
                SeatEventType.GAME_END,
                game_index=end.game_index,
                seat=end.seat,
                scores=list(end.scores),
                ranks=list(end.ranks),
            )
        elif kind == "match_end":
            result = json.loads(message.match_end.result.json)
            self._put(message.match_end.match_id, SeatEventType.MATCH_END, result=result)

    def _put(self, match_id: str, kind: SeatEventType, **data: object) -> None:
        entry = self._seats.get(match_id)
        if entry is None:
            now = time.monotonic()
            for stale in [
                m for m, s in self._seats.items() if not s.followed and now - s.since > UNCLAIMED_S
            ]:
                del self._seats[stale]
            entry = self._seats[match_id] = _Seat()
        entry.queue.put_nowait(SeatEvent(kind, data))
        if kind == SeatEventType.MATCH_END and not entry.followed:
            del self._seats[match_id]
