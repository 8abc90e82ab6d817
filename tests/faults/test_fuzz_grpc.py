"""Fuzzing the referee's gRPC surface: odd messages and random bytes on every RPC.

One referee process (with an admin token) serves the whole module. Every
RPC it offers — BotService.Register and Session, the RefereeService calls,
grpc.health.v1.Health/Check and server reflection — gets thousands of
requests, sent concurrently over one channel:

- well-formed messages with odd values, built generically by walking the
  request's message descriptor (negative and huge numbers, empty, huge,
  unicode and NUL strings, unknown game names, long repeated fields, random
  oneof choices and option maps), half of them mutated from a valid request
  so that the deeper checks are reached too;
- random bytes as the serialized request.

Calls go with no token, the admin token, a bot's token or a wrong one. The
referee must survive all of it: every status is one that docs/protocol.md
documents for that RPC (UNKNOWN would be an exception in a servicer), it
still serves at the end, its log has no traceback, and it stops cleanly.
"""

from __future__ import annotations

import asyncio
import random
import signal
from collections import Counter
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass

import grpc
import pytest
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha import reflection_pb2

import games
from cardarena_api.v1 import arena_pb2 as pb
from tests.support.fuzzing import (
    Fuzzer,
    mutate,
    option_names,
    valid_start,
)
from tests.support.processes import Processes
from tests.support.referee import (
    ALL_GAMES,
    MAX_MESSAGE_BYTES,
    BotHandle,
    RefereeProc,
    launch_referee,
)

ADMIN_TOKEN = "fuzz-admin-token"
SEED = 20240607
WELL_FORMED = 1000  # per RPC
RANDOM_BYTES = 1000  # per RPC
IN_FLIGHT = 48  # concurrent calls on the one channel
CALL_TIMEOUT_S = 20.0

S = grpc.StatusCode

# Request bytes that do not parse as the RPC's message: plain grpcio would end
# the call with UNKNOWN and log a traceback ("raised by servicer method");
# the referee's DecodeGuard (referee/decoding.py) answers INVALID_ARGUMENT.
UNDECODABLE = S.INVALID_ARGUMENT
TOO_BIG = S.RESOURCE_EXHAUSTED

# What docs/protocol.md (Errors) says each RPC may return.
DOCUMENTED: dict[str, set[grpc.StatusCode]] = {
    "Register": {
        S.OK,
        S.INVALID_ARGUMENT,
        S.ALREADY_EXISTS,
        S.PERMISSION_DENIED,
        S.UNAUTHENTICATED,
    },
    "Session": {S.OK, S.UNAUTHENTICATED, S.INVALID_ARGUMENT},
    "StartMatch": {S.OK, S.INVALID_ARGUMENT, S.ALREADY_EXISTS, S.PERMISSION_DENIED},
    "GetMatch": {S.OK, S.NOT_FOUND},
    "WatchMatch": {S.OK, S.NOT_FOUND, S.PERMISSION_DENIED},
    "WatchPublic": {S.OK, S.NOT_FOUND},
    "GetReplay": {S.OK, S.NOT_FOUND, S.PERMISSION_DENIED},
    "ListSessions": {S.OK, S.PERMISSION_DENIED},
    "CreateAuthor": {S.OK, S.INVALID_ARGUMENT, S.ALREADY_EXISTS, S.PERMISSION_DENIED},
    "RotateAuthorToken": {S.OK, S.UNAUTHENTICATED, S.PERMISSION_DENIED},
    "RotateBotToken": {S.OK, S.NOT_FOUND, S.UNAUTHENTICATED, S.PERMISSION_DENIED, S.ABORTED},
    "TransferBot": {S.OK, S.NOT_FOUND, S.UNAUTHENTICATED, S.PERMISSION_DENIED},
    "CreateInvite": {S.OK, S.INVALID_ARGUMENT, S.UNAUTHENTICATED, S.PERMISSION_DENIED},
    "SetBot": {S.OK, S.NOT_FOUND, S.UNAUTHENTICATED, S.PERMISSION_DENIED},
    "Challenge": {
        S.OK,
        S.INVALID_ARGUMENT,
        S.NOT_FOUND,
        S.ALREADY_EXISTS,
        S.FAILED_PRECONDITION,
        S.UNAUTHENTICATED,
        S.PERMISSION_DENIED,
    },
    "BotMatches": {S.OK, S.INVALID_ARGUMENT, S.NOT_FOUND, S.UNAUTHENTICATED, S.PERMISSION_DENIED},
    "WatchSeat": {
        S.OK,
        S.NOT_FOUND,
        S.FAILED_PRECONDITION,
        S.UNAUTHENTICATED,
        S.PERMISSION_DENIED,
    },
    "Check": {S.OK, S.NOT_FOUND},
    "ServerReflectionInfo": {S.OK},
}
for _codes in DOCUMENTED.values():
    _codes.update((UNDECODABLE, TOO_BIG))


@dataclass(frozen=True)
class Rpc:
    """One method of the referee: its path, request type and shape."""

    name: str
    path: str
    request: type[Message]
    client_streaming: bool = False
    server_streaming: bool = False


def _methods() -> list[Rpc]:
    rpcs = []
    for service in pb.DESCRIPTOR.services_by_name.values():
        for method in service.methods:
            rpcs.append(
                Rpc(
                    method.name,
                    f"/{service.full_name}/{method.name}",
                    getattr(pb, method.input_type.name),
                    method.client_streaming,
                    method.server_streaming,
                )
            )
    rpcs.append(Rpc("Check", "/grpc.health.v1.Health/Check", health_pb2.HealthCheckRequest))
    rpcs.append(
        Rpc(
            "ServerReflectionInfo",
            "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
            reflection_pb2.ServerReflectionRequest,
            client_streaming=True,
            server_streaming=True,
        )
    )
    return rpcs


# StartMatch after GetMatch, WatchMatch and WatchPublic: those would wait (bounded, but slowly)
# for the end of a match it started; GetReplay, after it, asks for those matches.
ORDER = (
    "Register",
    "Session",
    "GetMatch",
    "WatchMatch",
    "WatchPublic",
    "StartMatch",
    "GetReplay",
    "ListSessions",
    "BotMatches",
    "WatchSeat",
    # After StartMatch's matches: a challenge of the fuzzed bots may start one more, and its
    # wait is bounded by the call's timeout. SetBot may turn their challenges off.
    "Challenge",
    "SetBot",
    # Last of the referee's own: rotating the fuzzed bots' tokens would close the gate
    # of Session to the fuzzer.
    "CreateAuthor",
    "CreateInvite",
    "TransferBot",
    "RotateAuthorToken",
    "RotateBotToken",
    "Check",
    "ServerReflectionInfo",
)
RPCS = sorted(_methods(), key=lambda rpc: ORDER.index(rpc.name))
assert {rpc.name for rpc in RPCS} == set(DOCUMENTED), "an RPC without documented codes"

# Sending ----------------------------------------------------------------------------------


@dataclass
class Tally:
    """The status codes an RPC answered with, per kind of request."""

    codes: Counter[tuple[str, str]]
    sent: Counter[str]
    bad: list[str]


Payload = bytes | list[bytes]

# grpcio's asyncio client may report INTERNAL "Internal error from Core" instead
# of the server's status when the server ends a client-streaming call before
# the client has sent everything (grpc/grpc#36066): the client's own error.
CLIENT_ARTIFACT = "INTERNAL (client side, grpc/grpc#36066)"


async def call(
    channel: grpc.aio.Channel, rpc: Rpc, payload: Payload, metadata: tuple[tuple[str, str], ...]
) -> tuple[grpc.StatusCode, str]:
    """Send one request (raw bytes) and read every reply; the final status and details."""
    try:
        if rpc.client_streaming:
            requests = payload if isinstance(payload, list) else [payload]

            async def chunks() -> AsyncIterator[bytes]:
                for chunk in requests:
                    yield chunk

            streamed = channel.stream_stream(rpc.path)(
                chunks(), metadata=metadata, timeout=CALL_TIMEOUT_S
            )
            async for _ in streamed:
                pass
            return await streamed.code(), await streamed.details()
        assert isinstance(payload, bytes)
        if rpc.server_streaming:
            server_stream = channel.unary_stream(rpc.path)(
                payload, metadata=metadata, timeout=CALL_TIMEOUT_S
            )
            async for _ in server_stream:
                pass
            return await server_stream.code(), await server_stream.details()
        await channel.unary_unary(rpc.path)(payload, metadata=metadata, timeout=CALL_TIMEOUT_S)
        return S.OK, ""
    except grpc.aio.AioRpcError as error:
        return error.code(), error.details() or ""


def run_fuzz(
    address: str, rpc: Rpc, requests: Sequence[tuple[str, Payload, tuple[tuple[str, str], ...]]]
) -> Tally:
    """Send every request, IN_FLIGHT at a time over one channel; tally the codes."""
    tally = Tally(Counter(), Counter(), [])

    async def main() -> None:
        options = [("grpc.max_receive_message_length", 64 * 1024 * 1024)]
        async with grpc.aio.insecure_channel(address, options=options) as channel:
            gate = asyncio.Semaphore(IN_FLIGHT)

            async def one(
                kind: str, payload: Payload, metadata: tuple[tuple[str, str], ...]
            ) -> None:
                async with gate:
                    code, details = await call(channel, rpc, payload, metadata)
                tally.sent[kind] += 1
                if (
                    rpc.client_streaming
                    and code == S.INTERNAL
                    and details == "Internal error from Core"
                ):
                    tally.codes[kind, CLIENT_ARTIFACT] += 1
                    return
                tally.codes[kind, code.name] += 1
                largest = (
                    max(map(len, payload), default=0) if isinstance(payload, list) else len(payload)
                )
                # Too big is the only RESOURCE_EXHAUSTED here (no rate limits): not, say,
                # a status message too long for the client's 16 KiB trailer limit.
                too_big = code == TOO_BIG and largest <= MAX_MESSAGE_BYTES
                if code not in DOCUMENTED[rpc.name] or too_big:
                    size = sum(map(len, payload)) if isinstance(payload, list) else len(payload)
                    tally.bad.append(
                        f"{kind} {code.name} {details[:200]!r}: {size} bytes, metadata {metadata}"
                    )

            await asyncio.gather(*(one(kind, p, m) for kind, p, m in requests))

    asyncio.run(main())
    return tally


# The referee -------------------------------------------------------------------------------


@dataclass
class Target:
    """The fuzzed referee and the bots the fuzzer may name."""

    referee: RefereeProc
    session_bot: BotHandle  # its token opens sessions
    match_bots: list[BotHandle]  # registered, never connected: matches they join forfeit


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    workdir = tmp_path_factory.mktemp("fuzz-referee")
    procs = Processes(workdir)
    try:
        # No rate limits: the fuzzer must get past them to the checks behind.
        referee = launch_referee(
            workdir,
            procs,
            "--admin-token",
            ADMIN_TOKEN,
            "--registrations-per-minute",
            "0",
            "--signups-per-minute",
            "0",
            "--session-opens-per-minute",
            "0",
            "--reads-per-minute",
            "0",
            # No quota either: RESOURCE_EXHAUSTED stays the answer to a message too big.
            "--challenges-per-hour",
            "0",
            "--challenges-at-once",
            "0",
        )
        session_bot = referee.register("fuzz-session")
        match_bots = [referee.register("fuzz-match", (game,)) for game in ALL_GAMES]
        yield Target(referee, session_bot, match_bots)
        referee.channel.close()
    finally:
        procs.close()


def metadata_choices(target: Target) -> list[tuple[tuple[str, str], ...]]:
    token = target.session_bot.token
    return [
        (),
        (("authorization", f"Bearer {ADMIN_TOKEN}"),),
        (("authorization", f"Bearer {token}"),),
        (("authorization", f"Bearer {ADMIN_TOKEN}x"),),
        (("authorization", f"Bearer  {token} "),),
        (("authorization", "Bearer"),),
        (("authorization", "Bearer "),),
        (("authorization", f"Basic {ADMIN_TOKEN}"),),
        (("authorization", f"bearer {ADMIN_TOKEN}"),),
        (("authorization", "Bearer arena_" + "A" * 43),),
        (("authorization", "Bearer author_" + "A" * 43),),
        target.referee.author(),  # the author of the fuzzed bots
        (("authorization", "Bearer " + "x" * 4000),),
    ]


def build_requests(
    target: Target, rpc: Rpc, rng: random.Random
) -> list[tuple[str, Payload, tuple[tuple[str, str], ...]]]:
    """WELL_FORMED odd messages and RANDOM_BYTES byte strings for `rpc`."""
    bot_ids = [bot.bot_id for bot in target.match_bots]
    fuzzer = Fuzzer(
        rng,
        {
            "name": ("fuzz", "bot-1", "a.b_c-d", "fuzz-session-1"),
            "version": ("1", "2", "v@1", "1.0"),
            "games": (*games.names(), "chess", "GOODGE"),
            "game": (*games.names(), "chess", "GOODGE"),
            "bot_ids": (*bot_ids, target.session_bot.bot_id, "b0000000000000000"),
            "bot_id": bot_ids,
            "bot": (*bot_ids, "fuzz-match", "fuzz-session", "fuzz-match@1", "nobody"),
            "opponents": (*bot_ids, "fuzz-match", "fuzz-session", "nobody"),
            "challenge_id": ("c-1", "c-2", "", "x" * 41, "bad id"),
            "match_id": tuple(f"fuzz-{i}" for i in range(1, 9)),
            "request_id": ("r-1", "1", ""),
            "service": (
                "",
                "cardarena_api.v1.BotService",
                "cardarena_api.v1.RefereeService",
                "grpc.health.v1.Health",
            ),
            "host": ("", "127.0.0.1"),
            "file_by_filename": ("cardarena_api/v1/arena.proto", "cardarena_api/v1/cards.proto"),
            "file_containing_symbol": (
                "cardarena_api.v1.Act",
                "cardarena_api.v1.BotService",
                "cardarena_api.v1.BotService.Session",
            ),
            "list_services": ("", "*"),
            "containing_type": ("cardarena_api.v1.Act", "grpc.health.v1.HealthCheckRequest"),
            "option_names": option_names(),
        },
    )
    choices = metadata_choices(target)
    requests: list[tuple[str, Payload, tuple[tuple[str, str], ...]]] = []

    def message() -> bytes:
        if rpc.name == "StartMatch" and rng.random() < 0.5:
            built: Message = mutate(fuzzer, valid_start(rng, bot_ids))
        elif rpc.name == "Register" and rng.random() < 0.3:
            valid = pb.RegisterRequest(name=f"fuzz-{rng.randint(1, 50)}", version="1")
            valid.games.extend(rng.sample(ALL_GAMES, rng.randint(1, 3)))
            built = mutate(fuzzer, valid)
        elif rpc.name == "Session" and rng.random() < 0.3:
            built = pb.BotMessage(
                hello=pb.Hello(
                    capacity=rng.choice((1, 4, 64, 65, 2**31 - 1)),
                    instance=rng.choice(("", "i" * 64, "i" * 65)),
                )
            )
        else:
            built = fuzzer.fill(rpc.request())
        return built.SerializeToString()

    def metadata() -> tuple[tuple[str, str], ...]:
        if rpc.name == "Session" and rng.random() < 0.6:
            return choices[2]  # the bot's token: past the gate, into the stream
        if rpc.name in ("StartMatch", "WatchMatch", "ListSessions") and rng.random() < 0.6:
            return choices[1]  # the admin token: past the gate, into the checks
        if rpc.name in ("SetBot", "Challenge", "BotMatches", "WatchSeat") and rng.random() < 0.6:
            return choices[11]  # the fuzzed bots' author: past the gate, into the checks
        return rng.choice(choices)

    for _ in range(WELL_FORMED):
        if rpc.client_streaming:
            payload: Payload = [message() for _ in range(rng.choice((0, 1, 1, 2, 3, 5)))]
        else:
            payload = message()
        requests.append(("message", payload, metadata()))
    for _ in range(RANDOM_BYTES):
        if rpc.client_streaming:
            chunks = [fuzzer.random_bytes() for _ in range(rng.choice((1, 1, 2, 3)))]
            if rng.random() < 0.5:  # a good first message, then garbage
                chunks.insert(0, message())
            payload = chunks
        else:
            payload = fuzzer.random_bytes()
        requests.append(("bytes", payload, metadata()))
    rng.shuffle(requests)
    return requests


# Tests --------------------------------------------------------------------------------------


def check_alive(referee: RefereeProc) -> None:
    assert referee.proc.poll() is None, f"the referee died:\n{referee.log_tail()}"
    reply = referee.health.Check(health_pb2.HealthCheckRequest(service=""), timeout=10)
    assert reply.status == health_pb2.HealthCheckResponse.SERVING


def traceback_free(referee: RefereeProc) -> None:
    text = referee.log.read_text(encoding="utf-8", errors="replace")
    assert "Traceback" not in text, f"the referee logged an exception:\n{text[-6000:]}"


@pytest.mark.parametrize("rpc", RPCS, ids=[rpc.name for rpc in RPCS])
def test_fuzz_rpc(target: Target, rpc: Rpc, capsys: pytest.CaptureFixture[str]) -> None:
    """Odd messages and random bytes: only documented codes, and the referee lives on."""
    rng = random.Random(f"{SEED}-{rpc.name}")
    tally = run_fuzz(target.referee.address, rpc, build_requests(target, rpc, rng))
    summary = ", ".join(f"{kind} {code}: {n}" for (kind, code), n in sorted(tally.codes.items()))
    with capsys.disabled():
        print(f"\n{rpc.name}: sent {dict(tally.sent)}; {summary}")
    assert not tally.bad, (
        f"{rpc.name}: {len(tally.bad)} undocumented codes, e.g. {tally.bad[:5]}\n"
        f"--- referee log:\n{target.referee.log_tail(60)}"
    )
    assert sum(tally.sent.values()) == WELL_FORMED + RANDOM_BYTES
    check_alive(target.referee)
    traceback_free(target.referee)


def test_referee_survives_and_stops_cleanly(target: Target) -> None:
    """After the fuzzing (run last in this module): serving, no traceback, a clean stop."""
    referee = target.referee
    check_alive(referee)
    started = [
        m for m in (f"fuzz-{i}" for i in range(1, 9)) if _exists(referee, m)
    ]  # matches the mutated StartMatch requests managed to start
    for match_id in started:
        assert referee.match(match_id).status in ("running", "finished", "aborted")
    traceback_free(referee)
    referee.proc.send_signal(signal.SIGTERM)
    assert referee.proc.wait(30) == 0, referee.log_tail()
    traceback_free(referee)


def _exists(referee: RefereeProc, match_id: str) -> bool:
    try:
        referee.match(match_id)
    except grpc.RpcError as error:
        assert error.code() == S.NOT_FOUND
        return False
    return True
