"""A stopped bot ends, whatever its session was doing: here, still connecting to a
referee that accepted the connection and has not answered (a busy replica, a load
balancer's queue). grpc.aio's first write on a call cancelled before its metadata went
out never returns, so the SDK must not leave its opening Hello to the call's cancel."""

from __future__ import annotations

import asyncio

import bots
from bots.sdk import BotRunner
from tests.support.aio import run


def test_a_bot_stopped_while_its_session_connects_ends() -> None:
    async def test() -> None:
        accepted = asyncio.Event()
        held: list[asyncio.StreamWriter] = []

        def silent(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            held.append(writer)  # kept open, never a byte of HTTP/2 back
            accepted.set()

        server = await asyncio.start_server(silent, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        runner = BotRunner(bots.load("random"), f"127.0.0.1:{port}", "arena_token")
        task = asyncio.create_task(runner.run())
        await asyncio.wait_for(accepted.wait(), 30)
        runner.stop()
        await asyncio.wait_for(task, 10)
        assert runner.stats.sessions == 0
        for writer in held:
            writer.close()
        server.close()

    run(test, 60)
