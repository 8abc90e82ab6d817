"""Server interceptors that change a method's handler once and serve the changed one."""

from __future__ import annotations

import inspect
from abc import abstractmethod
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import grpc

if TYPE_CHECKING:
    _Interceptor = grpc.aio.ServerInterceptor[Any, Any]  # generic in the stubs only
else:
    _Interceptor = grpc.aio.ServerInterceptor


KINDS = ("unary_unary", "unary_stream", "stream_unary", "stream_stream")
"""The fields of a grpcio method handler that may hold its behaviour."""


def async_behaviours(handler: Any) -> dict[str, Callable[..., Any]] | None:
    """The handler's behaviours by kind; None if one is synchronous (left as grpcio runs it)."""
    behaviours = {kind: getattr(handler, kind) for kind in KINDS if getattr(handler, kind)}
    if all(
        inspect.isasyncgenfunction(behaviour) or inspect.iscoroutinefunction(behaviour)
        for behaviour in behaviours.values()
    ):
        return behaviours
    return None


class HandlerRewrite(_Interceptor):
    """Each method's handler as `rewrite` returns it, made on the method's first call and
    kept (a call costs a dictionary look-up). Handlers that are not grpcio's own
    (nothing to `_replace`) pass as they are."""

    def __init__(self) -> None:
        self._handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}

    @abstractmethod
    def rewrite(self, method: str, handler: Any) -> Any:
        """The handler to serve `method` with instead of `handler`."""

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
            found = await continuation(handler_call_details)
            if found is None or not hasattr(found, "_replace"):
                return found
            handler = self.rewrite(method, found)
            self._handlers[method] = handler
        return handler
