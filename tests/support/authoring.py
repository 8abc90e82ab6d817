"""Authors, their bots and challenges on a tier of two in-process referee replicas, for
the fault tests: replica a on 127.0.0.1 and b on [::1] (so their clients come from two
addresses), one database, one relay, an admin token; the stubs of a replica; a bot that
holds its matches until told; the refusal a call must end in."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import grpc

import bots
from bots.sdk import BotRunner
from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import arena_pb2_grpc as pb_grpc
from referee.server import Referee
from tests.support.aio import eventually, replicas
from tests.support.services import RedisServer

ADMIN = "authors-admin-token"


def tier(
    tmp_path: Path, redis: RedisServer, signup: str = "open", **settings: Any
) -> AbstractAsyncContextManager[list[Referee]]:
    """Replicas a (127.0.0.1) and b ([::1]) with the admin token, sign-up `signup`, and
    `settings`."""
    return replicas(
        tmp_path,
        redis,
        "a",
        "b",
        hosts=("127.0.0.1", "[::1]"),
        admin_token=ADMIN,
        signup_mode=signup,
        **settings,
    )


def auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


async def code_of(call: object) -> grpc.StatusCode:
    try:
        await call  # type: ignore[misc]
    except grpc.aio.AioRpcError as error:
        return error.code()
    return grpc.StatusCode.OK


async def refusal(call: object, code: grpc.StatusCode) -> str:
    """The details of the refusal `call` must end in, with `code`."""
    try:
        await call  # type: ignore[misc]
    except grpc.aio.AioRpcError as error:
        assert error.code() == code, (error.code(), error.details())
        return error.details() or ""
    raise AssertionError(f"the call was not refused ({code.name} expected)")


def address(referee: Referee) -> str:
    return f"{referee.settings.listen.rsplit(':', 1)[0]}:{referee.port}"


class Client:
    """The stubs of one replica, from its own client address."""

    def __init__(self, referee: Referee) -> None:
        self.address = address(referee)
        self.channel = grpc.aio.insecure_channel(self.address)
        self.authors = pb_grpc.AuthorServiceStub(self.channel)
        self.bots = pb_grpc.BotServiceStub(self.channel)
        self.matches = pb_grpc.RefereeServiceStub(self.channel)

    async def sign_up(self, name: str, invite: str = "") -> pb.CreateAuthorReply:
        request = pb.CreateAuthorRequest(name=name, invite=invite)
        return await self.authors.CreateAuthor(request, timeout=10)

    async def author(self, name: str) -> str:
        """A new author's token."""
        return str((await self.sign_up(name)).token)

    async def register(
        self, name: str, token: str, game: str = "golden10", version: str | None = None
    ) -> pb.RegisterReply:
        """Register a version of `name` (a new version each call unless `version`)."""
        version = str(time.monotonic_ns()) if version is None else version
        request = pb.RegisterRequest(name=name, version=version, games=[game])
        return await self.bots.Register(request, metadata=auth(token), timeout=10)

    async def bot(self, name: str, token: str, game: str) -> tuple[str, str]:
        """Register version 1 of `name`: its id and token."""
        reply = await self.register(name, token, game, "1")
        return reply.bot_id, reply.token

    def challenge(
        self, token: str, bot: str, opponents: list[str], game: str, **fields: object
    ) -> grpc.aio.UnaryUnaryCall[pb.ChallengeRequest, pb.Match]:
        request = pb.ChallengeRequest(bot=bot, opponents=opponents, game=game, **fields)  # type: ignore[arg-type]
        return self.authors.Challenge(request, metadata=auth(token), timeout=60)


@asynccontextmanager
async def playing(*runs: tuple[str, str]) -> AsyncIterator[None]:
    """Random bots playing with these (address, token)s until the block ends."""
    runners = [BotRunner(bots.load("random"), where, token, 4) for where, token in runs]
    tasks = [asyncio.create_task(runner.run(max_backoff_s=0.5)) for runner in runners]
    try:
        yield
    finally:
        for runner in runners:
            runner.stop()
        await asyncio.gather(*tasks, return_exceptions=True)


class GatedBot:
    """A bot's session that answers nothing until `gate` is set: its matches keep running."""

    def __init__(self, where: str, token: str) -> None:
        self.gate = asyncio.Event()
        self._where, self._token = where, token
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        async with grpc.aio.insecure_channel(self._where) as channel:
            stream = pb_grpc.BotServiceStub(channel).Session(metadata=auth(self._token))  # type: ignore[call-arg]
            await stream.write(pb.BotMessage(hello=pb.Hello(capacity=4)))
            while (message := await stream.read()) is not grpc.aio.EOF:
                assert isinstance(message, pb.RefereeMessage)
                if message.WhichOneof("kind") == "act":
                    await self.gate.wait()
                    answer = pb.Answer(request_id=message.act.request_id, index=0)
                    await stream.write(pb.BotMessage(answer=answer))


async def online(client: Client, *bot_ids: str) -> None:
    async def listed() -> bool:
        reply = await client.matches.ListSessions(
            pb.ListSessionsRequest(), metadata=auth(ADMIN), timeout=10
        )
        return set(bot_ids) <= {s.bot_id for s in reply.sessions}

    await eventually(listed, f"bots {bot_ids} online", 30)
