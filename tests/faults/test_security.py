"""Security of the referee: who may call what, how tokens are kept, the bounds, TLS.

A referee process with an admin token and admin-only registration serves the
permission tests; an in-process referee (`referee.server.start`, in a thread
of its own) with small bounds serves the token-storage and rate-bound tests;
a referee process with a self-signed certificate serves the TLS test.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import hmac
import sqlite3
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

import bots
from bots.sdk import BotRunner
from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import arena_pb2_grpc as pb_grpc
from referee.server import Referee, start
from referee.settings import RefereeSettings
from tests.support.processes import PYTHON, Processes, free_port, wait_until
from tests.support.referee import (
    BotHandle,
    RefereeProc,
    launch_referee,
    replay_logs,
    result_of,
)

ADMIN = "admin-" + uuid.uuid4().hex
GAMES = ["golden10"]
ONE_ROUND = {"rounds": "1"}
DENIED = grpc.StatusCode.PERMISSION_DENIED


def admin(token: str = ADMIN) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def code_of(call: Callable[[], Any]) -> grpc.StatusCode:
    """The status code a call ends with (OK if it returns)."""
    try:
        call()
    except grpc.RpcError as error:
        return error.code()
    return grpc.StatusCode.OK


# -- a referee process with an admin token -----------------------------------------


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RefereeProc]:
    """`arena referee --admin-token T --registration admin`."""
    workdir = tmp_path_factory.mktemp("guarded")
    procs = Processes(workdir)
    try:
        ref = launch_referee(workdir, procs, "--admin-token", ADMIN, "--registration", "admin")
        yield ref
        ref.channel.close()
    finally:
        procs.close()


def register(referee: RefereeProc, prefix: str) -> BotHandle:
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    reply = referee.bots.Register(
        pb.RegisterRequest(name=name, version="1", games=GAMES), metadata=admin(), timeout=10
    )
    return BotHandle(name, reply.bot_id, reply.token)


def wait_connected(referee: RefereeProc, handles: Sequence[BotHandle]) -> None:
    def connected() -> bool:
        reply = referee.matches.ListSessions(pb.ListSessionsRequest(), metadata=admin(), timeout=10)
        return {h.bot_id for h in handles} <= {s.bot_id for s in reply.sessions}

    wait_until(connected, 30, "bots to connect", 0.1)


def test_operator_calls_need_the_admin_token(guarded: RefereeProc) -> None:
    """StartMatch, WatchMatch and ListSessions without the admin token, or with a
    wrong one (a bot's token included), end PERMISSION_DENIED; with it they work."""
    bot = register(guarded, "op")
    start_request = pb.StartMatchRequest(
        match_id="op-" + uuid.uuid4().hex[:8], game="golden10", players=3, bot_ids=[bot.bot_id] * 3
    )
    Metadata = tuple[tuple[str, str], ...] | None

    def start_match(metadata: Metadata) -> object:
        return guarded.matches.StartMatch(start_request, metadata=metadata, timeout=10)

    def watch_match(metadata: Metadata) -> object:
        request = pb.GetMatchRequest(match_id="nope")
        return next(iter(guarded.matches.WatchMatch(request, metadata=metadata, timeout=10)))

    def list_sessions(metadata: Metadata) -> object:
        return guarded.matches.ListSessions(pb.ListSessionsRequest(), metadata=metadata, timeout=10)

    for metadata in (None, admin("wrong"), admin(ADMIN + "x"), admin(bot.token)):
        for call in (start_match, watch_match, list_sessions):
            assert code_of(functools.partial(call, metadata)) == DENIED, (call, metadata)
    assert (
        code_of(
            lambda: guarded.matches.ListSessions(
                pb.ListSessionsRequest(), metadata=admin(), timeout=10
            )
        )
        == grpc.StatusCode.OK
    )


def test_registration_can_be_admin_only(guarded: RefereeProc) -> None:
    """With --registration admin, Register needs the admin token: no token or an unknown
    one is UNAUTHENTICATED, an author's PERMISSION_DENIED."""
    request = pb.RegisterRequest(name="reg-" + uuid.uuid4().hex[:8], version="1", games=GAMES)
    unknown = grpc.StatusCode.UNAUTHENTICATED
    for metadata, code in ((None, unknown), (admin("wrong"), unknown), (guarded.author(), DENIED)):
        call = functools.partial(guarded.bots.Register, request, metadata=metadata, timeout=10)
        assert code_of(call) == code, metadata
    reply = guarded.bots.Register(request, metadata=admin(), timeout=10)
    assert reply.bot_id and reply.token.startswith("arena_")


def test_bots_see_and_touch_only_their_own_seats(guarded: RefereeProc, tmp_path: Path) -> None:
    """A thief answering a victim's requests gets 'no open request' each time and
    changes none of the victim's moves. While the match runs, WatchMatch and
    GetReplay need the admin token; once it ends the replay is public."""
    group = Processes(tmp_path)
    try:
        victim = register(guarded, "victim")
        thief = register(guarded, "thief")
        other = register(guarded, "other")
        guarded.run_badbot(
            "record", victim, "--pick", "last", "--delay-ms", "400", "--delay-count", "5",
            wait=False, procs=group,
        )  # fmt: skip
        assert victim.record is not None
        guarded.run_badbot(
            "steal", thief, "--steal-from", str(victim.record), wait=False, procs=group
        )
        guarded.run_bot("random", other, procs=group)
        wait_connected(guarded, [victim, thief, other])
        match_id = "sec-" + uuid.uuid4().hex[:8]
        seats = [victim, thief, other]
        guarded.matches.StartMatch(
            pb.StartMatchRequest(
                match_id=match_id,
                game="golden10",
                players=3,
                bot_ids=[b.bot_id for b in seats],
                deadline_ms=3000,
                seed=3,
                options=ONE_ROUND,
            ),
            metadata=admin(),
            timeout=10,
        )
        watch = pb.GetMatchRequest(match_id=match_id)
        # Running: no watching, no replay without the admin token (the victim's
        # first five answers take 0.4 s each, so it runs for two seconds or more).
        assert code_of(lambda: next(iter(guarded.matches.WatchMatch(watch, timeout=10)))) == DENIED
        assert code_of(lambda: guarded.matches.GetReplay(watch, timeout=10)) == DENIED
        assert code_of(
            lambda: guarded.matches.GetReplay(watch, metadata=admin("x"), timeout=10)
        ) == (DENIED)
        status = guarded.matches.GetMatch(watch, timeout=10).status
        assert status == "running", "the checks above ran while the match was running"
        first = next(iter(guarded.matches.WatchMatch(watch, metadata=admin(), timeout=10)))
        assert first.type
        guarded.matches.GetReplay(watch, metadata=admin(), timeout=10)
        result = result_of(guarded.wait_match(match_id))
        # Finished: the replay is public.
        assert len(guarded.matches.GetReplay(watch, timeout=10).games) == 1
    finally:
        group.close()
    assert set(result["strikes"].values()) == {0}
    stolen = {r["request_id"] for r in thief.records() if r["kind"] == "stole"}
    asked = {m["act"]["request_id"] for m in victim.received("act")}
    assert asked and asked <= stolen
    refused = {m["error"]["message"] for m in thief.received("error")}
    assert all(f"no open request '{rid}' for this bot" in refused for rid in stolen)
    sent = {r["request_id"]: r["text"] for r in victim.records() if r["kind"] == "sent"}
    acts = [m["act"]["request_id"] for m in victim.received("act")]
    (_, log, _), *_ = replay_logs(guarded, match_id)  # over: no admin token needed
    assert [a for s, a in log["moves"] if s == 0] == [sent[rid] for rid in acts]


# -- an in-process referee with small bounds -----------------------------------------


class InProcess:
    """`referee.server.start` on an event loop in a thread of its own."""

    def __init__(self, settings: RefereeSettings) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.referee: Referee = self.run(start(settings))
        self.address = f"127.0.0.1:{self.referee.port}"
        self.channel = grpc.insecure_channel(self.address)
        self.bots = pb_grpc.BotServiceStub(self.channel)
        self.matches = pb_grpc.RefereeServiceStub(self.channel)
        author = pb_grpc.AuthorServiceStub(self.channel).CreateAuthor(
            pb.CreateAuthorRequest(name="tester"), timeout=10
        )
        self.author = admin(author.token)
        """Metadata with the token of an author who signed up (open on loopback)."""

    def run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(30)

    def close(self) -> None:
        self.channel.close()
        self.run(self.referee.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


LIMITS = {
    "registrations_per_minute": 3,
    "session_opens_per_minute": 2,
    "stray_messages_per_second": 10.0,
    "flood_limit": 20,
    "max_message_bytes": 4096,
    "reads_per_minute": 5,
}


@pytest.fixture
def inproc(tmp_path: Path) -> Iterator[InProcess]:
    settings = RefereeSettings(
        listen="127.0.0.1:0",
        database_url=f"sqlite:///{tmp_path / 'arena.db'}",
        metrics_port=None,
        admin_token=ADMIN,
        shutdown_grace_s=1,
        **LIMITS,  # type: ignore[arg-type]
    )
    referee = InProcess(settings)
    try:
        yield referee
    finally:
        referee.close()


def hello_session(
    stub: pb_grpc.BotServiceStub, token: str, extra: Sequence[pb.BotMessage] = ()
) -> tuple[grpc.StatusCode, str, list[str]]:
    """A session: Hello and `extra`, read until it ends; (code, details, kinds received)."""
    hello = pb.BotMessage(hello=pb.Hello(capacity=1, client="test"))
    kinds: list[str] = []
    try:
        for message in stub.Session(iter([hello, *extra]), metadata=admin(token), timeout=10):
            kinds.append(str(message.WhichOneof("kind")))
    except grpc.RpcError as error:
        return error.code(), error.details() or "", kinds
    return grpc.StatusCode.OK, "", kinds


def test_tokens_are_stored_hashed_and_compared_in_constant_time(
    inproc: InProcess, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bots table keeps no token, only its sha256; the referee checks bot and
    admin tokens with hmac.compare_digest."""
    compared: list[tuple[Any, Any]] = []
    original = hmac.compare_digest

    def recording(a: Any, b: Any) -> bool:
        compared.append((a, b))
        return original(a, b)

    monkeypatch.setattr(hmac, "compare_digest", recording)
    reply = inproc.bots.Register(
        pb.RegisterRequest(name="hashed", version="1", games=GAMES), metadata=inproc.author
    )
    digest = hashlib.sha256(reply.token.encode()).hexdigest()

    code, _, kinds = hello_session(inproc.bots, reply.token)
    assert code == grpc.StatusCode.OK and kinds == ["welcome"]
    assert (digest, digest) in compared, "the bot's token hash was compared with compare_digest"
    compared.clear()
    inproc.matches.ListSessions(pb.ListSessionsRequest(), metadata=admin(), timeout=10)
    assert (ADMIN.encode(), ADMIN.encode()) in compared, "the admin token too"

    with sqlite3.connect(tmp_path / "arena.db") as db:
        columns = [row[1] for row in db.execute("PRAGMA table_info(bots)")]
        [(stored,)] = db.execute("SELECT token_hash FROM bots WHERE id = ?", (reply.bot_id,))
    assert [c for c in columns if "token" in c] == ["token_hash"]
    assert stored == digest
    assert reply.token.encode() not in (tmp_path / "arena.db").read_bytes()


def test_bounds_on_registrations_sessions_strays_and_sizes(inproc: InProcess) -> None:
    """Each bound ends the call RESOURCE_EXHAUSTED: a fourth registration a minute
    from one address (the admin is exempt), a third session open a minute by one
    bot, a flood of stray answers, a message over the size limit."""
    exhausted = grpc.StatusCode.RESOURCE_EXHAUSTED
    replies = []
    for number in range(3):
        request = pb.RegisterRequest(name=f"bound-{number}", version="1", games=GAMES)
        replies.append(inproc.bots.Register(request, metadata=inproc.author, timeout=10))
    request = pb.RegisterRequest(name="bound-3", version="1", games=GAMES)
    with pytest.raises(grpc.RpcError) as refused:
        inproc.bots.Register(request, metadata=inproc.author, timeout=10)
    assert refused.value.code() == exhausted
    assert "more than 3 registrations a minute" in (refused.value.details() or "")
    inproc.bots.Register(request, metadata=admin(), timeout=10)

    token = replies[0].token
    assert hello_session(inproc.bots, token)[0] == grpc.StatusCode.OK
    # Twenty-five stray answers (rate 10/s, flood limit 20) end the second session.
    junk = [pb.BotMessage(answer=pb.Answer(request_id=f"r{n}", index=0)) for n in range(60)]
    code, details, kinds = hello_session(inproc.bots, token, junk)
    assert code == exhausted and details.startswith("flooding: more than 20"), (code, details)
    assert kinds[0] == "welcome" and kinds.count("error") >= 10
    code, details, _ = hello_session(inproc.bots, token)
    assert code == exhausted and "more than 2 sessions in a minute" in details
    # Another bot is not affected by the first one's bound.
    assert hello_session(inproc.bots, replies[1].token)[0] == grpc.StatusCode.OK

    big = pb.RegisterRequest(name="x" * 5000, version="1", games=GAMES)
    with pytest.raises(grpc.RpcError) as too_big:
        inproc.bots.Register(big, metadata=admin(), timeout=10)
    assert too_big.value.code() == exhausted


def test_match_reads_are_bounded_per_address(inproc: InProcess) -> None:
    """GetMatch, GetReplay and WatchMatch share a bound per address (5 a minute
    here); callers with the admin token are exempt."""
    unknown = pb.GetMatchRequest(match_id="no-such-match")
    calls = [
        lambda: inproc.matches.GetMatch(unknown, timeout=10),
        lambda: inproc.matches.GetReplay(unknown, timeout=10),
    ]
    codes = [code_of(calls[n % 2]) for n in range(5)]
    assert set(codes) == {grpc.StatusCode.NOT_FOUND}
    for call in calls:
        with pytest.raises(grpc.RpcError) as refused:
            call()
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "more than 5 match reads a minute" in (refused.value.details() or "")
    watched = inproc.matches.WatchMatch(unknown, metadata=admin(), timeout=10)
    assert code_of(lambda: next(iter(watched))) == grpc.StatusCode.NOT_FOUND
    assert (
        code_of(lambda: inproc.matches.GetMatch(unknown, metadata=admin(), timeout=10))
        == grpc.StatusCode.NOT_FOUND
    )


# -- TLS ----------------------------------------------------------------------------


def self_signed(workdir: Path) -> tuple[Path, Path]:
    """A certificate for localhost and 127.0.0.1 and its key (openssl CLI)."""
    cert, key = workdir / "cert.pem", workdir / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
            "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )  # fmt: skip
    return cert, key


def test_tls_referee_plays_a_match_and_refuses_plaintext(tmp_path: Path) -> None:
    """`arena referee --tls-cert --tls-key`: bots given the CA (BotRunner tls_ca)
    play a match over TLS; a plaintext client gets nowhere."""
    cert, key = self_signed(tmp_path)
    ca = cert.read_bytes()
    address = f"127.0.0.1:{free_port()}"
    procs = Processes(tmp_path)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    runners: list[BotRunner] = []
    running: list[Any] = []
    try:
        procs.start(
            "referee",
            [
                PYTHON, "-m", "arena_cli.main", "referee", "--listen", address,
                "--db", f"sqlite:///{tmp_path / 'arena.db'}", "--metrics-port", "0",
                "--tls-cert", str(cert), "--tls-key", str(key), "--shutdown-grace-s", "1",
            ],
        )  # fmt: skip
        # Retry the connection quickly while the referee starts (default back-off: seconds).
        quick = [("grpc.initial_reconnect_backoff_ms", 100), ("grpc.max_reconnect_backoff_ms", 300)]
        secure = grpc.secure_channel(address, grpc.ssl_channel_credentials(ca), options=quick)
        health = health_pb2_grpc.HealthStub(secure)

        def serving() -> bool:
            try:
                reply = health.Check(health_pb2.HealthCheckRequest(), timeout=1)
            except grpc.RpcError:
                return False
            return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)

        wait_until(serving, 30, "the TLS referee to serve", 0.1)
        with grpc.insecure_channel(address) as plain:
            code = code_of(
                lambda: health_pb2_grpc.HealthStub(plain).Check(
                    health_pb2.HealthCheckRequest(), timeout=3
                )
            )
            assert code == grpc.StatusCode.UNAVAILABLE

        bot_stub = pb_grpc.BotServiceStub(secure)
        author = pb_grpc.AuthorServiceStub(secure).CreateAuthor(
            pb.CreateAuthorRequest(name="tls-author"), timeout=10
        )
        ids = []
        thread.start()
        for number in range(3):
            reply = bot_stub.Register(
                pb.RegisterRequest(name=f"tls-{number}", version="1", games=GAMES),
                metadata=admin(author.token),
                timeout=10,
            )
            ids.append(reply.bot_id)
            runner = BotRunner(bots.load("random"), address, reply.token, 2, tls_ca=ca)
            runners.append(runner)
            running.append(asyncio.run_coroutine_threadsafe(runner.run(), loop))
        matches = pb_grpc.RefereeServiceStub(secure)
        wait_until(
            lambda: (
                set(ids)
                <= {s.bot_id for s in matches.ListSessions(pb.ListSessionsRequest()).sessions}
            ),
            30,
            "the TLS bots to connect",
            0.1,
        )
        started = time.monotonic()
        matches.StartMatch(
            pb.StartMatchRequest(
                match_id="tls-match", game="golden10", players=3, bot_ids=ids, options=ONE_ROUND
            ),
            timeout=10,
        )
        match = matches.GetMatch(pb.GetMatchRequest(match_id="tls-match", wait=True), timeout=60)
        result = result_of(match)
        assert set(result["strikes"].values()) == {0} and not result["forfeits"]
        assert time.monotonic() - started < 60
        assert all(runner.stats.answered > 0 for runner in runners)
        secure.close()
    finally:
        for runner in runners:
            loop.call_soon_threadsafe(runner.stop)
        for future in running:
            future.result(15)
        if thread.is_alive():
            loop.call_soon_threadsafe(loop.stop)
            thread.join(10)
        loop.close()
        procs.close()


def test_names_and_versions_with_control_characters_are_refused(inproc: InProcess) -> None:
    """A bidi override or another control or format character could make one bot's
    name read as another's on the standings: Register refuses it."""
    for name, version in [
        ("good\u202ebot", "1"),
        ("bot", "1\u202e0"),
        ("bot", "v\u2066x"),
        ("bot", "1\x00"),
        ("zero\u200bwidth", "1"),
    ]:
        request = pb.RegisterRequest(name=name, version=version, games=GAMES)
        with pytest.raises(grpc.RpcError) as refused:
            inproc.bots.Register(request, metadata=admin(), timeout=10)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT, (name, version)
    fine = pb.RegisterRequest(name="plain-bot", version="1.0 beta", games=GAMES)
    assert inproc.bots.Register(fine, metadata=admin(), timeout=10).bot_id
