"""A call whose database work fails ends with one fixed line, never the driver's text.

grpcio ends a handler that raises with UNKNOWN and the exception's text, and a
database error's text names the database's host, port and user, or holds the
statement and its parameters: not for any caller to read, least of all one that
has not yet shown a token. A database that is unavailable (OperationalError) is
the arena's fault for a while: the caller is told UNAVAILABLE, to try again (the
SDKs retry it with back-off). Any other database error is INTERNAL. The log
keeps the driver's words.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
from sqlalchemy.exc import DBAPIError, OperationalError

from referee.gate import unavailable
from referee.handler_rewrites import HandlerRewrite, async_behaviours

log = logging.getLogger(__name__)

DATABASE_UNAVAILABLE = (
    "the referee's database is unavailable (the arena's fault, not the caller's); "
    "try again in a moment"
)
DATABASE_ERROR = "the referee's database failed this call (logged); please report it"


class DatabaseErrors(HandlerRewrite):
    """Makes every handler that the database fails end UNAVAILABLE or INTERNAL, in one line."""

    def rewrite(self, method: str, handler: Any) -> Any:
        behaviours = async_behaviours(handler)
        if behaviours is None:
            return handler
        return handler._replace(
            **{kind: _mapped(method, behaviour) for kind, behaviour in behaviours.items()}
        )


async def database_failed(context: Any, method: str, error: DBAPIError | TimeoutError) -> None:
    """End the call UNAVAILABLE (the database is unavailable, or did not answer in the
    caller's time: a TimeoutError) or INTERNAL, logging why."""
    if isinstance(error, TimeoutError):
        log.warning("%s: the database did not answer in time", method)
        await unavailable(context, DATABASE_UNAVAILABLE)
    if isinstance(error, OperationalError):
        log.warning("%s: the database is unavailable (%s)", method, error.orig)
        await unavailable(context, DATABASE_UNAVAILABLE)
    log.error("%s: the database failed", method, exc_info=error)
    await context.abort(grpc.StatusCode.INTERNAL, DATABASE_ERROR)


def _mapped(method: str, behaviour: Callable[..., Any]) -> Callable[..., Any]:
    if inspect.isasyncgenfunction(behaviour):

        async def generator(request: Any, context: Any) -> AsyncIterator[Any]:
            try:
                async for reply in behaviour(request, context):
                    yield reply
            except DBAPIError as error:
                await database_failed(context, method, error)

        return generator

    async def coroutine(request: Any, context: Any) -> Any:
        try:
            return await behaviour(request, context)
        except DBAPIError as error:
            await database_failed(context, method, error)

    return coroutine
