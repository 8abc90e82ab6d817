"""Connect a bot to a referee: register it, then play every match it is given.

    from bots import Bot, Turn
    from bots.sdk import run

    class First(Bot):
        def act(self, turn: Turn) -> str:
            return turn.legal[0]

    run(First(), "127.0.0.1:50051", token)

`run` holds one session stream (against a referee tier, one on each of its
replicas: `BotRunner`), answers Act requests for up to `capacity`
matches at once, and reconnects when the stream drops: at once when the
referee asks it to (a replica that drains, in a rolling update: the load
balancer gives the new session another replica), and with a back-off that is
quick at first (`RETRY_DELAYS_S`) after a failure, so that a bot is back well
within the referee's grace period. A bad token stops it at once. `act` runs on the event loop: Python
bots gain nothing from threads, and a thread hand-off per move would cost
more than a simple bot's whole answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import random
import time
import traceback
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import grpc

from bots.base import Bot, Turn
from bots.observations import observation_view
from cardarena_api import event_loop
from cardarena_api.metadata import PIN, REPLICAS, trailing_value
from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import arena_pb2_grpc as pb_grpc
from cardarena_api.v1 import cards_pb2 as cards

log = logging.getLogger(__name__)

EOF = grpc.aio.EOF  # type: ignore[attr-defined]
"""What a call's read() returns at the end of the stream (missing from the type stubs)."""

CLIENT = "card-arena-python-sdk/0.1"
LANDINGS_PER_REPLICA = 4
"""How many connections in a row a session for one replica may land on others, per
replica of the tier, before it backs off (each lands where the load balancer chooses)."""
ROUNDS_TO_GIVE_UP = 3
"""Rounds of such landings in a row after which that replica is given up: a load
balancer that spreads connections misses one replica in 4 tries each of N replicas about
once in 50, three rounds in a row about once in 160,000; one that keeps a client on one
replica never lets it through."""

RETRY_DELAYS_S = (0.1, 0.2, 0.5, 1.0, 2.0, 3.0)
"""Pauses before the retries after a session failed: quick at first, because a drop or a
drain is usually over in a moment and the bot's seats wait only the grace period (10 s by
default); then every 3 s (below the referee's bound of 30 session opens a minute)."""
RETRY_JITTER = 0.2
"""Each pause is scaled by a random factor within 1 +- this, so that the bots of a replica
that went away do not all come back at the same instant."""


class Backoff:
    """The pauses between a bot's attempts to open a session.

    Consecutive failures wait `delays` in turn (the last one from then on), each
    jittered; a session that opened (it got its Welcome) starts them again, so a
    bot that ran for days and lost its stream is back as quickly as a new one.
    """

    def __init__(
        self,
        delays: tuple[float, ...] = RETRY_DELAYS_S,
        jitter: float = RETRY_JITTER,
        draw: Callable[[], float] = random.random,
    ) -> None:
        self._delays = delays
        self._jitter = jitter
        self._draw = draw
        self._failures = 0

    def reset(self) -> None:
        """A session was open: the next failure starts the quick pauses again."""
        self._failures = 0

    def next(self) -> float:
        """The pause before the next attempt, after one more failure."""
        delay = self._delays[min(self._failures, len(self._delays) - 1)]
        self._failures += 1
        return delay * (1 + self._jitter * (2 * self._draw() - 1))


class AuthError(RuntimeError):
    """The referee refused the bot's token."""


def metadata(token: str) -> tuple[tuple[str, str], ...]:
    """Call metadata carrying a token (a bot's, an author's or the admin's)."""
    return (("authorization", f"Bearer {token}"),)


def channel(address: str, tls_ca: bytes | None = None) -> grpc.aio.Channel:
    """A gRPC channel to the referee (TLS when a CA certificate is given)."""
    options = [
        ("grpc.keepalive_time_ms", 20_000),
        # A connection of its own, not one shared by every channel of the process to
        # the same address: bots run many to a process, and a tier's load balancer
        # spreads them over the referee replicas by connection.
        ("grpc.use_local_subchannel_pool", 1),
    ]
    if tls_ca is not None:
        return grpc.aio.secure_channel(
            address, grpc.ssl_channel_credentials(tls_ca), options=options
        )
    return grpc.aio.insecure_channel(address, options=options)


async def register(
    address: str,
    name: str,
    version: str,
    games: list[str],
    token: str | None = None,
) -> pb.RegisterReply:
    """Register a bot version with an author's token (or the admin token); the reply
    holds its id and its token. A referee without an admin token needs none."""
    async with channel(address) as chan:
        stub = pb_grpc.BotServiceStub(chan)
        return await stub.Register(
            pb.RegisterRequest(name=name, version=version, games=games),
            metadata=metadata(token) if token else None,
            timeout=10,
        )


def turn_from(act: pb.Act) -> Turn:
    """The domain object a bot gets for one Act request."""
    return Turn(
        game=act.game,
        seat=act.seat,
        players=act.observation.players,
        view=functools.partial(observation_view, act.observation),
        legal=tuple(action.text for action in act.legal),
        # A referee always sets a clock; 0 left of the move's own time is still a clock.
        deadline_s=act.deadline_ms / 1000,
        time_bank_s=act.time_bank_ms / 1000,
        sent_at=act.sent_at_ms / 1000,
    )


def match_end_line(end: pb.MatchEnd, bot_id: str) -> str:
    """One line on how a match ended for `bot_id`: place, score, strikes, forfeit and why."""
    result = end.result
    players = len(result.entries)
    mine = [entry for entry in result.entries if entry.bot_id == bot_id]
    if not mine:
        return f"match {end.match_id} ended: scores {', '.join(map(str, result.scores))}"
    seats = []
    for entry in mine:
        strikes = f"{entry.strikes} strike{'' if entry.strikes == 1 else 's'}"
        forfeit = f", forfeited: {entry.forfeit_reason}" if entry.forfeited else ""
        seats.append(f"place {entry.rank} of {players}, score {entry.score}, {strikes}{forfeit}")
    return f"match {end.match_id} ended: {'; '.join(seats)}"


class RaisedLog:
    """A bot's exceptions in the log: the first of each kind with its traceback, then only
    how often it came back, at most once every `every_s` (a bot that raises on every move
    would otherwise bury the log in identical tracebacks)."""

    def __init__(self, every_s: float = 10.0, clock: Callable[[], float] = time.monotonic):
        self._every_s = every_s
        self._clock = clock
        self._counts: dict[tuple[str, str, str], int] = {}
        self._next_report: dict[tuple[str, str, str], float] = {}

    def record(self, error: Exception, where: str) -> None:
        """Log `error`, raised by the bot on `where` (a match and seat)."""
        frames = traceback.extract_tb(error.__traceback__)
        origin = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else ""
        key = (type(error).__name__, str(error), origin)
        count = self._counts[key] = self._counts.get(key, 0) + 1
        now = self._clock()
        if count == 1:
            log.error(
                "bot raised on %s; answering the first legal action",
                where,
                exc_info=(type(error), error, error.__traceback__),
            )
            self._next_report[key] = now + self._every_s
        elif now >= self._next_report[key]:
            self._next_report[key] = now + self._every_s
            log.error(
                "bot raised %s: %s again, %d times so far (traceback above, at its first)",
                key[0],
                key[1],
                count,
            )


@dataclass
class SessionStats:
    """What a running bot has done, for logs and tests."""

    sessions: int = 0
    answered: int = 0
    strikes: list[str] = field(default_factory=list)
    matches_ended: int = 0
    moves: int = 0
    """Sessions ended because the referee asked the bot to reconnect elsewhere."""


@dataclass
class Attempt:
    """One attempt to hold a session: whether it opened."""

    opened: bool = False


class BotRunner:
    """Runs one bot against one referee until stopped.

    In a tier (its Welcome names the replicas), it keeps one session on each
    replica, all of one `instance`: a match then finds every one of its bots on
    the replica that plays it, and no move is relayed. Each session is kept by a
    keeper task of its own; a session for a given replica asks for it by the
    metadata `arena-replica`, and one that lands on another (the load balancer
    chooses) is refused there and tried again on a new connection; a replica
    that several rounds of connections never reach is given up until the
    replicas named change.
    """

    def __init__(
        self,
        bot: Bot,
        address: str,
        token: str,
        capacity: int = 1,
        tls_ca: bytes | None = None,
        on_message: Callable[[pb.RefereeMessage], None] | None = None,
        every_replica: bool = True,
    ) -> None:
        """`every_replica` False keeps one session only, wherever the load balancer puts
        it (in a tier, the moves of its seats in matches played elsewhere are relayed)."""
        self.bot = bot
        self.address = address
        self.token = token
        self.capacity = capacity
        self.tls_ca = tls_ca
        self.stats = SessionStats()
        self.instance = uuid.uuid4().hex if every_replica else ""
        """Names this process's sessions: the tier lets them stand side by side."""
        self._on_message = on_message
        self._stop = asyncio.Event()
        self._bot_id = ""
        self._raised = RaisedLog()
        self._max_backoff_s = RETRY_DELAYS_S[-1]
        self._replicas: tuple[str, ...] = ()
        """The tier's replicas that take sessions, as the latest Welcome named them."""
        self._kept: dict[str, asyncio.Task[None]] = {}
        """The keeper holding (or opening) the session on each replica."""
        self._keepers: set[asyncio.Task[None]] = set()
        self._refused: AuthError | None = None

    def stop(self) -> None:
        """Ask the runner to end after the current sessions."""
        self._stop.set()

    async def run(self, max_backoff_s: float = RETRY_DELAYS_S[-1]) -> None:
        """Keep a session open (in a tier, one on each replica), reconnecting with
        `Backoff` (pauses of at most `max_backoff_s`), until stopped.

        Raises AuthError when the referee refuses the token.
        """
        self._max_backoff_s = max_backoff_s
        self._start_keeper(None)
        try:
            while self._keepers:
                done, _ = await asyncio.wait(
                    list(self._keepers), return_when=asyncio.FIRST_COMPLETED
                )
                for task in done:
                    if not task.cancelled() and (error := task.exception()) is not None:
                        raise error
        finally:
            for task in self._keepers:
                task.cancel()
            await asyncio.gather(*self._keepers, return_exceptions=True)
        if self._refused is not None:
            raise self._refused

    def _start_keeper(self, replica: str | None) -> None:
        task = asyncio.create_task(self._keeper(replica))
        self._keepers.add(task)
        task.add_done_callback(self._keepers.discard)
        if replica is not None:
            self._kept[replica] = task

    async def _keeper(self, replica: str | None) -> None:
        try:
            await self._keep(replica)
        except AuthError as error:
            self._refused = error
            self.stop()
        finally:
            for name, task in list(self._kept.items()):
                if task is asyncio.current_task():
                    del self._kept[name]

    def _pin(self, replica: str | None) -> str | None:
        """The replica this keeper keeps a session on now (None: any)."""
        me = asyncio.current_task()
        held = next((name for name, task in self._kept.items() if task is me), None)
        return held if held is not None else replica

    async def _keep(self, replica: str | None) -> None:
        """Keep a session on `replica` (None: wherever the load balancer puts it), while
        that replica is in the tier; the last keeper then keeps one anywhere."""
        backoff = Backoff(tuple(min(d, self._max_backoff_s) for d in RETRY_DELAYS_S))
        landings = rounds = 0
        while not self._stop.is_set():
            pin = self._pin(replica)
            if pin is not None and self._replicas and pin not in self._replicas:
                if self._unpinned(pin):
                    return  # its replica left the tier; the others are kept
                pin = replica = None
            failed: grpc.aio.AioRpcError | None = None
            attempt = Attempt()
            try:
                moved = await self._session(pin, attempt)
            except AuthError:
                raise
            except grpc.aio.AioRpcError as error:
                failed = error
                moved = False
            if attempt.opened:
                backoff.reset()
                landings = rounds = 0
            if failed is not None and failed.code() == grpc.StatusCode.FAILED_PRECONDITION:
                # Landed on another replica than the one asked for: a new connection
                # lands elsewhere. Bounded, then the back-off as for any failure. The
                # refusal names the live replicas: one that died or drains is given up.
                named = trailing_value(failed, REPLICAS)
                self._replicas = tuple(named.split(",")) if named else self._replicas
                landings += 1
                if landings <= LANDINGS_PER_REPLICA * max(1, len(self._replicas)):
                    continue
                landings = 0
                rounds += 1
                if pin is not None and rounds >= ROUNDS_TO_GIVE_UP:
                    # Its address never leads there: the matches there relay this bot's
                    # moves. A new set of replicas (a Welcome, a Replicas) tries again.
                    log.warning(
                        "replica %s not reached through %s in %d rounds of connections; "
                        "giving it up (its matches relay this bot's moves)",
                        pin,
                        self.address,
                        rounds,
                    )
                    if self._unpinned(pin):
                        return
                    replica = None
                    rounds = 0
                    continue
            if moved:
                continue
            if self._stop.is_set():
                break
            delay = backoff.next()
            if failed is not None:
                what = failed.details() or failed.code().name
                log.warning(
                    "session with the referee at %s%s ended: %s %s; retrying in %.1f s",
                    self.address,
                    f" (replica {pin})" if pin else "",
                    failed.code().name,
                    "" if what == failed.code().name else what,
                    delay,
                )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), delay)

    def _unpinned(self, replica: str) -> bool:
        """This keeper no longer keeps a session on `replica`: True if it ends (another
        keeps one), False if it is the last one and keeps a session anywhere."""
        if self._kept.get(replica) is asyncio.current_task():
            del self._kept[replica]
        return bool(self._kept)

    async def _session(self, replica: str | None, attempt: Attempt) -> bool:
        """One session (on `replica` if named), until it ends; True if the referee asked
        for a new one now. `attempt` says whether it opened (got its Welcome)."""
        pinned = () if replica is None else ((PIN, replica),)
        async with channel(self.address, self.tls_ca) as chan:
            # No request iterator: read() and write() on the call directly, the cheapest
            # path through grpc.aio (no queue and no generator per answer).
            # The stubs know only the iterator form.
            stream = pb_grpc.BotServiceStub(chan).Session(  # type: ignore[call-arg]
                metadata=metadata(self.token) + pinned
            )
            stopper = asyncio.create_task(self._stop.wait())
            stopper.add_done_callback(lambda _: stream.cancel())
            try:
                hello = pb.Hello(capacity=self.capacity, client=CLIENT, instance=self.instance)
                opening = asyncio.create_task(stream.write(pb.BotMessage(hello=hello)))
                # grpc.aio's write on a call cancelled before its metadata went out (a stop
                # while connecting) never returns: the Hello waits on the stop as well.
                await asyncio.wait((opening, stopper), return_when=asyncio.FIRST_COMPLETED)
                if not opening.done():
                    opening.cancel()
                    await asyncio.gather(opening, return_exceptions=True)
                    return False
                await opening
                while (message := await stream.read()) is not EOF:
                    assert isinstance(message, pb.RefereeMessage)
                    self._seen(message)
                    kind = message.WhichOneof("kind")
                    if kind == "act":
                        await stream.write(self._answer(message.act))
                    elif kind == "welcome":
                        attempt.opened = True
                        self._named(message.welcome.replicas, message.welcome.replica)
                    elif kind == "replicas":
                        self._named(message.replicas.names)
                    elif kind == "reconnect":
                        log.info("referee asks to reconnect: %s", message.reconnect.reason)
                        self.stats.moves += 1
                        self._left(self._pin(replica))
                        stream.cancel()
                        return True
            except grpc.aio.AioRpcError as error:
                if error.code() == grpc.StatusCode.UNAUTHENTICATED:
                    raise AuthError(error.details() or "bad token") from None
                if error.code() != grpc.StatusCode.CANCELLED or not self._stop.is_set():
                    raise
            except asyncio.CancelledError:
                # grpc.aio raises CancelledError for a call that stop() cancelled.
                task = asyncio.current_task()
                if not self._stop.is_set() or (task is not None and task.cancelling()):
                    raise
            finally:
                stopper.cancel()
        return False

    def _named(self, replicas: Sequence[str], here: str = "") -> None:
        """The tier named its replicas (a Welcome from `here`, or a change): keep a session
        on each."""
        if not replicas or not self.instance:
            return
        self._replicas = tuple(replicas)
        me = asyncio.current_task()
        assert me is not None
        if here and here not in self._kept:
            self._kept[here] = me
        for name in self._replicas:
            if name not in self._kept and not self._stop.is_set():
                self._start_keeper(name)

    def _left(self, replica: str | None) -> None:
        """The referee asked this session to move: its replica drains, and takes none."""
        if replica is not None and replica in self._replicas:
            self._replicas = tuple(name for name in self._replicas if name != replica)

    def _seen(self, message: pb.RefereeMessage) -> None:
        kind = message.WhichOneof("kind")
        if kind == "welcome":
            self.stats.sessions += 1
            self._bot_id = message.welcome.bot_id
            log.info(
                "session %s open for bot %s", message.welcome.session_id, message.welcome.bot_id
            )
        elif kind == "strike":
            self.stats.strikes.append(message.strike.reason)
            log.warning("strike in match %s: %s", message.strike.match_id, message.strike.reason)
        elif kind == "match_end":
            self.stats.matches_ended += 1
            log.info("%s", match_end_line(message.match_end, self._bot_id))
        elif kind == "forfeit":
            log.warning("forfeited match %s: %s", message.forfeit.match_id, message.forfeit.reason)
        elif kind == "error":
            log.warning("referee: %s", message.error.message)
        if self._on_message is not None:
            self._on_message(message)

    def _answer(self, act: pb.Act) -> pb.BotMessage:
        turn = turn_from(act)
        try:
            choice = self.bot.act(turn)
        except Exception as error:
            self._raised.record(error, f"match {act.match_id} seat {act.seat}")
            choice = turn.legal[0]
        self.stats.answered += 1
        answer = pb.Answer(request_id=act.request_id, action=cards.Action(text=str(choice)))
        return pb.BotMessage(answer=answer)


def run(bot: Bot, address: str, token: str, capacity: int = 1) -> None:
    """Play for `bot` on the referee at `address` until interrupted."""
    event_loop.run(BotRunner(bot, address, token, capacity).run())
