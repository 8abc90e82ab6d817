"""Who is calling: the admin token, an author's token, or a bot's token.

Each kind of token does its own things: a bot's token opens that bot's
Session and nothing else, an author's token manages that author's bots, the
admin token does everything. A referee without an admin token takes every
call that carries no author's token as the operator's (a laptop's arena).
Every refusal is one line naming the kind of token the call needs.
"""

from __future__ import annotations

import asyncio
import hmac
from dataclasses import dataclass
from enum import StrEnum
from typing import NoReturn

import grpc

from cardarena_api.metadata import NEEDS, TRY_AGAIN
from ladder import authors
from ladder.authors import Author
from ladder.store import AUTHOR_TOKEN_PREFIX, BOT_TOKEN_PREFIX, Bot, Store
from referee.limits import KeyedBuckets
from referee.settings import RefereeSettings

Context = grpc.aio.ServicerContext[object, object]

MAX_DETAILS = 500
"""Longest status message: they quote the request, and a status must fit in the
HTTP/2 trailers (16 KiB at most clients, non-ASCII sent percent-encoded)."""


def brief(text: str) -> str:
    """A status message cut to MAX_DETAILS characters."""
    return text if len(text) <= MAX_DETAILS else text[: MAX_DETAILS - 3] + "..."


async def unavailable(context: Context, details: str) -> NoReturn:
    """End the call UNAVAILABLE with its one line, marked `TRY_AGAIN`: the referee
    answered, and cannot serve the call for a moment (a client tells this from a
    referee it did not reach)."""
    await context.abort(grpc.StatusCode.UNAVAILABLE, brief(details), ((TRY_AGAIN, "1"),))
    raise AssertionError("abort returns only by raising")


def peer_host(context: Context) -> str:
    """The caller's address without its port (`ipv4:127.0.0.1:5555` -> `ipv4:127.0.0.1`)."""
    peer = context.peer() or ""
    return peer.rsplit(":", 1)[0] if peer.startswith(("ipv4:", "ipv6:")) else peer


def bearer(context: Context) -> str | None:
    """The token of `authorization: Bearer <token>` in the call's metadata."""
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and isinstance(value, str) and value.startswith("Bearer "):
            return value[len("Bearer ") :].strip()
    return None


class TokenKind(StrEnum):
    """The kinds of token, as refusals name them."""

    ADMIN = "the admin token"
    AUTHOR = "an author's token"
    BOT = "a bot's token"


@dataclass(frozen=True)
class Caller:
    """Who a call comes from: its token's kind, and the author for an author's token."""

    kind: TokenKind
    author: Author | None = None

    @property
    def author_id(self) -> str | None:
        """The calling author's id; None for the operator."""
        return None if self.author is None else self.author.id


def given(token: str | None, known: bool = True) -> str:
    """What the call carried, as a refusal says it (`known`: the token is a live one)."""
    if not token:
        return "no token was given"
    kind = "author" if token.startswith(AUTHOR_TOKEN_PREFIX) else None
    if token.startswith(BOT_TOKEN_PREFIX):
        kind = "bot"
    if kind is None:
        return "this is not the admin token, nor an author's or a bot's"
    if not known:
        return f"this {kind} token is not one this referee knows; a rotated one is refused"
    if kind == "bot":
        return "this is a bot's token: it opens its bot's Session only"
    return "this is an author's token"


class Gatekeeper:
    """Who may call what."""

    def __init__(self, settings: RefereeSettings, store: Store) -> None:
        self._settings = settings
        self._store = store

    def is_admin(self, context: Context) -> bool:
        """True for an operator call (or when the referee has no admin token)."""
        wanted = self._settings.admin_token
        if wanted is None:
            return True
        return hmac.compare_digest((bearer(context) or "").encode(), wanted.encode())

    async def caller(self, context: Context, *kinds: TokenKind, call: str) -> Caller:
        """The caller, if its token is one of `kinds`; aborts in one line otherwise.

        UNAUTHENTICATED when no token or an unknown one came, PERMISSION_DENIED
        for a known token of another kind.
        """
        token = bearer(context)
        found: Caller | None = None
        if token and token.startswith(AUTHOR_TOKEN_PREFIX):
            author = await asyncio.to_thread(authors.author_by_token, self._store, token)
            if author is not None:
                found = Caller(TokenKind.AUTHOR, author)
        elif self.is_admin(context):
            found = Caller(TokenKind.ADMIN)
        if found is not None and found.kind in kinds:
            return found
        needed = " or ".join(kind.value for kind in kinds)
        known = found is not None or (
            token is not None
            and token.startswith(BOT_TOKEN_PREFIX)
            and await asyncio.to_thread(self._store.bot_by_token, token) is not None
        )
        code = grpc.StatusCode.PERMISSION_DENIED if known else grpc.StatusCode.UNAUTHENTICATED
        await self.refuse(context, code, f"{call} needs {needed} ({given(token, known)})", kinds)

    async def require_admin(self, context: Context) -> None:
        """Abort with PERMISSION_DENIED unless the call carries the admin token."""
        if not self.is_admin(context):
            await self.refuse(
                context,
                grpc.StatusCode.PERMISSION_DENIED,
                f"this call needs the referee's admin token ({given(bearer(context))})",
                (TokenKind.ADMIN,),
            )

    @staticmethod
    async def refuse(
        context: Context, code: grpc.StatusCode, details: str, needs: tuple[TokenKind, ...] = ()
    ) -> NoReturn:
        """End the call with `code` and its one line; `needs`: the kinds of token it takes,
        in the trailing metadata `NEEDS` (so a client can say which flag gives one)."""
        trailing = ((NEEDS, ",".join(kind.name.lower() for kind in needs)),) if needs else ()
        await context.abort(code, brief(details), trailing)
        raise AssertionError("abort returns only by raising")

    def exempt(self, context: Context) -> bool:
        """True for an admin-token call when the referee has a token: no bound applies."""
        return self._settings.admin_token is not None and self.is_admin(context)

    async def bound(self, buckets: KeyedBuckets, context: Context, what: str) -> None:
        """Abort RESOURCE_EXHAUSTED when the caller's address is over its `what` a minute.

        Admin-token callers (workers, operators) are exempt when the referee has a token.
        """
        if not self.exempt(context) and not buckets.take(peer_host(context)):
            await self.refuse(
                context,
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"more than {buckets.per_minute} {what} a minute from this address; "
                "try again later",
            )

    async def bot(self, context: Context) -> tuple[Bot, str] | str:
        """The bot whose token the call carries, and that token; else the one line that
        refuses the call UNAUTHENTICATED (the caller refuses it: a session reads its Hello
        first, `referee.service`)."""
        token = bearer(context)
        bot = await asyncio.to_thread(self._store.bot_by_token, token) if token else None
        if bot is not None and token is not None:
            return bot, token
        if not token:
            return (
                "a bot session needs metadata 'authorization: Bearer <token>' with a "
                "registered bot's token"
            )
        if token.startswith(BOT_TOKEN_PREFIX):
            return (
                "this referee does not know this token (a token is shown once, by `arena "
                "bot register` on this referee; a rotated one is refused)"
            )
        return f"a Session needs a bot's token ({given(token)})"
