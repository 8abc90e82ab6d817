"""Replies a handler encoded itself go out as they are.

grpcio serializes whatever a handler writes with the method's response serializer
(the generated `SerializeToString` of its message). The bots' Session writes each
move's Act as bytes joined from pieces encoded once (`wire_results.referee_bytes`);
handing grpcio a message instead meant building it from those pieces and having it
serialized again, on every move. This interceptor gives every method a serializer
that passes bytes through and serializes a message as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from referee.handler_rewrites import HandlerRewrite


def _passing_bytes(serialize: Callable[[Any], bytes]) -> Callable[[Any], bytes]:
    def serializer(reply: Any) -> bytes:
        return reply if type(reply) is bytes else serialize(reply)

    return serializer


class EncodedReplies(HandlerRewrite):
    """Lets every handler write a reply as bytes it encoded itself."""

    def rewrite(self, method: str, handler: Any) -> Any:
        if handler.response_serializer is None:
            return handler
        return handler._replace(response_serializer=_passing_bytes(handler.response_serializer))
