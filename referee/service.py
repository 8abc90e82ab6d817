"""The gRPC servicers: thin, they check who is calling and delegate."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import NoReturn, TypeVar

import grpc
from sqlalchemy.exc import DBAPIError

from cardarena_api.metadata import PIN, REPLICAS
from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import arena_pb2_grpc as pb_grpc
from ladder import authors
from ladder.records import MatchStatus
from ladder.store import (
    Conflict,
    Match,
    MatchCancelled,
    MatchRequest,
    NotFound,
    NotOwner,
    QuotaExceeded,
    Quotas,
    Store,
    hash_token,
)
from referee import wire_actions, wire_results
from referee.channels import Answer, RelayUnavailable
from referee.database_errors import database_failed
from referee.decoding import INVALID, Undecodable
from referee.gate import Gatekeeper, TokenKind, brief, peer_host, unavailable
from referee.limits import Allowance, KeyedBuckets, LocalAllowance, TokenBucket
from referee.matches import BadMatch, MatchManager, Starter, Unavailable
from referee.metrics import RefereeMetrics
from referee.public import MAX_WATCHERS_PER_ADDRESS, TooManyWatchers, WatchUnavailable
from referee.sessions import TOKEN_READ_S, Problem, SessionHub
from referee.sessions import Session as BotSession
from referee.settings import RefereeSettings

HELLO_TIMEOUT_S = 10.0
REFUSAL_HELLO_WAIT_S = 1.0
T = TypeVar("T")
"""How long a session refused before it opens may take to send its Hello before the
refusal is sent anyway (a bot sends it at once)."""
EOF: object = grpc.aio.EOF  # type: ignore[attr-defined]  # not in grpc's stubs
"""What `context.read()` returns once the bot has ended its stream."""
MAX_NAME = 64
FLOOD_REFILL_S = 10.0
"""The answer flood allowance refills over this many seconds."""
RATE_WARNING_EVERY_S = 1.0
"""At most one rate-limit Error a second per session (the Errors must not flood too)."""
REPLAY_CACHE_SIZE = 32
"""Finished matches whose Replay message is kept built (the most recently asked for)."""
ASK_AGAIN = "this referee replica is stopping; ask again"
"""UNAVAILABLE's details for a wait that a stopping replica cannot answer: another can."""


UNPUBLISHED = (
    "this referee replica cannot reach the tier's relay now (the arena's fault, not the "
    "caller's): connect again"
)
"""UNAVAILABLE's details for a session that a tier replica could not make known."""


async def _known_here(session: BotSession) -> bool:
    """A lone referee's sessions are all here."""
    return True


class BotService(pb_grpc.BotServiceServicer):
    """Registration and the bots' session streams."""

    def __init__(
        self,
        settings: RefereeSettings,
        store: Store,
        hub: SessionHub,
        gate: Gatekeeper,
        metrics: RefereeMetrics,
        opens: Allowance | None = None,
        replica: str = "",
        replicas: Callable[[], Sequence[str]] = tuple,
        published: Callable[[BotSession], Awaitable[bool]] | None = None,
    ) -> None:
        """`replica` is this replica's name in a tier ("" for a lone referee), and
        `replicas` the tier's live replicas that take sessions, named in `Welcome`;
        `published` says whether the tier knows where a session just opened is (always, alone)."""
        self._settings = settings
        self._store = store
        self._hub = hub
        self._gate = gate
        self._metrics = metrics
        self._replica = replica
        self._replicas = replicas
        self._published = published or _known_here
        # Per bot; in a tier, counted across the replicas (the bot may reach any), or on
        # the replica a session asks for (see Session).
        self._opens = opens or LocalAllowance(settings.session_opens_per_minute)
        self._registrations = KeyedBuckets(settings.registrations_per_minute)

    async def Register(
        self, request: pb.RegisterRequest, context: grpc.aio.ServicerContext[object, object]
    ) -> pb.RegisterReply:
        kinds: tuple[TokenKind, ...] = (TokenKind.ADMIN,)
        if self._settings.registration_is_open:
            kinds = (TokenKind.AUTHOR, TokenKind.ADMIN)
        caller = await self._gate.caller(context, *kinds, call="Register")
        await self._gate.bound(self._registrations, context, "registrations")
        problem = wire_actions.registration_problem(
            request.name, request.version, list(request.games)
        )
        if problem:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, brief(problem))
        quotas = Quotas(self._settings.names_per_author, self._settings.versions_per_name_per_day)
        try:
            bot, token = await asyncio.to_thread(
                self._store.register_bot,
                request.name,
                request.version,
                list(request.games),
                caller.author_id,
                quotas,
            )
        except NotOwner as error:
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, brief(str(error)))
        except QuotaExceeded as error:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, brief(str(error)))
        except Conflict as error:
            await context.abort(grpc.StatusCode.ALREADY_EXISTS, brief(str(error)))
        return pb.RegisterReply(bot_id=bot.id, token=token)

    # The stubs know only the generator form; grpc.aio serves the reader-writer form too.
    async def Session(  # type: ignore[override]
        self,
        request_iterator: AsyncIterator[pb.BotMessage],
        context: grpc.aio.ServicerContext[object, object],
    ) -> None:
        # The reader-writer form (context.read and context.write), not an async generator
        # over `request_iterator`: a message a move each way, and each async generator a
        # message passes through (grpc.aio's request iterator, the responses' generator,
        # referee.decoding's guard around either) is a step of Python per message. What
        # context.read() returns is the guard's lenient parse: an Undecodable comes here.
        found = await self._token_read(self._gate.bot(context))
        if isinstance(found, DBAPIError | TimeoutError):
            await self._kept_out(context, found, hello_read=False)
        if isinstance(found, str):
            await self._refuse(context, grpc.StatusCode.UNAUTHENTICATED, found)
        bot, token = found
        # A session for another replica is refused before it counts as opened, naming the
        # live replicas: the bot connects again to land on the one it asked for.
        pinned = dict(context.invocation_metadata() or ()).get(PIN)
        if pinned is not None and pinned != self._replica:
            context.set_trailing_metadata(((REPLICAS, ",".join(self._replicas())),))
            await self._refuse(
                context,
                grpc.StatusCode.FAILED_PRECONDITION,
                f"this is {f'replica {self._replica}' if self._replica else 'a lone referee'}, "
                f"not replica {brief(str(pinned))}: connect again to reach it",
            )
        # Counted before the Hello, so that sessions which never say it are bounded too.
        # A session that asks for its replica is one of a bot's sessions on every replica
        # (a restart opens one on each): counted on that replica, so the bound holds
        # however many replicas there are; any other on the whole tier.
        where = " on this replica" if pinned else ""
        if not await self._opens.take(f"{bot.id}@{self._replica}" if pinned else bot.id):
            await self._refuse(
                context,
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"bot {bot.id} opened more than {self._settings.session_opens_per_minute} "
                f"sessions in a minute{where}; wait before reconnecting",
            )
        try:
            first = await asyncio.wait_for(context.read(), HELLO_TIMEOUT_S)
        except TimeoutError:
            first = EOF
        if isinstance(first, Undecodable):
            await context.abort(INVALID, first.details)
        if first is EOF:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, "a session starts with a Hello message"
            )
        assert isinstance(first, pb.BotMessage)
        if first.WhichOneof("kind") != "hello" or first.hello.capacity < 1:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, "a session starts with Hello{capacity >= 1}"
            )
        hello = first.hello
        if len(hello.instance) > MAX_NAME:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"Hello.instance is at most {MAX_NAME} characters, got {len(hello.instance)}",
            )
        capacity = min(hello.capacity, self._settings.max_capacity)
        credential = hash_token(token)
        session = self._hub.open(
            bot.id, capacity, hello.observation_json, credential, hello.instance
        )
        # From here every way out closes the session, a bot that went away meanwhile (its
        # call cancelled at any await) among them: a session left open would be asked for
        # moves nobody reads.
        reader: asyncio.Task[tuple[grpc.StatusCode, str] | None] | None = None
        try:
            current = await self._token_read(asyncio.to_thread(self._store.bot_by_token, token))
            if isinstance(current, DBAPIError | TimeoutError):
                # Whether the token was rotated meanwhile cannot be told: not opened after all.
                self._hub.close(session)
                await self._kept_out(context, current, hello_read=True)
            if current is None:
                # Rotated while this session opened: the rotation's revoke came before it.
                self._hub.revoke(bot.id, credential)
            if not await self._published(session) and not session.closed:
                # The other replicas would find the bot nowhere and strike it in their
                # matches: it connects again, to a replica that reaches the relay. (One
                # closed meanwhile was replaced, or its bot left: nobody was refused.)
                self._hub.close(session)
                self._hub.refused()
                await unavailable(context, UNPUBLISHED)
            self._metrics.bots_connected.set(len(self._hub.connected()))
            reader = asyncio.create_task(self._read(context, session))
            reader.add_done_callback(lambda _: self._hub.close(session))
            welcome = pb.Welcome(
                bot_id=bot.id,
                session_id=session.id,
                capacity=capacity,
                replica=self._replica,
                replicas=self._replicas(),
            )
            await context.write(pb.RefereeMessage(welcome=welcome))
            while (message := await session.outbox.get()) is not None:
                await context.write(
                    wire_results.referee_bytes(message, session.observation_json, time.time())
                )
            finished = reader.done() and not reader.cancelled() and reader.exception() is None
            ended = reader.result() if finished else None
            if ended is not None:
                code, details = ended
                await context.abort(code, details)
        finally:
            if reader is not None:
                reader.cancel()
            self._hub.close(session)
            self._metrics.bots_connected.set(len(self._hub.connected()))
            self._metrics.disconnects.inc()

    async def _token_read(self, read: Awaitable[T]) -> T | DBAPIError | TimeoutError:
        """What `read`, a look-up of a session's token, returns, or how the database failed
        it (in TOKEN_READ_S at most). A failure tells the referee that a session was
        refused for the arena's fault: the bot it was is not known, and a seat that is
        away is no bot's fault meanwhile (`sessions.Absence`)."""
        try:
            return await asyncio.wait_for(read, TOKEN_READ_S)
        except (DBAPIError, TimeoutError) as error:
            self._hub.refused()
            return error

    async def _kept_out(
        self,
        context: grpc.aio.ServicerContext[object, object],
        error: DBAPIError | TimeoutError,
        *,
        hello_read: bool,
    ) -> NoReturn:
        """End a session whose token the database could not read."""
        if not hello_read:
            # As `_refuse` does: after the Hello, the status reaches the bot intact.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(context.read(), REFUSAL_HELLO_WAIT_S)
        await database_failed(context, "Session", error)
        raise AssertionError("abort returns only by raising")

    async def _refuse(
        self,
        context: grpc.aio.ServicerContext[object, object],
        code: grpc.StatusCode,
        details: str,
    ) -> NoReturn:
        """End a session before it opens, once its Hello is in (or after a moment): a
        status sent while the bot's write of its Hello is still under way reached about 1
        bot in 50 as the transport's INTERNAL, without the code and trailing metadata it
        was refused with. A caller with a wrong token waits too: it is most often an
        author's mistake, and the one line says which; the wait costs the referee no
        work, and a caller that sends nothing is held at most this moment."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(context.read(), REFUSAL_HELLO_WAIT_S)
        await self._gate.refuse(context, code, details)

    async def _read(
        self, context: grpc.aio.ServicerContext[object, object], session: BotSession
    ) -> tuple[grpc.StatusCode, str] | None:
        """Deliver the bot's answers to the requests waiting for them.

        Answers to open requests go through unthrottled. Anything else is a
        stray message: it gets an Error, at most `stray_messages_per_second`
        of them (a token bucket per session); beyond that they are dropped,
        and a session that keeps flooding past `flood_limit` dropped messages
        is ended. Returns None when the bot ends its stream, or the status to
        end the stream with (flooding, or a message that does not parse).
        """
        rate = self._settings.stray_messages_per_second
        flood_limit = self._settings.flood_limit
        strays = TokenBucket(rate, rate)
        flood = TokenBucket(flood_limit / FLOOD_REFILL_S, flood_limit)
        warn_after = 0.0
        while (message := await context.read()) is not EOF:
            if isinstance(message, Undecodable):
                return INVALID, message.details
            assert isinstance(message, pb.BotMessage)
            problem = self._deliver(message, session)
            if problem is None:
                continue
            if strays.take():
                session.send(problem)
                continue
            if flood_limit and not flood.take():
                return (
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"flooding: more than {flood_limit} messages dropped over the bound of "
                    f"{rate:g} stray messages per second",
                )
            now = time.monotonic()
            if now >= warn_after:
                warn_after = now + RATE_WARNING_EVERY_S
                session.send(
                    Problem(
                        f"rate limit: at most {rate:g} messages per second that answer "
                        "no open request; messages over it are dropped"
                    )
                )
        return None

    @staticmethod
    def _deliver(message: pb.BotMessage, session: BotSession) -> Problem | None:
        """Hand one message to the request it answers; else what is wrong with it."""
        if message.WhichOneof("kind") != "answer":
            return Problem("after Hello, a bot sends only Answer messages")
        answer = message.answer
        choice = answer.WhichOneof("choice")
        if choice == "index":
            delivered = session.answer(Answer(answer.request_id, index=answer.index))
        elif choice == "action":
            seat = session.seats.get(answer.request_id)
            text = "" if seat is None else wire_actions.action_text(answer.action, seat)
            delivered = session.answer(Answer(answer.request_id, action=text))
        else:
            delivered = session.answer(Answer(answer.request_id))
        if delivered:
            return None
        return Problem(f"no open request {answer.request_id!r} for this bot", answer.request_id)


class RefereeService(pb_grpc.RefereeServiceServicer):
    """Operator calls: start, follow and fetch matches."""

    def __init__(
        self,
        settings: RefereeSettings,
        store: Store,
        manager: MatchManager,
        gate: Gatekeeper,
        start: Starter | None = None,
        stopped: asyncio.Event | None = None,
    ) -> None:
        self._settings = settings
        self._store = store
        self._manager = manager
        self._gate = gate
        self._start = manager.start if start is None else start
        self._stopped = asyncio.Event() if stopped is None else stopped
        """Set by a shutdown once this referee's matches have finished or been aborted."""
        self._reads = KeyedBuckets(settings.reads_per_minute)
        # A finished match's replay never changes, and building one (decoding the stored
        # logs, encoding every event) is the dearest call anyone may make: built once.
        self._finished_replay = functools.lru_cache(maxsize=REPLAY_CACHE_SIZE)(self._replay)
        self._public_streams: Counter[str] = Counter()
        """Public streams open now, per client address."""

    async def StartMatch(
        self, request: pb.StartMatchRequest, context: grpc.aio.ServicerContext[object, object]
    ) -> pb.Match:
        await self._gate.require_admin(context)
        return await self.message(await self.start(request, context))

    async def start(
        self,
        request: pb.StartMatchRequest,
        context: grpc.aio.ServicerContext[object, object],
        challenger: str | None = None,
    ) -> Match:
        """Start the match `request` asks for, or find it by its id, with StartMatch's
        checks and refusals; `challenger`: the author whose challenge it is (unrated)."""
        if not request.match_id or len(request.match_id) > 64:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, "match_id must be 1..64 characters"
            )
        try:
            seed = wire_actions.requested_seed(request)
            # Texts and typed values alike: the game's resolve_options checks them when
            # the match is started, as it does for the texts alone.
            options = wire_actions.requested_options(request)
        except ValueError as error:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, brief(str(error)))
        match_request = MatchRequest(
            id=request.match_id,
            game=request.game,
            players=request.players,
            bot_ids=tuple(request.bot_ids),
            seed=seed,
            options=options,
            duplicate=request.duplicate,
            deadline_ms=request.deadline_ms or self._settings.default_deadline_ms,
            challenger=challenger,
        )
        try:
            return await self._start(match_request)
        except Unavailable as error:
            await unavailable(context, str(error))
        except BadMatch as error:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, brief(str(error)))
        except Conflict as error:
            await context.abort(grpc.StatusCode.ALREADY_EXISTS, brief(str(error)))
        except MatchCancelled as error:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, brief(str(error)))
        except QuotaExceeded as error:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, brief(str(error)))
        raise AssertionError("abort returns only by raising")

    async def message(self, match: Match) -> pb.Match:
        """The match as a message; a challenge's names the challenging author."""
        challenger = ""
        if match.request.challenger is not None:
            author = await asyncio.to_thread(
                authors.find_author, self._store, match.request.challenger
            )
            challenger = author.name
        return wire_results.match_message(match, challenger)

    async def GetMatch(
        self, request: pb.GetMatchRequest, context: grpc.aio.ServicerContext[object, object]
    ) -> pb.Match:
        await self._gate.bound(self._reads, context, "match reads")
        try:
            if request.wait:
                match = await self.wait(request.match_id, context)
            else:
                match = await asyncio.to_thread(self._store.match, request.match_id)
        except NotFound as error:
            await context.abort(grpc.StatusCode.NOT_FOUND, brief(str(error)))
        return await self.message(match)

    async def wait(self, match_id: str, context: grpc.aio.ServicerContext[object, object]) -> Match:
        """The match once it no longer runs.

        A wait still open when a shutdown has stopped this referee's matches is for a
        match another replica plays (or nobody, its replica dead): it gets what the
        store says or, while the match runs, UNAVAILABLE ASK_AGAIN, never the
        cancellation of the calls left when the server stops.
        """
        waiting = asyncio.ensure_future(self._manager.wait(match_id))
        stopped = asyncio.ensure_future(self._stopped.wait())
        try:
            done, _ = await asyncio.wait((waiting, stopped), return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiting.cancel()
            stopped.cancel()
        if waiting in done:
            return waiting.result()
        match = await asyncio.to_thread(self._store.match, match_id)
        if match.status == MatchStatus.RUNNING:
            await unavailable(context, ASK_AGAIN)
        return match

    async def WatchMatch(
        self, request: pb.GetMatchRequest, context: grpc.aio.ServicerContext[object, object]
    ) -> AsyncIterator[pb.MatchEvent]:
        await self._gate.require_admin(context)
        await self._gate.bound(self._reads, context, "match reads")
        try:
            async for event in self._manager.watch(request.match_id):
                yield wire_results.event_message(event)
        except NotFound as error:
            await context.abort(grpc.StatusCode.NOT_FOUND, brief(str(error)))

    async def WatchPublic(
        self, request: pb.GetMatchRequest, context: grpc.aio.ServicerContext[object, object]
    ) -> AsyncIterator[pb.MatchEvent]:
        # Anyone may watch: the stream carries only what every seat sees (referee.public).
        await self._gate.bound(self._reads, context, "match reads")
        address = peer_host(context)
        if (
            not self._gate.exempt(context)
            and self._public_streams[address] >= MAX_WATCHERS_PER_ADDRESS
        ):
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"{MAX_WATCHERS_PER_ADDRESS} public streams from this address are open already",
            )
        self._public_streams[address] += 1
        try:
            async for event in self._manager.watch_public(request.match_id):
                yield wire_results.event_message(event)
        except NotFound as error:
            await context.abort(grpc.StatusCode.NOT_FOUND, brief(str(error)))
        except TooManyWatchers as error:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, brief(str(error)))
        except WatchUnavailable as error:
            await unavailable(context, str(error))
        finally:
            self._public_streams[address] -= 1
            if not self._public_streams[address]:
                del self._public_streams[address]

    async def GetReplay(
        self, request: pb.GetMatchRequest, context: grpc.aio.ServicerContext[object, object]
    ) -> pb.Replay:
        await self._gate.bound(self._reads, context, "match reads")
        try:
            match = await asyncio.to_thread(self._store.match, request.match_id)
            if match.status == MatchStatus.FINISHED:
                return await asyncio.to_thread(self._finished_replay, request.match_id)
            # Before the end a replay would show hands still in play.
            await self._gate.require_admin(context)
            replays = await asyncio.to_thread(self._store.replays, request.match_id)
        except NotFound as error:
            await context.abort(grpc.StatusCode.NOT_FOUND, brief(str(error)))
        return wire_results.replay_message(request.match_id, replays)

    def _replay(self, match_id: str) -> pb.Replay:
        return wire_results.replay_message(match_id, self._store.replays(match_id))

    async def ListSessions(
        self, request: pb.ListSessionsRequest, context: grpc.aio.ServicerContext[object, object]
    ) -> pb.ListSessionsReply:
        await self._gate.require_admin(context)
        try:
            connected = await self._manager.connected()
        except RelayUnavailable as error:
            await unavailable(context, str(error))
        known = await asyncio.to_thread(self._store.bots_by_id, [c.bot_id for c in connected])
        sessions = []
        for c in connected:
            bot = known.get(c.bot_id)
            sessions.append(
                pb.SessionInfo(
                    bot_id=c.bot_id,
                    capacity=c.capacity,
                    busy=c.busy,
                    replica=c.replica,
                    name=bot.name if bot else "",
                    version=bot.version if bot else "",
                )
            )
        return pb.ListSessionsReply(sessions=sessions)
