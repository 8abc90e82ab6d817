"""The bots' Session call when the bot goes away while its session opens.

The referee reads the token a second time once the session is open (a rotation
may have come meanwhile). A bot gone during that read cancels the call there:
its session must close, or it would stay connected for good, held by nobody,
and be asked for moves that nobody reads.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import grpc
import pytest

from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import arena_pb2_grpc as pb_grpc
from ladder.store import Store
from tests.support.aio import eventually, lone_referee, run


def test_a_bot_gone_while_its_token_is_read_again_leaves_no_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reading = threading.Event()
    release = threading.Event()
    reads: list[str] = []
    read = Store.bot_by_token

    def held(store: Store, token: str) -> Any:
        reads.append(token)
        if len(reads) == 2:  # the read after the session opened
            reading.set()
            release.wait(30)
        return read(store, token)

    async def test() -> None:
        async with lone_referee(tmp_path) as referee:
            try:
                async with grpc.aio.insecure_channel(f"127.0.0.1:{referee.port}") as channel:
                    stub = pb_grpc.BotServiceStub(channel)
                    request = pb.RegisterRequest(name="gone", version="1", games=["goof"])
                    token = (await stub.Register(request)).token
                    monkeypatch.setattr(Store, "bot_by_token", held)
                    call = stub.Session(metadata=(("authorization", f"Bearer {token}"),))  # type: ignore[call-arg]
                    await call.write(pb.BotMessage(hello=pb.Hello(capacity=1)))
                    assert await asyncio.to_thread(reading.wait, 30), "the token was not read again"
                    assert [s.bot_id for s in referee.hub.connected()], "the session did not open"
                    call.cancel()  # the bot goes away while its token is read

                    async def noticed() -> bool:
                        return not referee.hub.connected()

                    release.set()
                    await eventually(noticed, "the gone bot's session to close")
            finally:
                release.set()  # before the stop: a read held would hold it up

    run(test)
