"""Referee replicas in one process (`referee.server.start` with a relay on a Redis of the
test's own): the bounds they share, and the readiness they report."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import arena_pb2_grpc as pb_grpc
from referee.server import LIVENESS, SERVICE_NAMES, Referee
from tests.support.aio import replicas, run
from tests.support.services import RedisServer


def address(referee: Referee) -> str:
    return f"127.0.0.1:{referee.port}"


async def open_session(target: str, token: str) -> grpc.StatusCode:
    """Open a session, read its Welcome and leave; OK, or the code it failed with."""
    async with grpc.aio.insecure_channel(target) as channel:
        call = pb_grpc.BotServiceStub(channel).Session(
            iter([pb.BotMessage(hello=pb.Hello(capacity=1))]),
            metadata=(("authorization", f"Bearer {token}"),),
            timeout=10,
        )
        try:
            first = await call.read()
        except grpc.aio.AioRpcError as error:
            return error.code()
        assert isinstance(first, pb.RefereeMessage) and first.WhichOneof("kind") == "welcome"
        call.cancel()
        return grpc.StatusCode.OK


def test_a_bots_session_opens_are_counted_across_the_tier(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """2 opens a minute: one on each replica, then none on either."""

    async def test() -> None:
        async with replicas(tmp_path, redis_server, "a", "b", session_opens_per_minute=2) as (a, b):
            async with grpc.aio.insecure_channel(address(a)) as channel:
                reply = await pb_grpc.BotServiceStub(channel).Register(
                    pb.RegisterRequest(name="opener", version="1", games=["golden10"])
                )
            assert await open_session(address(a), reply.token) == grpc.StatusCode.OK
            assert await open_session(address(b), reply.token) == grpc.StatusCode.OK
            assert await open_session(address(b), reply.token) == (
                grpc.StatusCode.RESOURCE_EXHAUSTED
            )
            assert await open_session(address(a), reply.token) == (
                grpc.StatusCode.RESOURCE_EXHAUSTED
            )

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
