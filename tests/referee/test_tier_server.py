"""Referee replicas in one process (`referee.server.start` with a relay on a Redis of the
test's own): the bounds they share, and the readiness they report."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from collections import Counter
from pathlib import Path
from typing import Any

import grpc
import pytest
import redis.asyncio as aioredis
from grpc_health.v1 import health_pb2, health_pb2_grpc

import bots
from bots.sdk import BotRunner, register
from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import arena_pb2_grpc as pb_grpc
from referee.server import LIVENESS, SERVICE_NAMES, Referee
from tests.support.aio import eventually, replicas, run
from tests.support.processes import free_port
from tests.support.services import RedisServer
from tests.support.tcp_proxy import TcpProxy


def address(referee: Referee) -> str:
    return f"127.0.0.1:{referee.port}"


async def open_session(
    target: str,
    token: str,
    pin: str | None = None,
    seen: list[Any] | None = None,
    instance: str = "i1",
) -> grpc.StatusCode:
    """Open a session of `instance` (for replica `pin`, if named) as the SDK does (its
    Hello written on the call, no request iterator), read its Welcome and leave; OK, or
    the code it failed with. `seen` gets the Welcome, or the refusal's trailing metadata."""
    pinned = () if pin is None else (("arena-replica", pin),)
    async with grpc.aio.insecure_channel(target) as channel:
        call = pb_grpc.BotServiceStub(channel).Session(  # type: ignore[call-arg]
            metadata=(("authorization", f"Bearer {token}"), *pinned), timeout=10
        )
        try:
            await call.write(pb.BotMessage(hello=pb.Hello(capacity=1, instance=instance)))
            first = await call.read()
        except grpc.aio.AioRpcError as error:
            if seen is not None:
                seen.append(dict(error.trailing_metadata() or ()))  # type: ignore[arg-type]
            return error.code()
        assert isinstance(first, pb.RefereeMessage) and first.WhichOneof("kind") == "welcome"
        if seen is not None:
            seen.append(first.welcome)
        call.cancel()
        return grpc.StatusCode.OK


def test_a_bots_session_opens_are_counted_across_the_tier(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """2 opens a minute. Sessions that do not ask for a replica: one on each replica,
    then none on either. Sessions that ask for theirs (one on each replica, as the SDK
    keeps them, so a restart opens as many as there are replicas): 2 on each replica,
    whoever else opened there, then none on that replica."""

    async def test() -> None:
        async with replicas(tmp_path, redis_server, "a", "b", session_opens_per_minute=2) as (a, b):
            single = await register(address(a), "single", "1", ["golden10"])
            every = await register(address(a), "every", "1", ["golden10"])
            S = grpc.StatusCode
            on_a, on_b = address(a), address(b)
            assert await open_session(on_a, single.token, instance="") == S.OK
            assert await open_session(on_b, single.token, instance="") == S.OK
            assert await open_session(on_b, single.token, instance="") == S.RESOURCE_EXHAUSTED
            assert await open_session(on_a, single.token, instance="") == S.RESOURCE_EXHAUSTED
            for replica, name in ((on_a, "a"), (on_b, "b")):
                for _ in range(2):
                    assert await open_session(replica, every.token, name) == S.OK
            assert await open_session(on_a, every.token, "a") == S.RESOURCE_EXHAUSTED
            assert await open_session(on_b, every.token, "b") == S.RESOURCE_EXHAUSTED

    run(test, 90)


def test_a_session_for_another_replica_is_refused_before_it_counts(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """A session asking for replica b that reaches a is FAILED_PRECONDITION, naming the
    live replicas, and is not counted among the bot's opens; Welcome names both. Every
    refusal is that one: a refusal sent before the bot's Hello was read raced its write,
    and about 1 in 50 reached the bot as the transport's INTERNAL, naming nothing."""

    async def test() -> None:
        async with replicas(tmp_path, redis_server, "a", "b", session_opens_per_minute=1) as (
            a,
            b,
        ):
            assert a.tier is not None and b.tier is not None
            await a.tier.beat()
            reply = await register(address(a), "pinned", "1", ["golden10"])
            seen: list[Any] = []
            codes = [await open_session(address(a), reply.token, "b", seen) for _ in range(200)]
            assert set(codes) == {grpc.StatusCode.FAILED_PRECONDITION}, Counter(codes)
            assert all(said == {"arena-replicas": "a,b"} for said in seen), seen
            assert await open_session(address(b), reply.token, "b", seen) == grpc.StatusCode.OK
            welcome = seen[-1]
            assert (welcome.replica, list(welcome.replicas)) == ("b", ["a", "b"])

    run(test, 90)


def test_a_session_with_a_wrong_token_is_unauthenticated_every_time(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """A made-up token, opened the SDK's way 200 times: UNAUTHENTICATED every time, in
    its one line. Refused before the bot's Hello was read, about 1 in 50 raced the
    Hello's write and reached the bot as the transport's INTERNAL, naming nothing."""

    async def test() -> None:
        async with replicas(tmp_path, redis_server, "a") as (a,):
            wrong = "arena_" + "x" * 32  # a bot token's form, known to nobody
            codes = [await open_session(address(a), wrong) for _ in range(200)]
            assert set(codes) == {grpc.StatusCode.UNAUTHENTICATED}, Counter(codes)

    run(test, 90)


def test_a_session_counts_among_the_opens_before_its_hello(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """2 opens a minute: two sessions that never send their Hello use them up (the bound
    is not for those that say Hello only), so a third that does is refused at once. A
    session for another replica that sends nothing is refused within a moment, not
    after the 10 s a Hello may take."""

    async def test() -> None:
        async with replicas(tmp_path, redis_server, "a", "b", session_opens_per_minute=2) as (a, b):
            reply = await register(address(a), "mute", "1", ["golden10"])
            bucket = f"arena:rate:session-opens:{reply.bot_id}"
            client = aioredis.Redis.from_url(redis_server.url)
            async with grpc.aio.insecure_channel(address(a)) as channel:
                stub = pb_grpc.BotServiceStub(channel)
                auth = (("authorization", f"Bearer {reply.token}"),)
                mute = [stub.Session(metadata=auth) for _ in range(2)]  # type: ignore[call-arg]

                async def used_up() -> bool:
                    tokens = await client.hget(bucket, "tokens")
                    return tokens is not None and float(tokens) < 1

                await eventually(used_up, "two mute sessions counted", 30)
                code = await open_session(address(b), reply.token, instance="")
                assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
                pinned = stub.Session(metadata=(*auth, ("arena-replica", "b")))  # type: ignore[call-arg]
                started = time.monotonic()
                assert await pinned.code() == grpc.StatusCode.FAILED_PRECONDITION
                assert time.monotonic() - started < 5
                for call in mute:
                    call.cancel()
            await client.aclose()

    run(test, 90)


async def statuses(target: str, names: tuple[str, ...]) -> set[str]:
    """The health of each of `names` ("" for the whole server)."""
    async with grpc.aio.insecure_channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        replies = [
            await stub.Check(health_pb2.HealthCheckRequest(service=name), timeout=5)
            for name in names
        ]
    return {health_pb2.HealthCheckResponse.ServingStatus.Name(r.status) for r in replies}


async def health_becomes(target: str, status: str, timeout_s: float = 30.0) -> None:
    """Wait until the server and its services are `status`; meanwhile it stays alive."""
    deadline = time.monotonic() + timeout_s
    while (seen := await statuses(target, ("", *SERVICE_NAMES))) != {status}:
        assert time.monotonic() < deadline, f"health {seen}, waiting for {status}"
        assert await statuses(target, (LIVENESS,)) == {"SERVING"}
        await asyncio.sleep(0.1)


def test_a_replica_that_cannot_reach_the_relay_is_not_serving_until_it_can_again(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """Readiness follows the relay: with its Redis paused (SIGSTOP), the replica's health
    turns NOT_SERVING (a load balancer sends nobody there), and SERVING again after; its
    liveness stays SERVING throughout (nothing restarts it)."""
    assert redis_server.proc is not None
    pid = redis_server.proc.pid

    async def test() -> None:
        async with replicas(tmp_path, redis_server, "a") as (a,):
            await health_becomes(address(a), "SERVING")
            os.kill(pid, signal.SIGSTOP)
            try:
                await health_becomes(address(a), "NOT_SERVING")
                # Nor does it take a match: the caller is told to ask another replica.
                async with grpc.aio.insecure_channel(address(a)) as channel:
                    try:
                        await pb_grpc.RefereeServiceStub(channel).StartMatch(
                            pb.StartMatchRequest(
                                match_id="m1", game="golden10", players=3, bot_ids=["x", "y", "z"]
                            ),
                            timeout=10,
                        )
                    except grpc.aio.AioRpcError as error:
                        assert error.code() == grpc.StatusCode.UNAVAILABLE, error
                        assert "cannot reach Redis" in (error.details() or ""), error
                    else:
                        raise AssertionError("StartMatch succeeded on a replica without Redis")
            finally:
                os.kill(pid, signal.SIGCONT)
            await health_becomes(address(a), "SERVING")

    run(test, 90)


@pytest.mark.parametrize("fault", ["cut", "frozen"])
def test_a_replica_that_cannot_reach_the_relay_opens_no_session(
    tmp_path: Path, redis_server: RedisServer, fault: str
) -> None:
    """A session opened on b while b cannot reach Redis could not be published: a, whose
    match has a seat of the bot, would find it nowhere and strike it. It is refused
    instead (UNAVAILABLE, the arena's fault), and the bot connects again: elsewhere, or
    here once b reaches Redis again, and then the other replicas find it here."""
    proxy, through = TcpProxy.before(redis_server.url)

    async def test() -> None:
        async with (
            replicas(tmp_path, redis_server, "a") as (a,),
            replicas(tmp_path, redis_server, "b", relay_url=through) as (b,),
        ):
            assert a.tier is not None
            bot = await register(address(a), "moving", "1", ["golden10"])
            proxy.cut() if fault == "cut" else proxy.freeze()
            try:
                seen: list[Any] = []
                code = await open_session(address(b), bot.token, instance="", seen=seen)
                assert code == grpc.StatusCode.UNAVAILABLE, seen
                assert await a.tier.registry.locate(bot.bot_id) is None
            finally:
                proxy.restore() if fault == "cut" else proxy.thaw()

            async def opened() -> bool:
                code = await open_session(address(b), bot.token, instance="")
                return code == grpc.StatusCode.OK

            await eventually(opened, "a session on b once b reaches Redis again", 30)

    with proxy:
        run(test, 90)


def test_a_bot_holds_a_session_on_every_replica_and_its_matches_relay_no_move(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """Two replicas behind one port: the Python SDK's bot keeps a session on each (its
    sessions for one replica that land on the other are refused, and tried again), so a
    match is played where all its bots are, with no move relayed. A bot of one session
    keeps one."""

    async def test() -> None:
        port = free_port()
        target = f"127.0.0.1:{port}"
        async with replicas(tmp_path, redis_server, "a", "b", port=port) as tier:
            tokens = [
                (await register(target, f"everywhere-{n}", "1", ["golden10"])) for n in range(3)
            ]
            lone = await register(target, "lone", "1", ["golden10"])
            runners = [BotRunner(bots.load("random"), target, r.token, 2) for r in tokens]
            runners.append(
                BotRunner(bots.load("random"), target, lone.token, 1, every_replica=False)
            )
            playing = [asyncio.create_task(runner.run()) for runner in runners]
            assert tier[0].tier is not None
            registry = tier[0].tier.registry
            everywhere = [r.bot_id for r in tokens]

            async def held() -> dict[str, list[str]]:
                found = await registry.held_by([*everywhere, lone.bot_id], ["a", "b"])
                return {bot: sorted(names) for bot, names in found.items()}

            async def settled() -> bool:
                found = await held()
                return all(found[bot] == ["a", "b"] for bot in everywhere) and (
                    len(found[lone.bot_id]) == 1
                )

            # The replicas started one after the other: the first Welcomes may name one
            # replica only, and the tier's Replicas message names the other when it joins.
            await eventually(settled, "every bot on both replicas, the lone one on one", 30)
            async with grpc.aio.insecure_channel(target) as channel:
                stub = pb_grpc.RefereeServiceStub(channel)
                await stub.StartMatch(
                    pb.StartMatchRequest(
                        match_id="everywhere",
                        game="golden10",
                        players=3,
                        bot_ids=everywhere,
                        options={"rounds": "1"},
                    ),
                    timeout=10,
                )
                done = await stub.GetMatch(
                    pb.GetMatchRequest(match_id="everywhere", wait=True), timeout=60
                )
            assert done.status == "finished"
            relayed = sum(r.metrics.relayed.labels("sent")._value.get() for r in tier)
            assert relayed == 0
            # Still so: nothing replaced or closed a sibling meanwhile.
            assert await settled()
            for runner in runners:
                runner.stop()
            await asyncio.gather(*playing)

    run(test, 120)


class Records(logging.Handler):
    """The warnings logged to a logger, as they come."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_a_replica_the_bots_address_never_reaches_is_given_up(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """Two replicas on two ports, a bot of the SDK given b's: every connection for a lands
    on b (as behind a load balancer that keeps a client on one replica). After a few
    rounds it gives a up, in one line, and stops connecting for it; it keeps its session
    on b and plays there."""

    async def test() -> None:
        async with replicas(tmp_path, redis_server, "a", "b") as (a, b):
            assert a.tier is not None
            await a.tier.beat()
            reply = await register(address(b), "kept", "1", ["golden10"])
            runner = BotRunner(bots.load("random"), address(b), reply.token, 1)
            records = Records()
            sdk_log = logging.getLogger("bots.sdk")
            sdk_log.addHandler(records)
            playing = asyncio.create_task(runner.run())
            try:

                async def given_up() -> list[str]:
                    return [m for m in records.messages if "giving it up" in m]

                said = await eventually(given_up, "the bot gives replica a up", 60)
                assert len(said) == 1 and "replica a" in said[0], said
                tries = len([m for m in records.messages if "(replica a)" in m])
                assert b.tier is not None
                held = await b.tier.registry.held_by([reply.bot_id], ["a", "b"])
                assert sorted(held[reply.bot_id]) == ["b"]
                # None for a since: a round of refusals comes within a second otherwise.
                await asyncio.sleep(2.0)
                assert len([m for m in records.messages if "(replica a)" in m]) == tries
                assert [m for m in records.messages if "giving it up" in m] == said
                assert not playing.done()
            finally:
                sdk_log.removeHandler(records)
                runner.stop()
                await asyncio.wait_for(playing, 30)

    run(test, 120)
