"""The AuthorService servicer: authors, their tokens, invites and the names they own.

Challenges (`referee.challenging`) and what an author sees of its own bots
(`referee.bot_views`) live in modules of their own; their calls are passed on.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import grpc

from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import arena_pb2_grpc as pb_grpc
from ladder import authors, queries
from ladder.store import Conflict, NotFound, Store
from referee.bot_views import BotViews
from referee.challenging import Challenges
from referee.gate import Context, Gatekeeper, TokenKind
from referee.limits import KeyedBuckets
from referee.settings import RefereeSettings

MAX_INVITE_H = 24 * 366
"""The longest an invite lasts before it expires, in hours (a year); 0 is never."""

Revoke = Callable[[str, str], Awaitable[None]]
"""End a bot's session opened with the token of this hash, wherever it is held."""


class AuthorService(pb_grpc.AuthorServiceServicer):
    """Sign-up, token rotation, invites and transfers."""

    def __init__(
        self,
        settings: RefereeSettings,
        store: Store,
        gate: Gatekeeper,
        revoke: Revoke,
        challenges: Challenges,
        views: BotViews,
    ) -> None:
        self._settings = settings
        self._store = store
        self._gate = gate
        self._revoke = revoke
        self._challenges = challenges
        self._views = views
        self._signups = KeyedBuckets(settings.signups_per_minute)

    async def CreateAuthor(
        self, request: pb.CreateAuthorRequest, context: Context
    ) -> pb.CreateAuthorReply:
        signup = self._settings.signup
        invite: str | None = None
        if not self._gate.exempt(context):
            if signup == "admin":
                await self._gate.refuse(
                    context,
                    grpc.StatusCode.PERMISSION_DENIED,
                    "sign-up on this referee is by the operator: CreateAuthor needs the admin token",
                )
            await self._gate.bound(self._signups, context, "sign-ups")
            if signup == "invite":
                if not request.invite:
                    await self._gate.refuse(
                        context,
                        grpc.StatusCode.PERMISSION_DENIED,
                        "sign-up on this referee is by invitation: give the invite code "
                        "(--invite CODE) the operator made",
                    )
                invite = request.invite
        problem = authors.author_problem(request.name)
        if problem:
            await self._gate.refuse(context, grpc.StatusCode.INVALID_ARGUMENT, problem)
        try:
            author, token = await asyncio.to_thread(
                authors.create_author, self._store, request.name, invite
            )
        except authors.InviteRefused as error:
            await self._gate.refuse(context, grpc.StatusCode.PERMISSION_DENIED, str(error))
        except Conflict as error:
            await self._gate.refuse(context, grpc.StatusCode.ALREADY_EXISTS, str(error))
        return pb.CreateAuthorReply(author_id=author.id, name=author.name, token=token)

    async def RotateAuthorToken(
        self, request: pb.RotateAuthorTokenRequest, context: Context
    ) -> pb.RotateAuthorTokenReply:
        caller = await self._gate.caller(context, TokenKind.AUTHOR, call="RotateAuthorToken")
        assert caller.author is not None
        token = await asyncio.to_thread(authors.rotate_author_token, self._store, caller.author.id)
        return pb.RotateAuthorTokenReply(author_id=caller.author.id, token=token)

    async def RotateBotToken(
        self, request: pb.RotateBotTokenRequest, context: Context
    ) -> pb.RotateBotTokenReply:
        caller = await self._gate.caller(
            context, TokenKind.AUTHOR, TokenKind.ADMIN, call="RotateBotToken"
        )
        try:
            bot = await asyncio.to_thread(queries.resolve_bot, self._store, request.bot)
            rotated = await asyncio.to_thread(
                authors.rotate_bot_token, self._store, bot.id, caller.author_id
            )
        except (queries.UnknownBot, NotFound) as error:
            await self._gate.refuse(context, grpc.StatusCode.NOT_FOUND, str(error))
        except PermissionError as error:
            await self._gate.refuse(
                context,
                grpc.StatusCode.PERMISSION_DENIED,
                f"{error}: RotateBotToken needs its author's token or the admin token",
            )
        except Conflict as error:
            await self._gate.refuse(context, grpc.StatusCode.ABORTED, str(error))
        await self._revoke(rotated.bot.id, rotated.old_hash)
        return pb.RotateBotTokenReply(bot_id=rotated.bot.id, token=rotated.token)

    async def TransferBot(
        self, request: pb.TransferBotRequest, context: Context
    ) -> pb.TransferBotReply:
        await self._gate.caller(context, TokenKind.ADMIN, call="TransferBot")
        try:
            owner = await asyncio.to_thread(
                authors.transfer_name, self._store, request.name, request.author
            )
        except NotFound as error:
            await self._gate.refuse(context, grpc.StatusCode.NOT_FOUND, str(error))
        return pb.TransferBotReply(name=request.name, author_id=owner.id, author=owner.name)

    async def CreateInvite(
        self, request: pb.CreateInviteRequest, context: Context
    ) -> pb.CreateInviteReply:
        await self._gate.caller(context, TokenKind.ADMIN, call="CreateInvite")
        uses = request.uses or 1
        if uses < 1 or not 0 <= request.expires_h <= MAX_INVITE_H:
            await self._gate.refuse(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                f"an invite allows at least 1 use and expires in 0 (never) to {MAX_INVITE_H} hours",
            )
        expires_s = request.expires_h * 3600 if request.expires_h else None
        invite = await asyncio.to_thread(authors.create_invite, self._store, uses, expires_s)
        return pb.CreateInviteReply(
            code=invite.code,
            uses=invite.uses,
            expires_at="" if invite.expires_at is None else invite.expires_at.isoformat(),
        )

    async def SetBot(self, request: pb.SetBotRequest, context: Context) -> pb.SetBotReply:
        return await self._challenges.set_bot(request, context)

    async def Challenge(self, request: pb.ChallengeRequest, context: Context) -> pb.Match:
        return await self._challenges.challenge(request, context)

    async def BotMatches(
        self, request: pb.BotMatchesRequest, context: Context
    ) -> pb.BotMatchesReply:
        return await self._views.bot_matches(request, context)

    async def WatchSeat(
        self, request: pb.WatchSeatRequest, context: Context
    ) -> AsyncIterator[pb.MatchEvent]:
        # An async generator function itself: gRPC takes any other handler of a stream
        # for a synchronous one.
        async for event in self._views.watch_seat(request, context):
            yield event
