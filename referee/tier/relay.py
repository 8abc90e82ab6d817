"""Messages between referee replicas, through Redis lists.

Each replica reads one inbox, the list `arena:inbox:<replica>`, and pushes
to the others'. Lists, not pub/sub or streams, for the failure cases:
- pub/sub drops whatever is published while a subscriber is between
  connections; a list keeps it until the replica reads it again;
- a stream's consumer groups and redelivery would not save a move: a
  request has a deadline of a second or so, so the asking side itself sends
  it again until the holder acknowledges it, and asks the holder's verdict
  when no answer came by the deadline;
- one BLMPOP takes every message waiting (one round trip per batch), and
  one pipeline pushes all that is queued for the others.
Every push sets the inbox's expiry again, so the inbox of a replica that
died (nobody reads it) is gone a minute after the last push to it.

Kinds of message (JSON objects, `kind` first; those about a relayed request
name their sender in `from`, and the asker takes them only from the replica
it sent that request to):
- `act`: forward this Act request to the bot, whose stream you hold (sent
  again until `taken`; the holder knows a request it took by its id);
- `taken`: the holder has the request (it went down the bot's stream); kept
  back a moment, so that a quick answer goes in the same push;
- `answer`: the bot answered in time, with the bot's own time;
- `moved`: the bot is not (or no longer) here, look for it again;
- `check`: the deadline passed with no answer here: what became of it?
- `late`: the bot did not answer in time (the holder's verdict);
- `unknown`: the holder knows no such request (it lost what it held);
- `notice`: pass this notice on to the bot;
- `revoke`: end the bot's session if it was opened with this token (hash):
  the token was rotated;
- `ended`: a match this replica played has ended (whoever waits for it here
  reads the database now instead of at its next poll);
- `call` / `reply`: run a function of the receiver (StartMatch placement; when
  it last refused a session, `referee.tier.channel.REFUSALS`) and send back its
  result.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections import defaultdict, deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, cast

import orjson
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from ladder.records import Notice, notice_from_json, notice_to_json
from referee.channels import ActRequest, Answer
from referee.metrics import RefereeMetrics
from referee.sessions import Deadline, Session, SessionClosed, SessionHub
from referee.stopping import cancel_and_wait
from referee.tier.outages import Outages
from referee.tier.registry import PREFIX

log = logging.getLogger(__name__)

INBOX_EXPIRY_S = 60.0
"""How long an inbox outlives the last push to it."""
BATCH = 512
"""Most messages taken from the inbox at once."""
BLOCK_S = 1.0
"""How long one read of the inbox blocks (the reader checks for a stop between reads)."""
RETRY_S = 0.2
"""Pause after Redis failed, before trying again."""
TAKEN_DELAY_S = 0.05
"""How long a holder keeps back `taken` for the answer to go with it: well within the asker's
resend (`referee.tier.channel.RESEND_S`), so that a slow bot's request is not sent again."""
KEEP_S = 30.0
"""How long a holder remembers a request past its deadline, to answer a re-send or a check."""

Fault = Callable[[str, dict[str, Any]], bool]
"""Consulted with (destination replica, message) for every message pushed: True drops it."""


@dataclass(frozen=True)
class Clients:
    """The connections of one replica to the relay's Redis.

    `commands` is a pool for the registry; `sender` and `reader` are single
    connections (no pool to go through on the hot path), one pushing the
    outgoing queues, one blocked on the inbox.
    """

    commands: aioredis.Redis
    sender: aioredis.Redis
    reader: aioredis.Redis

    @classmethod
    def connect(cls, url: str) -> Clients:
        """Clients of the Redis at `url` (they connect when first used)."""

        def client(single: bool, timeout_s: float = 5.0) -> aioredis.Redis:
            return aioredis.Redis.from_url(
                url,
                single_connection_client=single,
                socket_timeout=timeout_s,
                socket_connect_timeout=2.0,
            )

        return cls(commands=client(False), sender=client(True), reader=client(True, BLOCK_S + 5))

    async def close(self) -> None:
        """Close every connection."""
        for client in (self.commands, self.sender, self.reader):
            await client.aclose()


async def round_trip(
    client: aioredis.Redis, commands: Sequence[tuple[str | bytes | int | float, ...]]
) -> list[Any]:
    """Send `commands` at once on the single connection of `client`; their raw replies.

    Below redis-py's command layer (its retries, pool and reply callbacks), which cost a
    relayed move about a fifth of its CPU (docs/performance.md): the relay has its own
    retries, and each of its two connections is its alone. Replies are read within the
    client's socket timeout. Any failure, a cancellation included, drops the connection,
    so that no reply is left unread on it: the next round trip connects again. Round trips
    on one client must not overlap (the client's own lock is not taken): the caller
    serializes them.
    """
    connection = (await client.initialize()).connection
    assert connection is not None
    try:
        await connection.send_packed_command(connection.pack_commands(commands))
        return [await connection.read_response() for _ in commands]
    except BaseException:
        await connection.disconnect(nowait=True)
        raise


def inbox(replica: str) -> str:
    """The list `replica` reads its messages from."""
    return f"{PREFIX}inbox:{replica}"


class Outcome(StrEnum):
    """What the holder says became of a relayed request (the kind of its message)."""

    ANSWERED = "answer"
    MOVED = "moved"
    LATE = "late"
    UNKNOWN = "unknown"


SETTLING = frozenset({"taken", *Outcome})
"""The kinds of message a holder sends about a request asked here."""


@dataclass(frozen=True)
class Relayed:
    """A relayed request's outcome; for an answer, the answer and the bot's own time."""

    outcome: Outcome
    answer: Answer | None = None
    bot_s: float = 0.0
    drained: bool = False
    """MOVED: the holder drains, and asked the bot to reconnect elsewhere."""


@dataclass(frozen=True)
class Asked:
    """A request this replica sent to `replica`, which holds the bot's stream.

    `taken` resolves when the holder acknowledges it, `outcome` with what
    became of it; only messages from `replica` resolve either.
    """

    replica: str
    bot_id: str
    request: ActRequest
    taken: asyncio.Future[None]
    outcome: asyncio.Future[Relayed]


@dataclass(eq=False)
class Held:
    """A request this replica took for a bot whose stream it holds."""

    bot_id: str
    reply: dict[str, Any] | None = None
    """What went back once it was settled (`answer`, `moved` or `late`); None while pending."""


class CallFailed(Exception):
    """A call to another replica raised; `kind` names the exception class."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


class Relay:
    """One replica's end of the relay: its inbox, its outgoing queues, its requests."""

    def __init__(
        self,
        clients: Clients,
        replica: str,
        hub: SessionHub,
        metrics: RefereeMetrics,
        outages: Outages,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.replica = replica
        self.fault: Fault | None = None
        """A test's hook: drops each message it returns True for, as a lossy relay would."""
        self.inbox_expiry_s = INBOX_EXPIRY_S
        self._hub = hub
        self._sent = metrics.relayed.labels("sent")
        self._forwarded = metrics.relayed.labels("forwarded")
        self._clock = clock
        self._outages = outages
        self._sender = clients.sender
        self._reader = clients.reader
        self._queues: defaultdict[str, list[bytes]] = defaultdict(list)
        self._queued = asyncio.Event()
        self._flushing = asyncio.Lock()
        self._asked: dict[str, Asked] = {}
        self._held: dict[tuple[str, str], Held] = {}
        """The requests taken here, by (asking replica, request id)."""
        self._keeping: deque[tuple[float, tuple[str, str], Held]] = deque()
        """Settled requests in the order they are to be forgotten (each KEEP_S after it
        was settled): swept as requests come, not a 30-second timer per relayed move."""
        self._calls: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._handlers: dict[str, Handler] = {}
        self.on_ended: list[Callable[[str], None]] = []
        """Called with the id of each match another replica says has ended."""
        self._tasks: list[asyncio.Task[None]] = []
        self._running: set[asyncio.Task[None]] = set()

    def handle(self, name: str, handler: Handler) -> None:
        """Let other replicas `call(name, ...)` this one."""
        self._handlers[name] = handler

    def start(self) -> None:
        """Begin reading the inbox and sending the queues."""
        self._tasks = [
            asyncio.create_task(self._read(), name="relay inbox"),
            asyncio.create_task(self._send(), name="relay outbox"),
        ]

    async def close(self) -> None:
        """Stop reading and sending; what is still queued is sent first, if Redis answers."""
        with contextlib.suppress(RedisError, OSError):
            await asyncio.wait_for(self._flush(), 2.0)
        await cancel_and_wait(*self._tasks)

    # -- the asking side ------------------------------------------------------------------

    def ask(self, replica: str, bot_id: str, request: ActRequest, timeout_s: float) -> Asked:
        """Send `request` for `bot_id` to `replica`; what `resend` and `check` follow.

        Whatever was asked before under the request's id is no longer listened to.
        """
        loop = asyncio.get_running_loop()
        asked = Asked(replica, bot_id, request, loop.create_future(), loop.create_future())
        self._asked[request.request_id] = asked
        self._sent.inc()
        self.resend(asked, timeout_s)
        return asked

    def resend(self, asked: Asked, timeout_s: float) -> None:
        """Send the request again (not yet acknowledged); the holder takes it once."""
        self.push(
            asked.replica,
            {
                "kind": "act",
                "from": self.replica,
                "bot": asked.bot_id,
                "request": asked.request.to_json(),
                "timeout_s": timeout_s,
            },
        )

    def check(self, asked: Asked) -> None:
        """Ask the holder what became of the request (its deadline passed here)."""
        self.push(
            asked.replica, {"kind": "check", "from": self.replica, "id": asked.request.request_id}
        )

    def forget(self, asked: Asked) -> None:
        """Stop listening for `asked` (settled, timed out or sent elsewhere)."""
        if self._asked.get(asked.request.request_id) is asked:
            del self._asked[asked.request.request_id]

    def notify(self, replica: str, bot_id: str, notice: Notice) -> None:
        """Pass `notice` to `bot_id` through `replica`, which holds its stream."""
        self.push(replica, {"kind": "notice", "bot": bot_id, "notice": notice_to_json(notice)})

    def revoke(self, bot_id: str, credential: str, replicas: list[str]) -> None:
        """Have `replicas` end the bot's session opened with that (rotated) token."""
        for replica in replicas:
            self.push(replica, {"kind": "revoke", "bot": bot_id, "credential": credential})

    def announce_end(self, match_id: str, replicas: list[str]) -> None:
        """Tell `replicas` that `match_id`, played here, has ended."""
        for replica in replicas:
            self.push(replica, {"kind": "ended", "id": match_id})

    async def call(
        self, replica: str, name: str, payload: dict[str, Any], timeout_s: float
    ) -> dict[str, Any]:
        """Run handler `name` of `replica`; its result (CallFailed if it raised).

        TimeoutError when no reply comes within `timeout_s` (the replica died).
        """
        call_id = uuid.uuid4().hex
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._calls[call_id] = future
        self.push(
            replica,
            {"kind": "call", "from": self.replica, "id": call_id, "name": name, "payload": payload},
        )
        try:
            reply = await asyncio.wait_for(future, timeout_s)
        finally:
            self._calls.pop(call_id, None)
        if "error" in reply:
            raise CallFailed(reply["error"]["kind"], reply["error"]["message"])
        result: dict[str, Any] = reply["result"]
        return result

    # -- moving messages ------------------------------------------------------------------

    def push(self, replica: str, message: dict[str, Any]) -> None:
        """Queue `message` for the inbox of `replica` (the next push sends it)."""
        if self.fault is not None and self.fault(replica, message):
            return
        self._queues[replica].append(orjson.dumps(message))
        self._queued.set()

    async def _send(self) -> None:
        while True:
            await self._queued.wait()
            try:
                await self._flush()
            except (RedisError, OSError) as error:
                self._outages.failed(error)
                await asyncio.sleep(RETRY_S)

    async def _flush(self) -> None:
        # One push at a time on the sender's connection: `close` flushes what is left
        # while the sender task's push may still wait for its replies.
        async with self._flushing:
            self._queued.clear()
            if not self._queues:
                return
            queues, self._queues = self._queues, defaultdict(list)
            expiry_ms = round(self.inbox_expiry_s * 1000)
            try:
                # The expiry goes with every push, in the same round trip: an inbox its
                # reader emptied (Redis deleted it) comes back with one.
                commands: list[tuple[str | bytes | int, ...]] = []
                for replica, messages in queues.items():
                    commands.append(("RPUSH", inbox(replica), *messages))
                    commands.append(("PEXPIRE", inbox(replica), expiry_ms))
                await round_trip(self._sender, commands)
            except BaseException:
                # Kept for the next try: a request that waits on it has its own deadline.
                for replica, messages in queues.items():
                    self._queues[replica][:0] = messages
                self._queued.set()
                raise
            self._outages.answered()

    async def _read(self) -> None:
        while True:
            try:
                (popped,) = await round_trip(
                    self._reader,
                    [("BLMPOP", BLOCK_S, 1, inbox(self.replica), "LEFT", "COUNT", BATCH)],
                )
            except (RedisError, OSError) as error:
                self._outages.failed(error)
                await asyncio.sleep(RETRY_S)
                continue
            self._outages.answered()
            if popped is None:
                continue
            messages = cast(list[bytes], popped[1])
            for raw in messages:
                try:
                    self._dispatch(orjson.loads(raw))
                except Exception:
                    log.exception("relay: cannot handle message %r", raw[:200])

    def _dispatch(self, message: dict[str, Any]) -> None:
        kind = message["kind"]
        if kind in SETTLING:
            self._settle(message)
        elif kind == "act":
            self._take(message)
        elif kind == "check":
            self._verdict(message)
        elif kind == "notice":
            session = self._hub.get(message["bot"])
            if session is not None:
                session.send(notice_from_json(message["notice"]))
        elif kind == "revoke":
            self._hub.revoke(message["bot"], message["credential"])
        elif kind == "ended":
            for listener in self.on_ended:
                listener(message["id"])
        elif kind == "call":
            task = asyncio.create_task(self._run_call(message))
            self._running.add(task)
            task.add_done_callback(self._running.discard)
        elif kind == "reply":
            future = self._calls.get(message["id"])
            if future is not None and not future.done():
                future.set_result(message)
        else:
            log.warning("relay: unknown message kind %r", kind)

    def _settle(self, message: dict[str, Any]) -> None:
        """A holder's word on a request asked here: taken only from where it was sent."""
        asked = self._asked.get(message["id"])
        if asked is None or asked.replica != message["from"]:
            return  # settled already, or not that replica's to settle
        if message["kind"] == "taken":
            if not asked.taken.done():
                asked.taken.set_result(None)
            return
        if asked.outcome.done():
            return
        outcome = Outcome(message["kind"])
        if outcome is Outcome.ANSWERED:
            answer = Answer(
                message["id"],
                index=message["index"],
                action=message["action"],
                relayed=True,
                bot_s=message["bot_s"],
            )
            asked.outcome.set_result(Relayed(outcome, answer, message["bot_s"]))
        else:
            # `drained` is new: a holder of the code before it never says so.
            asked.outcome.set_result(Relayed(outcome, drained=message.get("drained", False)))

    # -- the holding side -----------------------------------------------------------------

    def _reply(self, asker: str, kind: str, request_id: str, **fields: Any) -> dict[str, Any]:
        reply = {"kind": kind, "from": self.replica, "id": request_id, **fields}
        self.push(asker, reply)
        return reply

    def _take(self, message: dict[str, Any]) -> None:
        """Send a relayed request down the bot's stream here, once; acknowledge every copy."""
        asker = message["from"]
        request = ActRequest.from_json(message["request"])
        key = (asker, request.request_id)
        held = self._held.get(key)
        if (
            held is not None
            and held.bot_id == message["bot"]
            and (held.reply is None or held.reply["kind"] != Outcome.MOVED)
        ):
            # A copy sent again (our `taken` or answer was lost): the same word again.
            self._reply(asker, "taken", request.request_id)
            if held.reply is not None:
                self.push(asker, held.reply)
            return
        session = self._hub.get(message["bot"])
        if session is None:
            self._reply(asker, Outcome.MOVED, request.request_id, drained=self._hub.draining)
            return
        timeout_s = message["timeout_s"]
        if request.asked_at:
            # The time the bot is told is left (`ActRequest.clock_left`) is counted by
            # this host's clock, as its deadline is here: the asker's wall clock may be
            # set otherwise. What is left is what the asker gives.
            total_s = (request.deadline_ms + request.time_bank_ms) / 1000
            request = replace(request, asked_at=time.time() - max(0.0, total_s - timeout_s))
        self._forward(asker, session, request, timeout_s)

    def _forward(self, asker: str, session: Session, request: ActRequest, timeout_s: float) -> None:
        request_id = request.request_id
        key = (asker, request_id)
        self._forget_kept()
        held = self._held[key] = Held(session.bot_id)
        self._forwarded.inc()
        # Only this session's own request resolves it: an answer of the bot to this id.
        future = session.request(request)
        loop = asyncio.get_running_loop()
        deadline = Deadline(timeout_s, self._expire, session, request_id)
        # `taken` waits a little for the answer, to go back with it in one push: most bots
        # answer within TAKEN_DELAY_S, and then a relayed move is one round trip of Redis
        # each way (not two back, and two reads of the asker's inbox).
        acknowledged = False

        def acknowledge() -> None:
            nonlocal acknowledged
            if not acknowledged:
                acknowledged = True
                self._reply(asker, "taken", request_id)

        taken = loop.call_later(min(TAKEN_DELAY_S, timeout_s / 4), acknowledge)

        def back(done: asyncio.Future[Answer]) -> None:
            deadline.cancel()
            taken.cancel()
            acknowledge()
            if done.cancelled():
                held.reply = self._reply(asker, Outcome.LATE, request_id)
            elif isinstance(done.exception(), SessionClosed):
                held.reply = self._reply(
                    asker, Outcome.MOVED, request_id, drained=self._hub.draining
                )
            else:
                answer = done.result()
                held.reply = self._reply(
                    asker,
                    Outcome.ANSWERED,
                    request_id,
                    index=answer.index,
                    action=answer.action,
                    bot_s=deadline.bot_s(),
                )
            self._keeping.append((self._clock() + KEEP_S, key, held))

        future.add_done_callback(back)

    def _verdict(self, message: dict[str, Any]) -> None:
        """Say what became of a request taken here (a pending one says so when settled)."""
        held = self._held.get((message["from"], message["id"]))
        if held is None:
            self._reply(message["from"], Outcome.UNKNOWN, message["id"])
        elif held.reply is not None:
            self.push(message["from"], held.reply)

    def _forget_kept(self) -> None:
        now = self._clock()
        while self._keeping and self._keeping[0][0] <= now:
            _, key, held = self._keeping.popleft()
            if self._held.get(key) is held:
                del self._held[key]

    @staticmethod
    def _expire(session: Session, request_id: str) -> None:
        future = session.forget(request_id)
        if future is not None and not future.done():
            future.cancel()

    async def _run_call(self, message: dict[str, Any]) -> None:
        handler = self._handlers.get(message["name"])
        reply: dict[str, Any] = {"kind": "reply", "id": message["id"]}
        if handler is None:
            reply["error"] = {"kind": "LookupError", "message": f"no handler {message['name']!r}"}
        else:
            try:
                reply["result"] = await handler(message["payload"])
            except Exception as error:
                reply["error"] = {"kind": type(error).__name__, "message": str(error)}
        self.push(message["from"], reply)
