"""Replies a handler encoded itself go out as they are.

grpcio serializes whatever a handler writes with the method's response serializer
(the generated `SerializeToString` of its message). The bots' Session writes each
move's Act as bytes joined from pieces encoded once (`wire_results.referee_bytes`);
handing grpcio a message instead meant building it from those pieces and having it
serialized again, on every move. This interceptor gives every method a serializer
that passes bytes through and serializes a message as before.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import grpc

if TYPE_CHECKING:
    _Interceptor = grpc.aio.ServerInterceptor[Any, Any]  # generic in the stubs only
else:
    _Interceptor = grpc.aio.ServerInterceptor


def _passing_bytes(serialize: Callable[[Any], bytes]) -> Callable[[Any], bytes]:
    def serializer(reply: Any) -> bytes:
        return reply if type(reply) is bytes else serialize(reply)

    return serializer


class EncodedReplies(_Interceptor):
    """Lets every handler write a reply as bytes it encoded itself."""

    def __init__(self) -> None:
        self._handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}

    async def intercept_service(
        self,
        continuation: Callable[
            [grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any]]
        ],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any]:
        method: str = handler_call_details.method
        handler = self._handlers.get(method)
        if handler is None:
            found: Any = await continuation(handler_call_details)
            if found is None or found.response_serializer is None:
                return found  # type: ignore[no-any-return]
            handler = found._replace(response_serializer=_passing_bytes(found.response_serializer))
            self._handlers[method] = handler
        return handler
