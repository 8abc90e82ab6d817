"""referee.encoded_replies: a reply written as bytes goes out as it is, a message as before."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc

from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import cards_pb2 as cards
from referee.decoding import DecodeGuard
from referee.encoded_replies import EncodedReplies

METHOD = "/test.Replies/Session"
ACT = pb.RefereeMessage(act=pb.Act(request_id="r1", match_id="m1", legal=[cards.Action(text="7H")]))
WELCOME = pb.RefereeMessage(welcome=pb.Welcome(bot_id="b1", session_id="s1", capacity=2))


async def session(requests: AsyncIterator[pb.BotMessage], context: Any) -> None:
    async for _ in requests:
        await context.write(WELCOME)
        await context.write(ACT.SerializeToString())


async def exchange() -> list[pb.RefereeMessage]:
    # The referee's own pair of interceptors: the decode guard wraps what this one returns.
    server = grpc.aio.server(interceptors=[DecodeGuard(), EncodedReplies()])
    handler = grpc.stream_stream_rpc_method_handler(
        session,
        request_deserializer=pb.BotMessage.FromString,
        response_serializer=pb.RefereeMessage.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("test.Replies", {"Session": handler}),)
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stream: Any = channel.stream_stream(
                METHOD,
                request_serializer=pb.BotMessage.SerializeToString,
                response_deserializer=pb.RefereeMessage.FromString,
            )
            call = stream()
            await call.write(pb.BotMessage(hello=pb.Hello(capacity=1)))
            replies = [await call.read(), await call.read()]
            await call.done_writing()
            return replies
    finally:
        await server.stop(None)


def test_a_reply_is_written_as_bytes_or_as_a_message() -> None:
    replies = asyncio.run(asyncio.wait_for(exchange(), 30))
    assert replies == [WELCOME, ACT]
