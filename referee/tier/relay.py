"""Messages between referee replicas, through Redis lists.

Each replica reads one inbox, the list `arena:inbox:<replica>`, and pushes
to the others'. Lists, not pub/sub or streams, for the failure cases:
- pub/sub drops whatever is published while a subscriber is between
  connections; a list keeps it until the replica reads it again;
- a stream's consumer groups, acks and redelivery buy nothing here: a
  request has a deadline of a second or so, and the asking side already
  sends it again when the bot moves or Redis restarts (`epoch`), so a
  message is worth delivering once or not at all;
- one BLMPOP takes every message waiting (one round trip per batch), and
  one pipeline pushes all that is queued for the others.
An inbox expires a minute after a push renewed its expiry (every 10 s or
so), so a dead replica's does not grow. Redis keeps nothing across its restart here; `epoch` tells the
waiting sides to send again.

Kinds of message (JSON objects, `kind` first):
- `act`: forward this Act request to the bot, whose stream you hold;
- `answer`: the bot's answer to a relayed request, with the bot's own time;
- `moved`: the bot is not (or no longer) here, look for it again;
- `notice`: pass this notice on to the bot;
- `ended`: a match this replica played has ended (whoever waits for it here
  reads the database now instead of at its next poll);
- `call` / `reply`: run a function of the receiver (StartMatch placement) and
  send back its result.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections import defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, cast

import orjson
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from ladder.records import Notice, notice_from_json, notice_to_json
from referee.channels import ActRequest, Answer
from referee.metrics import RefereeMetrics
from referee.sessions import Session, SessionClosed, SessionHub
from referee.tier.registry import PREFIX

log = logging.getLogger(__name__)

INBOX_EXPIRY_S = 60
EXPIRY_EVERY_S = 10.0
"""How often a sender renews the expiry of an inbox it pushes to."""
BATCH = 512
"""Most messages taken from the inbox at once."""
BLOCK_S = 1.0
"""How long one read of the inbox blocks (the reader checks for a stop between reads)."""
RETRY_S = 0.2
"""Pause after Redis failed, before trying again."""
FORWARD_SLACK_S = 1.0
"""How long past the asker's deadline a forwarded request waits for the bot (clocks differ)."""


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


def inbox(replica: str) -> str:
    """The list `replica` reads its messages from."""
    return f"{PREFIX}inbox:{replica}"


@dataclass(frozen=True)
class Relayed:
    """A relayed request's outcome: the answer with the bot's time, or None if it moved."""

    answer: Answer | None
    bot_s: float = 0.0


class CallFailed(Exception):
    """A call to another replica raised; `kind` names the exception class."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


class Relay:
    """One replica's end of the relay: its inbox, its outgoing queues, its waiting requests."""

    def __init__(
        self,
        clients: Clients,
        replica: str,
        hub: SessionHub,
        metrics: RefereeMetrics,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.replica = replica
        self.epoch = 0
        """Counts the reconnections to Redis: a waiting request sent in an earlier epoch may be lost."""
        self.down_since: float | None = None
        """When Redis last stopped answering, if it has not answered since."""
        self._hub = hub
        self._sent = metrics.relayed.labels("sent")
        self._forwarded = metrics.relayed.labels("forwarded")
        self._clock = clock
        self._sender = clients.sender
        self._reader = clients.reader
        self._expiry_set: dict[str, float] = {}
        self._queues: defaultdict[str, list[bytes]] = defaultdict(list)
        self._queued = asyncio.Event()
        self._waiting: dict[str, asyncio.Future[Relayed]] = {}
        self._calls: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._handlers: dict[str, Handler] = {}
        self.on_ended: list[Callable[[str], None]] = []
        """Called with the id of each match another replica says has ended."""
        self._tasks: list[asyncio.Task[None]] = []
        self._forwarding: set[asyncio.Task[None]] = set()

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
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    # -- the asking side ------------------------------------------------------------------

    def ask(
        self, replica: str, bot_id: str, request: ActRequest, timeout_s: float
    ) -> asyncio.Future[Relayed]:
        """Send `request` for `bot_id` to `replica`; the future resolves with its outcome.

        Sent again (after a Redis restart), it is the same future.
        """
        outcome = self._waiting.get(request.request_id)
        if outcome is None:
            outcome = self._waiting[request.request_id] = asyncio.get_running_loop().create_future()
        self._sent.inc()
        self._push(
            replica,
            {
                "kind": "act",
                "from": self.replica,
                "bot": bot_id,
                "request": request.to_json(),
                "timeout_s": timeout_s,
            },
        )
        return outcome

    def forget(self, request_id: str) -> None:
        """Stop waiting for `request_id` (answered, timed out or sent elsewhere)."""
        self._waiting.pop(request_id, None)

    def notify(self, replica: str, bot_id: str, notice: Notice) -> None:
        """Pass `notice` to `bot_id` through `replica`, which holds its stream."""
        self._push(replica, {"kind": "notice", "bot": bot_id, "notice": notice_to_json(notice)})

    def announce_end(self, match_id: str, replicas: list[str]) -> None:
        """Tell `replicas` that `match_id`, played here, has ended."""
        for replica in replicas:
            self._push(replica, {"kind": "ended", "id": match_id})

    async def call(
        self, replica: str, name: str, payload: dict[str, Any], timeout_s: float
    ) -> dict[str, Any]:
        """Run handler `name` of `replica`; its result (CallFailed if it raised).

        TimeoutError when no reply comes within `timeout_s` (the replica died).
        """
        call_id = uuid.uuid4().hex
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._calls[call_id] = future
        self._push(
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

    def _push(self, replica: str, message: dict[str, Any]) -> None:
        self._queues[replica].append(orjson.dumps(message))
        self._queued.set()

    async def _send(self) -> None:
        while True:
            await self._queued.wait()
            try:
                await self._flush()
            except (RedisError, OSError) as error:
                self._failed(error)
                await asyncio.sleep(RETRY_S)

    async def _flush(self) -> None:
        self._queued.clear()
        if not self._queues:
            return
        queues, self._queues = self._queues, defaultdict(list)
        now = self._clock()
        # The expiry is renewed now and then, not with every push: one command per
        # destination is most of what a relayed move costs.
        due = [r for r in queues if now - self._expiry_set.get(r, -INBOX_EXPIRY_S) > EXPIRY_EVERY_S]
        try:
            if len(queues) == 1 and not due:
                ((replica, messages),) = queues.items()
                await self._sender.rpush(inbox(replica), *messages)
            else:
                async with self._sender.pipeline(transaction=False) as pipe:
                    for replica, messages in queues.items():
                        pipe.rpush(inbox(replica), *messages)
                    for replica in due:
                        pipe.expire(inbox(replica), INBOX_EXPIRY_S)
                    await pipe.execute()
                for replica in due:
                    self._expiry_set[replica] = now
        except BaseException:
            # Kept for the next try: a request that waits on it has its own deadline.
            for replica, messages in queues.items():
                self._queues[replica][:0] = messages
            self._queued.set()
            raise
        self._answered()

    async def _read(self) -> None:
        while True:
            try:
                popped = await self._reader.blmpop(
                    BLOCK_S, 1, inbox(self.replica), direction="LEFT", count=BATCH
                )
            except (RedisError, OSError) as error:
                self._failed(error)
                await asyncio.sleep(RETRY_S)
                continue
            self._answered()
            if popped is None:
                continue
            messages = cast(list[bytes], popped[1])
            for raw in messages:
                try:
                    self._dispatch(orjson.loads(raw))
                except Exception:
                    log.exception("relay: cannot handle message %r", raw[:200])

    def _failed(self, error: BaseException) -> None:
        if self.down_since is None:
            self.down_since = self._clock()
            log.warning("relay: Redis is unavailable (%s); retrying", error)

    def _answered(self) -> None:
        if self.down_since is not None:
            self.down_since = None
            self.epoch += 1
            log.warning("relay: Redis answers again; waiting requests are sent again")

    def _dispatch(self, message: dict[str, Any]) -> None:
        kind = message["kind"]
        if kind == "answer":
            self._resolve(
                message["id"],
                Relayed(
                    Answer(
                        message["id"],
                        index=message.get("index"),
                        action=message.get("action"),
                        relayed=True,
                    ),
                    message["bot_s"],
                ),
            )
        elif kind == "moved":
            self._resolve(message["id"], Relayed(None))
        elif kind == "act":
            self._forward(message)
        elif kind == "notice":
            session = self._hub.get(message["bot"])
            if session is not None:
                session.send(notice_from_json(message["notice"]))
        elif kind == "ended":
            for listener in self.on_ended:
                listener(message["id"])
        elif kind == "call":
            task = asyncio.create_task(self._run_call(message))
            self._forwarding.add(task)
            task.add_done_callback(self._forwarding.discard)
        elif kind == "reply":
            future = self._calls.get(message["id"])
            if future is not None and not future.done():
                future.set_result(message)
        else:
            log.warning("relay: unknown message kind %r", kind)

    def _resolve(self, request_id: str, outcome: Relayed) -> None:
        future = self._waiting.get(request_id)
        if future is not None and not future.done():
            future.set_result(outcome)

    # -- the holding side -----------------------------------------------------------------

    def _forward(self, message: dict[str, Any]) -> None:
        """Send a relayed request down the bot's stream here; its answer goes back."""
        asker = message["from"]
        request = ActRequest.from_json(message["request"])
        session = self._hub.get(message["bot"])
        if session is None:
            self._push(asker, {"kind": "moved", "id": request.request_id})
            return
        if request.request_id in session.pending:
            return  # sent again after a Redis restart: the first is still waiting
        self._forwarded.inc()
        started = self._clock()
        future = session.request(request)
        timer = asyncio.get_running_loop().call_later(
            message["timeout_s"] + FORWARD_SLACK_S, self._expire, session, request.request_id
        )

        def back(done: asyncio.Future[Answer]) -> None:
            timer.cancel()
            if done.cancelled():
                return
            error = done.exception()
            if isinstance(error, SessionClosed):
                self._push(asker, {"kind": "moved", "id": request.request_id})
            elif error is None:
                answer = done.result()
                self._push(
                    asker,
                    {
                        "kind": "answer",
                        "id": request.request_id,
                        "index": answer.index,
                        "action": answer.action,
                        "bot_s": self._clock() - started,
                    },
                )

        future.add_done_callback(back)

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
        self._push(message["from"], reply)
