"""Requests that do not parse end with INVALID_ARGUMENT, not UNKNOWN and a traceback.

grpcio's asyncio server parses a request before the servicer runs; bytes
that are not the RPC's message (a client built from other .proto files,
garbage) raise in that step, which grpcio reports as an exception "raised by
servicer method": status UNKNOWN, and a traceback in the log for every such
message. This interceptor parses leniently instead and lets each handler
refuse the undecodable request itself with INVALID_ARGUMENT, quietly. A
handler of a stream of requests that reads them with `context.read()` (the
bots' Session) gets an `Undecodable` among them, and ends the call itself.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc

from referee.handler_rewrites import HandlerRewrite, async_behaviours

INVALID = grpc.StatusCode.INVALID_ARGUMENT


class Undecodable:
    """Stands in for a request whose bytes did not parse."""

    def __init__(self, method: str, error: Exception) -> None:
        self.details = f"the request to {method} does not parse: {error}"


def _lenient(method: str, parse: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    if parse is None:
        return None

    def deserialize(data: bytes) -> Any:
        try:
            return parse(data)
        except Exception as error:
            return Undecodable(method, error)

    return deserialize


async def _checked(requests: AsyncIterator[Any], context: Any) -> AsyncIterator[Any]:
    """The stream's requests until one is undecodable; that ends the call with INVALID_ARGUMENT."""
    async for request in requests:
        if isinstance(request, Undecodable):
            context.set_code(INVALID)
            context.set_details(request.details)
            return
        yield request


def _guard(behaviour: Callable[..., Any], streaming: bool) -> Callable[..., Any]:
    """`behaviour` (a coroutine or async generator function) refusing Undecodable requests."""
    if inspect.isasyncgenfunction(behaviour):

        async def generator(request: Any, context: Any) -> AsyncIterator[Any]:
            if streaming:
                request = _checked(request, context)
            elif isinstance(request, Undecodable):
                await context.abort(INVALID, request.details)
            async for reply in behaviour(request, context):
                yield reply

        return generator

    async def coroutine(request: Any, context: Any) -> Any:
        if streaming:
            request = _checked(request, context)
        elif isinstance(request, Undecodable):
            await context.abort(INVALID, request.details)
        return await behaviour(request, context)

    return coroutine


class DecodeGuard(HandlerRewrite):
    """Makes every handler answer an undecodable request with INVALID_ARGUMENT."""

    def rewrite(self, method: str, handler: Any) -> Any:
        return self._guarded(method, handler)

    @staticmethod
    def _guarded(method: str, handler: Any) -> Any:
        behaviours = async_behaviours(handler)
        if behaviours is None:
            return handler
        streaming = bool(handler.request_streaming)
        return handler._replace(
            request_deserializer=_lenient(method, handler.request_deserializer),
            **{kind: _guard(behaviour, streaming) for kind, behaviour in behaviours.items()},
        )
