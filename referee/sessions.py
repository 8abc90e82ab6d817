"""Live bot sessions, and the seat channel that talks through them.

A bot holds one session (one bidirectional stream) for all its matches. A
new session of the same bot replaces the old one, and requests that were
waiting on the old one are sent again on the new one: that is how a bot
that reconnects within the grace period resumes its seats.
"""

from __future__ import annotations

import asyncio
import math
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace

from ladder.records import Notice
from referee.channels import ActRequest, Answer, SeatGone, SeatTimeout, SessionsRefused
from referee.loop_watch import STALL_S, LoopWatch


@dataclass(frozen=True)
class Problem:
    """Something the bot sent that the referee could not use, and why."""

    message: str
    request_id: str = ""


@dataclass(frozen=True)
class Reconnect:
    """This replica is draining: the bot should open a session elsewhere now."""

    reason: str


@dataclass(frozen=True)
class Replicas:
    """The tier's live replicas that take sessions changed: these are they now."""

    names: tuple[str, ...]


Outgoing = ActRequest | Notice | Problem | Reconnect | Replicas

REVOKED = "this bot's token was rotated: the session ends, and the old token is refused"
"""What the referee sends down a session: a request, a notice, a problem, or a move."""


class SessionClosed(Exception):
    """The session ended while a request was waiting on it."""


EXTENSIONS = 3
"""How many times one deadline waits again for a stalled referee: a loop late by more than
STALL_S turn after turn is overloaded, and a bot's move is not held open for good."""


TOKEN_READ_S = 1.0
"""How long a session's opening waits for the database to read its token (a look-up by
an index: milliseconds). A database that does not answer in this time (a network that
drops its packets, a stopped host) is unavailable: the session is refused as when it
fails at once, and the bot retries."""


class Deadline:
    """The timer of a move's deadline, which does not count the time the referee did not run.

    A stall of the event loop (`referee.loop_watch`) during the move is the referee's
    time: it held up the Act's write or the answer's read, or made this timer late, in
    the same turn of the loop as the reads of what came in meanwhile and before
    grpc.aio's tasks hand on an answer that came in time (a stop of the process would be
    every waiting bot's timeout). So a timer due after a stall waits again, as long as the
    stall not yet forgiven (at most the move's own time), for what came to be read; and
    `bot_s` leaves every stall out.
    """

    __slots__ = (
        "_args",
        "_expire",
        "_extended",
        "_forgiven_s",
        "_handle",
        "_loop",
        "_started",
        "_timeout_s",
        "_watch",
    )

    def __init__(self, timeout_s: float, expire: Callable[..., None], *args: object) -> None:
        self._loop = asyncio.get_running_loop()
        self._watch = LoopWatch.of(self._loop)
        self._timeout_s = timeout_s
        self._expire = expire
        self._args = args
        self._started = self._loop.time()
        self._handle = self._loop.call_later(timeout_s, self._due)
        self._extended = 0
        self._forgiven_s = 0.0

    def _due(self) -> None:
        stalled_s = self.stalled_s()
        unforgiven_s = stalled_s - self._forgiven_s
        if unforgiven_s > STALL_S and self._extended < EXTENSIONS:
            self._extended += 1
            self._forgiven_s = stalled_s
            self._handle = self._loop.call_later(min(unforgiven_s, self._timeout_s), self._due)
            return
        self._expire(*self._args)

    def cancel(self) -> None:
        self._handle.cancel()

    def stalled_s(self) -> float:
        """How long the loop stood still since the move began."""
        return self._watch.stalled_s(self._started)

    def bot_s(self, stalled_s: float | None = None) -> float:
        """The bot's time so far: since the timer started, less the loop's stalls
        (`stalled_s`, when the caller has read them already)."""
        if stalled_s is None:
            stalled_s = self.stalled_s()
        return max(0.0, self._loop.time() - self._started - stalled_s)


@dataclass(eq=False)
class Session:
    """One bot's open stream: its outbox and the requests awaiting answers."""

    bot_id: str
    capacity: int
    observation_json: bool = False
    """The bot asked for each observation's JSON besides its typed form."""
    credential: str = ""
    """The hash of the token the session was opened with (a rotation ends it)."""
    instance: str = ""
    """`Hello.instance`: the bot's process, which may hold a session on every replica."""
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    outbox: asyncio.Queue[Outgoing | None] = field(default_factory=asyncio.Queue)
    pending: dict[str, asyncio.Future[Answer]] = field(default_factory=dict)
    seats: dict[str, int] = field(default_factory=dict)
    """The seat each pending request asks for, to read a typed answer against."""
    closed: bool = False

    def send(self, message: Outgoing) -> None:
        """Queue a message for the bot (dropped once closed)."""
        if not self.closed:
            self.outbox.put_nowait(message)

    def request(self, request: ActRequest) -> asyncio.Future[Answer]:
        """Send an Act request; the future resolves with the bot's answer."""
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self.pending[request.request_id] = future
        self.seats[request.request_id] = request.seat
        self.send(request)
        return future

    def forget(self, request_id: str) -> asyncio.Future[Answer] | None:
        """Stop waiting for `request_id`; its future, if it was pending."""
        self.seats.pop(request_id, None)
        return self.pending.pop(request_id, None)

    async def ask(self, request: ActRequest, timeout_s: float) -> Answer | None:
        """The bot's answer; None if the session closed first (the bot may be back elsewhere).

        Raises SeatTimeout when no answer comes within `timeout_s`.
        """
        if timeout_s <= 0:
            raise SeatTimeout()
        future = self.request(request)
        # One timer on the answer's own future, not `asyncio.wait_for` (a future, a
        # callback and a timer more per move, on the referee's hottest path).
        deadline = Deadline(timeout_s, _expire, future)
        try:
            answer = await future
        except SessionClosed:
            return None
        except SeatTimeout:
            self.forget(request.request_id)
            raise
        finally:
            deadline.cancel()
        if stalled_s := deadline.stalled_s():
            # The runner would charge the bot the time the referee stood still.
            return replace(answer, bot_s=deadline.bot_s(stalled_s))
        return answer

    def answer(self, answer: Answer) -> bool:
        """Deliver an answer; False if no request of this session has that id."""
        future = self.forget(answer.request_id)
        if future is None or future.done():
            return False
        future.set_result(answer)
        return True

    def close(self) -> None:
        """End the session: waiting requests fail with SessionClosed."""
        if self.closed:
            return
        self.closed = True
        for future in self.pending.values():
            if not future.done():
                future.set_exception(SessionClosed())
        self.pending.clear()
        self.seats.clear()
        self.outbox.put_nowait(None)


def _expire(future: asyncio.Future[Answer]) -> None:
    if not future.done():
        future.set_exception(SeatTimeout())


class SessionHub:
    """The sessions of this referee, one per bot, and when each bot left."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        probe: Callable[[], Awaitable[bool]] | None = None,
    ) -> None:
        """`probe` asks the database whether it answers (see `Absence`)."""
        self._clock = clock
        self._probe = probe
        self.on_open: list[Callable[[Session], None]] = []
        self.on_close: list[Callable[[Session], None]] = []
        self._sessions: dict[str, Session] = {}
        self._absent_since: dict[str, float] = {}
        self._refused_at: float | None = None
        self._changed: asyncio.Future[None] | None = None
        self.draining = False
        """This referee drains: it asked its bots to reconnect elsewhere, so a bot that
        left during a move left for the arena's doing (`channels.SentAway`)."""

    def open(
        self,
        bot_id: str,
        capacity: int,
        observation_json: bool = False,
        credential: str = "",
        instance: str = "",
    ) -> Session:
        """Start a session for `bot_id`, replacing (closing) any older one."""
        old = self._sessions.get(bot_id)
        if old is not None:
            old.send(Problem("replaced by a newer session of the same bot"))
            old.close()
        session = Session(bot_id, capacity, observation_json, credential, instance)
        self._sessions[bot_id] = session
        self._absent_since.pop(bot_id, None)
        self._wake()
        for listener in self.on_open:
            listener(session)
        return session

    def close(self, session: Session) -> None:
        """End `session`; its bot counts as absent from now on."""
        session.close()
        if self._sessions.get(session.bot_id) is session:
            del self._sessions[session.bot_id]
            self._absent_since[session.bot_id] = self._clock()
            self._wake()
            for listener in self.on_close:
                listener(session)

    def revoke(self, bot_id: str, credential: str) -> bool:
        """End the bot's session if it was opened with the token `credential` hashes to."""
        session = self._sessions.get(bot_id)
        if session is None or session.credential != credential:
            return False
        session.send(Problem(REVOKED))
        self.close(session)
        return True

    def get(self, bot_id: str) -> Session | None:
        """The bot's open session, if any."""
        return self._sessions.get(bot_id)

    def connected(self) -> list[Session]:
        """Every open session."""
        return list(self._sessions.values())

    def absent_for(self, bot_id: str) -> float:
        """Seconds since the bot was last connected (counted from first asking)."""
        if bot_id in self._sessions:
            return 0.0
        since = self._absent_since.setdefault(bot_id, self._clock())
        return self._clock() - since

    async def database_answers(self) -> bool:
        """Whether the database answers now, within TOKEN_READ_S (True with no probe)."""
        if self._probe is None:
            return True
        try:
            return await asyncio.wait_for(self._probe(), TOKEN_READ_S)
        except TimeoutError:
            return False

    def refused(self) -> None:
        """A session could not open for a fault of the arena's (its database failed)."""
        self._refused_at = self._clock()

    def refused_ago(self) -> float | None:
        """How long ago a session was last refused for the arena's fault (None: never)."""
        return None if self._refused_at is None else self._clock() - self._refused_at

    def refused_within(self, seconds: float) -> bool:
        """Whether a session was refused for the arena's fault in the last `seconds`: a bot
        away that long may have been one kept out (who asked is not known without the
        database), and its absence is not its fault."""
        ago = self.refused_ago()
        return ago is not None and ago <= seconds

    def changed(self) -> asyncio.Future[None]:
        """A future done when a session next opens or closes.

        A future, not an Event: a relayed move waits on it beside its answer with one
        `asyncio.wait`, with no task to create and cancel per wait.
        """
        if self._changed is None or self._changed.done():
            self._changed = asyncio.get_running_loop().create_future()
        return self._changed

    async def wait_change(self, timeout_s: float) -> None:
        """Sleep until a session opens or closes, or `timeout_s` passes."""
        await asyncio.wait((self.changed(),), timeout=timeout_s)

    def close_all(self) -> None:
        """End every session (the referee is stopping)."""
        for session in list(self._sessions.values()):
            self.close(session)

    def _wake(self) -> None:
        if self._changed is not None and not self._changed.done():
            self._changed.set_result(None)


def absence_wait(absent_s: float, grace_s: float, remaining_s: float, hub: SessionHub) -> float:
    """How long to wait for a bot away for `absent_s` to come back.

    Raises SeatGone once it has been away for the grace period, and SeatTimeout
    once the move's deadline has passed; but SessionsRefused instead of either when
    `hub` refused a session for the arena's fault meanwhile (it may have been this bot's).
    """
    if absent_s >= grace_s or remaining_s <= 0:
        if hub.refused_within(absent_s):
            raise SessionsRefused(
                f"the bot was away {absent_s:.1f} s while the referee's database was "
                "unavailable: it could not let the bot in"
            )
        if absent_s >= grace_s:
            raise SeatGone(f"disconnected for {absent_s:.1f} s (grace {grace_s:g} s)")
        raise SeatTimeout()
    return min(remaining_s, grace_s - absent_s)


class Absence:
    """One move's wait for a bot that is away, and the verdict when its time is up."""

    def __init__(self, hub: SessionHub, grace_s: float, poll_s: float = math.inf) -> None:
        self._hub = hub
        self._grace_s = grace_s
        self._poll_s = poll_s
        self._asked = False

    async def wait(self, absent_s: float, remaining_s: float) -> None:
        """Until a session opens or closes (or `poll_s` passes); or raises the verdict of
        `absence_wait`. Before the verdict, once, it asks whether the database answers:
        one that does not (down, or silent on a network that drops its packets) cannot
        read a token now, on this replica or any other, and may be keeping the bot out.
        That counts as a session refused for the arena's fault."""
        if (absent_s >= self._grace_s or remaining_s <= 0) and not self._asked:
            self._asked = True
            if not await self._hub.database_answers():
                self._hub.refused()
            return
        wait = absence_wait(absent_s, self._grace_s, remaining_s, self._hub)
        await self._hub.wait_change(min(wait, self._poll_s))


class LocalSeatChannel:
    """A seat channel to a bot whose session lives in this process."""

    def __init__(
        self,
        hub: SessionHub,
        bot_id: str,
        grace_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.bot_id = bot_id
        self._hub = hub
        self._grace_s = grace_s
        self._clock = clock

    async def act(self, request: ActRequest, timeout_s: float) -> Answer:
        """Ask the bot, waiting through reconnects until the deadline."""
        deadline = self._clock() + timeout_s
        away: Absence | None = None  # made only when the bot is away: not on every move
        while True:
            remaining = deadline - self._clock()
            session = self._hub.get(self.bot_id)
            if session is None:
                away = away or Absence(self._hub, self._grace_s)
                await away.wait(self._hub.absent_for(self.bot_id), remaining)
                continue
            answer = await session.ask(request, remaining)
            if answer is not None:
                return answer

    async def notify(self, notice: Notice) -> None:
        """Tell the bot, if it is connected."""
        session = self._hub.get(self.bot_id)
        if session is not None:
            session.send(notice)
