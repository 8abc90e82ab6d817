"""A bare grpc.aio bidirectional-stream ping-pong: the referee benchmark's baseline.

    python -m bench.pingpong serve PORT  -> "serving" once it is
    python -m bench.pingpong client PORT STREAMS SIZE SECONDS
        -> "ready" once connected; on a line read from standard input, the
           exchanges, then {"roundtrips_per_s": ..., "roundtrips": ..., "cpu_s": ...}

The server sends SIZE bytes, the client answers with a few bytes, one
exchange in flight per stream, like a referee asking a bot for a move. A
client waits for its go after connecting, so that several client processes
(the shape of the bots, one process and connection each) measure one window
together, none of them while another is still starting. Uses
generic handlers with raw bytes, so it needs no generated code. Server and
client run on the arena's event loop (`cardarena_api.event_loop`), as the
referee and the bots of the SDK do.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator

import grpc

from cardarena_api.event_loop import run

METHOD = "/bench.PingPong/Stream"
CONNECT_TIMEOUT_S = 30.0


def _identity(data: bytes) -> bytes:
    return data


async def serve(port: int) -> None:
    """Serve ping-pong streams until killed; says "serving" on standard output once it does."""
    server = grpc.aio.server()

    async def stream(
        requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[bytes, bytes]
    ) -> AsyncIterator[bytes]:
        size = 0
        async for request in requests:
            size = size or int(request.decode())
            yield b"x" * size

    handler = grpc.method_handlers_generic_handler(
        "bench.PingPong",
        {
            "Stream": grpc.stream_stream_rpc_method_handler(
                stream, request_deserializer=_identity, response_serializer=_identity
            )
        },
    )
    server.add_generic_rpc_handlers((handler,))
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    print("serving", flush=True)
    await server.wait_for_termination()


async def client(port: int, streams: int, size: int, seconds: float) -> dict[str, float]:
    """Round trips per second over `streams` concurrent streams, how many, and the CPU
    seconds this process spent on them."""
    count = 0
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as chan:
        # Bounded: a server that never answers ends the client (and the bench, which
        # waits for its "ready"), rather than hanging it.
        await asyncio.wait_for(chan.channel_ready(), CONNECT_TIMEOUT_S)
        method = chan.stream_stream(
            METHOD, request_serializer=_identity, response_deserializer=_identity
        )
        print("ready", flush=True)
        await asyncio.to_thread(sys.stdin.readline)
        deadline = time.monotonic() + seconds

        async def one() -> None:
            nonlocal count
            # grpc.aio allows a call without a request iterator, written with write().
            call = method()  # type: ignore[call-arg]
            await call.write(str(size).encode())
            while time.monotonic() < deadline:
                await call.read()
                await call.write(b"ok")
                count += 1
            await call.done_writing()

        start = time.monotonic()
        cpu = time.process_time()
        await asyncio.gather(*(one() for _ in range(streams)))
        return {
            "roundtrips_per_s": count / (time.monotonic() - start),
            "roundtrips": count,
            "cpu_s": time.process_time() - cpu,
        }


def main() -> None:
    """Dispatch on the first argument."""
    mode, port = sys.argv[1], int(sys.argv[2])
    if mode == "serve":
        run(serve(port))
    else:
        streams, size, seconds = int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
        print(json.dumps(run(client(port, streams, size, seconds))))


if __name__ == "__main__":
    main()
