"""A misbehaving bot for the referee's end-to-end tests, run as its own process.

It talks to the referee with the generated stubs (`cardarena_api.v1`) only,
not the SDK, so it can send what the SDK never would. Every message it
receives (asking for each observation's JSON too, so both forms are checked), every answer it sends and how each stream ended are written as JSON
lines to `--record FILE` (flushed line by line), which is what the tests read:

    {"kind": "recv", "session": 1, "message": {...}}      # MessageToDict of a RefereeMessage
    {"kind": "sent", "session": 1, "request_id": ..., "index" | "action": ...}
    {"kind": "status", "session": 1, "code": "RESOURCE_EXHAUSTED", "details": ...}
    {"kind": "dropped", "session": 1, "request_id": ...}   # left without answering it
    {"kind": "stole", "request_id": ..., "match_id": ...}  # answered another bot's request
    {"kind": "token", "variant": ..., "code": ...}         # badtoken mode

Modes (`--mode`):
  record     play legal actions (`--pick random|first|last`), optionally slowly
             (`--delay-ms` for the first `--delay-count` requests)
  late       answer every request `--delay-ms` late
  illegal    1st answer: an index out of range; 2nd: an unknown action text; then legal
  malformed  on the 1st request: a second Hello, an empty BotMessage, an answer to
             an unknown request id, then an Answer with no choice; then legal
  oversized  1st answer is bigger than the referee's message limit; after the
             stream ends, reconnect and play legally
  reconnect  on request `--drop-after`, close the stream without answering, stay
             away `--away-ms`, reconnect and play legally
  vanish     on request `--drop-after`, close the stream and exit
  badtoken   open sessions with wrong tokens (none, garbage, `--token` altered,
             wrong scheme) and record the status codes; exit
  steal      play legally, and answer every request that another bot records in
             `--steal-from FILE` (plus one made-up request id)
  silent     never answer (stay connected)
  flood      on the 1st request, send `--flood-count` answers to a made-up request id
             as fast as it can, then an answer (index 0) to the request, on a session
             of the sync API; after that stream ends, reconnect and play legally
  sessions   open `--sessions` sessions one after another with the same token (each
             Hello, Welcome, hang up), recording each status as {"kind": "open"};
             then retry every 0.25 s until a session opens, and play legally
  garbage    on the 1st request, send random bytes that are no BotMessage on the
             stream; after the stream ends, reconnect and play legally
  badcards   1st answer: index -1; 2nd: a typed Golden 10 card that does not exist;
             then legal
  stall      answer the first `--delay-count` requests `--stall-margin-ms` before
             their deadline, the others at once
  wrongowner (Goof) the first request that allows a play: that play, typed, with the
             card's owner set to the next seat; then legal
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import queue
import random
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import grpc
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import DecodeError

from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import arena_pb2_grpc as pb_grpc
from cardarena_api.v1 import cards_pb2 as cards

MODES = (
    "record",
    "late",
    "illegal",
    "malformed",
    "oversized",
    "reconnect",
    "vanish",
    "badtoken",
    "steal",
    "silent",
    "flood",
    "sessions",
    "garbage",
    "badcards",
    "stall",
    "wrongowner",
)
SESSION_METHOD = "/cardarena_api.v1.BotService/Session"
Outgoing = pb.BotMessage | bytes
"""What badbot writes on its stream: a message, or raw bytes (`garbage`)."""


def serialize(message: Outgoing) -> bytes:
    """Messages as protobuf, raw bytes as they are."""
    return message if isinstance(message, bytes) else message.SerializeToString()


def undecodable(rng: random.Random, size: int = 64) -> bytes:
    """Random bytes that do not parse as a BotMessage."""
    while True:
        data = rng.randbytes(size)
        try:
            pb.BotMessage.FromString(data)
        except DecodeError:
            return data


FAKE_REQUEST_ID = "f" * 32
UNKNOWN_ACTION = "no-such-action"


class Recorder:
    """JSON lines, flushed one by one so a test can read them while we run."""

    def __init__(self, path: str) -> None:
        self._file = Path(path).open("a", encoding="utf-8")  # noqa: SIM115

    def write(self, kind: str, **fields: Any) -> None:
        self._file.write(json.dumps({"kind": kind, "t": time.time(), **fields}) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


class BadBot:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.rec = Recorder(args.record)
        self.rng = random.Random(args.seed)
        self.acts = 0
        self.wrong_owner_sent = False
        self.session_no = 0
        self.outbox: asyncio.Queue[Outgoing | None] | None = None
        self.tasks: set[asyncio.Task[None]] = set()

    # -- sessions ---------------------------------------------------------------

    async def main(self) -> None:
        if self.args.mode == "badtoken":
            await self.try_tokens()
            return
        if self.args.mode == "sessions":
            await asyncio.to_thread(self.open_sessions)
        if self.args.mode == "flood":
            await asyncio.to_thread(self.flood_session)
        tries = 40 if self.args.mode == "sessions" else 10
        for _ in range(tries):  # bounded reconnects
            outcome = await self.session()
            if outcome == "exit":
                return
            await asyncio.sleep(self.args.away_ms / 1000 if outcome == "away" else 0.2)

    async def session(self) -> str:
        """One stream; returns 'away', 'exit' or 'ended' (the referee ended it)."""
        self.session_no += 1
        number = self.session_no
        outbox: asyncio.Queue[Outgoing | None] = asyncio.Queue()
        outbox.put_nowait(
            pb.BotMessage(
                hello=pb.Hello(capacity=self.args.capacity, client="badbot", observation_json=True)
            )
        )
        self.outbox = outbox

        async def requests() -> AsyncIterator[Outgoing]:
            while (message := await outbox.get()) is not None:
                yield message

        outcome = "ended"
        options = [("grpc.max_send_message_length", 8 * 1024 * 1024)]
        async with grpc.aio.insecure_channel(self.args.referee, options=options) as chan:
            # A generic method, so that `garbage` can write raw bytes on it.
            method = chan.stream_stream(
                SESSION_METHOD,
                request_serializer=serialize,
                response_deserializer=pb.RefereeMessage.FromString,
            )
            call = method(requests(), metadata=(("authorization", f"Bearer {self.args.token}"),))
            stealer: asyncio.Task[None] | None = None
            try:
                async for message in call:
                    self.rec.write(
                        "recv",
                        session=number,
                        message=MessageToDict(message, preserving_proto_field_name=True),
                    )
                    kind = message.WhichOneof("kind")
                    if kind == "welcome" and self.args.mode == "steal" and stealer is None:
                        stealer = asyncio.create_task(self.steal(outbox))
                    if kind == "act":
                        verdict = self.on_act(message.act, outbox, number)
                        if verdict is not None:
                            outcome = verdict
                            call.cancel()
                            break
                else:
                    self.rec.write("status", session=number, code="OK", details="")
            except grpc.aio.AioRpcError as error:
                if (
                    error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                    and self.args.mode == "sessions"
                ):
                    outcome = "away"
                self.rec.write(
                    "status", session=number, code=error.code().name, details=error.details()
                )
                if error.code() == grpc.StatusCode.UNAUTHENTICATED:
                    outcome = "exit"
            finally:
                outbox.put_nowait(None)
                self.outbox = None
                if stealer is not None:
                    stealer.cancel()
        return outcome

    def send(self, outbox: asyncio.Queue[Outgoing | None], message: Outgoing) -> None:
        if self.outbox is outbox:
            outbox.put_nowait(message)

    # -- answers ----------------------------------------------------------------

    def on_act(
        self, act: pb.Act, outbox: asyncio.Queue[Outgoing | None], number: int
    ) -> str | None:
        """React to one request; a non-None result ends the session that way."""
        self.acts += 1
        k = self.acts
        mode = self.args.mode
        rid = act.request_id
        if mode == "late":
            self.later(self.args.delay_ms, outbox, number, act)
            return None
        if mode == "silent":
            self.rec.write("ignored", session=number, request_id=rid)
            return None
        if mode == "garbage" and number == 1 and k == 1:
            data = undecodable(self.rng)
            self.send(outbox, data)
            self.rec.write("garbage", session=number, request_id=rid, bytes=data.hex())
            return None
        if mode == "badcards" and k == 1:
            self.answer(outbox, number, act, index=-1)
            return None
        if mode == "badcards" and k == 2:
            self.answer(
                outbox,
                number,
                act,
                card=cards.Golden10Card(rank=99, colour=cards.GOLDEN10_COLOUR_GREEN),
            )
            return None
        if mode == "wrongowner" and not self.wrong_owner_sent:
            play = next((a for a in act.legal if a.goof.WhichOneof("kind") == "play"), None)
            if play is not None:
                self.wrong_owner_sent = True
                typed = cards.Action()
                typed.CopyFrom(play)
                typed.ClearField("text")
                typed.goof.play.card.owner = (act.seat + 1) % act.observation.players
                self.answer(outbox, number, act, typed=typed)
                return None
        if mode == "stall" and k <= self.args.delay_count:
            delay = max(0, act.deadline_ms - self.args.stall_margin_ms)
            self.later(delay, outbox, number, act)
            return None
        if mode == "illegal" and k == 1:
            self.answer(outbox, number, act, index=len(act.legal) + 5)
            return None
        if mode == "illegal" and k == 2:
            self.answer(outbox, number, act, action=UNKNOWN_ACTION)
            return None
        if mode == "malformed" and k == 1:
            self.send(outbox, pb.BotMessage(hello=pb.Hello(capacity=1, client="again")))
            self.send(outbox, pb.BotMessage())
            self.send(
                outbox,
                pb.BotMessage(answer=pb.Answer(request_id=FAKE_REQUEST_ID, index=0)),
            )
            self.answer(outbox, number, act, empty=True)
            return None
        if mode == "oversized" and number == 1:
            self.answer(outbox, number, act, action="x" * self.args.oversize_bytes)
            return None
        if mode in ("reconnect", "vanish") and k == self.args.drop_after and number == 1:
            self.rec.write("dropped", session=number, request_id=rid)
            return "away" if mode == "reconnect" else "exit"
        if self.args.delay_ms and k <= self.args.delay_count:
            self.later(self.args.delay_ms, outbox, number, act)
        else:
            self.play(outbox, number, act)
        return None

    def later(
        self,
        delay_ms: int,
        outbox: asyncio.Queue[Outgoing | None],
        number: int,
        act: pb.Act,
    ) -> None:
        async def wait_and_play() -> None:
            await asyncio.sleep(delay_ms / 1000)
            self.play(outbox, number, act)

        task = asyncio.create_task(wait_and_play())
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def play(self, outbox: asyncio.Queue[Outgoing | None], number: int, act: pb.Act) -> None:
        """A legal answer, by index or by text (random bots use both)."""
        pick = self.args.pick
        n = len(act.legal)
        index = 0 if pick == "first" else n - 1 if pick == "last" else self.rng.randrange(n)
        if pick == "random" and self.rng.random() < 0.5:
            self.answer(outbox, number, act, index=index)
        else:
            self.answer(outbox, number, act, action=act.legal[index].text, chosen=index)

    def answer(
        self,
        outbox: asyncio.Queue[Outgoing | None],
        number: int,
        act: pb.Act,
        index: int | None = None,
        action: str | None = None,
        empty: bool = False,
        chosen: int | None = None,
        card: cards.Golden10Card | None = None,
        typed: cards.Action | None = None,
    ) -> None:
        if self.outbox is not outbox:
            return  # that session is gone
        answer = pb.Answer(request_id=act.request_id)
        fields: dict[str, Any] = {}
        if index is not None:
            answer.index = index
            fields["index"] = index
            if 0 <= index < len(act.legal):
                fields["text"] = act.legal[index].text
        elif action is not None:
            answer.action.CopyFrom(cards.Action(text=action))
            fields["action"] = action if len(action) < 100 else f"<{len(action)} bytes>"
            if chosen is not None:
                fields["text"] = action
        elif card is not None:
            answer.action.golden10.card.CopyFrom(card)
            fields["card"] = {"rank": card.rank, "colour": card.colour}
        elif typed is not None:
            answer.action.CopyFrom(typed)
            fields["typed"] = MessageToDict(typed, preserving_proto_field_name=True)
        self.send(outbox, pb.BotMessage(answer=answer))
        self.rec.write(
            "sent",
            session=number,
            request_id=act.request_id,
            match_id=act.match_id,
            game_index=act.game_index,
            seat=act.seat,
            empty=empty,
            **fields,
        )

    # -- steal ------------------------------------------------------------------

    async def steal(self, outbox: asyncio.Queue[Outgoing | None]) -> None:
        """Answer every request another bot records, and one made-up id."""
        self.send(outbox, pb.BotMessage(answer=pb.Answer(request_id=FAKE_REQUEST_ID, index=0)))
        self.rec.write("stole", request_id=FAKE_REQUEST_ID, match_id="")
        path = Path(self.args.steal_from)
        offset = 0
        buffer = ""
        while self.outbox is outbox:
            if path.exists():
                with path.open(encoding="utf-8") as file:
                    file.seek(offset)
                    chunk = file.read()
                    offset = file.tell()
                buffer += chunk
                *lines, buffer = buffer.split("\n")
                for line in lines:
                    entry = json.loads(line)
                    act = entry.get("message", {}).get("act") if entry["kind"] == "recv" else None
                    if act is None:
                        continue
                    self.send(
                        outbox,
                        pb.BotMessage(answer=pb.Answer(request_id=act["request_id"], index=0)),
                    )
                    self.rec.write(
                        "stole",
                        request_id=act["request_id"],
                        match_id=act["match_id"],
                        seat=act.get("seat", 0),
                    )
            await asyncio.sleep(0.01)

    # -- sessions ---------------------------------------------------------------

    def flood_session(self) -> None:
        """Session 1 of `flood`, through the sync API.

        (A grpc.aio client still writing when the server ends the call can
        report INTERNAL instead of the server's status: grpc/grpc#36066.)
        """
        self.session_no += 1
        number = self.session_no
        outgoing: queue.Queue[pb.BotMessage | None] = queue.Queue()
        outgoing.put(
            pb.BotMessage(
                hello=pb.Hello(capacity=self.args.capacity, client="badbot", observation_json=True)
            )
        )

        def requests() -> Iterator[pb.BotMessage]:
            while (message := outgoing.get()) is not None:
                yield message

        metadata = (("authorization", f"Bearer {self.args.token}"),)
        flooded = False
        with grpc.insecure_channel(self.args.referee) as chan:
            stream = pb_grpc.BotServiceStub(chan).Session(requests(), metadata=metadata)
            try:
                for message in stream:
                    self.rec.write(
                        "recv",
                        session=number,
                        message=MessageToDict(message, preserving_proto_field_name=True),
                    )
                    if message.WhichOneof("kind") == "act" and not flooded:
                        flooded = True
                        act = message.act
                        junk = pb.BotMessage(answer=pb.Answer(request_id=FAKE_REQUEST_ID, index=0))
                        for _ in range(self.args.flood_count):
                            outgoing.put(junk)
                        answer = pb.Answer(request_id=act.request_id, index=0)
                        outgoing.put(pb.BotMessage(answer=answer))
                        self.rec.write("flooded", session=number, count=self.args.flood_count)
                self.rec.write("status", session=number, code="OK", details="")
            except grpc.RpcError as error:
                self.rec.write(
                    "status", session=number, code=error.code().name, details=error.details()
                )
            finally:
                outgoing.put(None)

    def open_sessions(self) -> None:
        """Open `--sessions` sessions in a row through the sync API; record each status."""
        metadata = (("authorization", f"Bearer {self.args.token}"),)
        with grpc.insecure_channel(self.args.referee) as chan:
            stub = pb_grpc.BotServiceStub(chan)
            for number in range(self.args.sessions):
                hello = pb.BotMessage(hello=pb.Hello(capacity=1, client="badbot"))
                code, details, got = "OK", "", []
                stream = stub.Session(iter([hello]), metadata=metadata, timeout=15)
                try:
                    for message in stream:
                        got.append(message.WhichOneof("kind"))
                        break
                except grpc.RpcError as error:
                    code, details = error.code().name, error.details() or ""
                stream.cancel()  # type: ignore[no-untyped-call]
                self.rec.write("open", number=number, code=code, details=details, received=got)

    # -- tokens -----------------------------------------------------------------

    async def try_tokens(self) -> None:
        await asyncio.to_thread(self._try_tokens)

    def _try_tokens(self) -> None:
        """Sessions with wrong tokens, through the sync API.

        (grpc.aio clients can report INTERNAL "Internal error from Core" instead
        of the server's status when a write races the server ending the call:
        grpc/grpc#36066. The sync API reports the server's status.)
        """
        token = self.args.token
        altered = token[:-1] + ("A" if token[-1] != "A" else "B")
        variants: list[tuple[str, tuple[tuple[str, str], ...] | None]] = [
            ("none", None),
            ("garbage", (("authorization", "Bearer arena_not-a-real-token"),)),
            ("altered", (("authorization", f"Bearer {altered}"),)),
            ("scheme", (("authorization", f"Basic {token}"),)),
        ]
        with grpc.insecure_channel(self.args.referee) as chan:
            stub = pb_grpc.BotServiceStub(chan)
            for name, metadata in variants:
                hello = pb.BotMessage(hello=pb.Hello(capacity=1, client="badbot"))
                code, details, got = "OK", "", []
                try:
                    for message in stub.Session(iter([hello]), metadata=metadata, timeout=15):
                        got.append(message.WhichOneof("kind"))
                        break
                except grpc.RpcError as error:
                    code, details = error.code().name, error.details() or ""
                self.rec.write("token", variant=name, code=code, details=details, received=got)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--referee", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--mode", choices=MODES, default="record")
    parser.add_argument("--record", required=True, help="JSON-lines file to append to")
    parser.add_argument("--capacity", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pick", choices=("random", "first", "last"), default="random")
    parser.add_argument("--delay-ms", type=int, default=0)
    parser.add_argument("--delay-count", type=int, default=1_000_000)
    parser.add_argument("--drop-after", type=int, default=2)
    parser.add_argument("--away-ms", type=int, default=300)
    parser.add_argument("--oversize-bytes", type=int, default=400 * 1024)
    parser.add_argument("--steal-from", default="")
    parser.add_argument("--max-seconds", type=float, default=120.0)
    parser.add_argument("--flood-count", type=int, default=3000)
    parser.add_argument("--sessions", type=int, default=40)
    parser.add_argument("--stall-margin-ms", type=int, default=250)
    return parser.parse_args(argv)


async def run(args: argparse.Namespace) -> None:
    bot = BadBot(args)
    try:
        await asyncio.wait_for(bot.main(), args.max_seconds)
    except TimeoutError:
        bot.rec.write("timeout")
    finally:
        for task in list(bot.tasks):
            task.cancel()
        bot.rec.write("exit")
        bot.rec.close()


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run(parse_args(sys.argv[1:])))
