"""Challenges: an author's unrated match of its own bot against chosen opponents,
and the setting that lets a bot name accept them.

A challenge is started as StartMatch starts a match (`RefereeService.start`: the
same checks, the tier's placement, idempotent by id), with the author as its
challenger: the store counts it against the author's quotas in the
transaction that stores it (`ladder.challenges`), and the referee records it,
unrated, once it has finished (`referee.matches`).
"""

from __future__ import annotations

import asyncio
import re
import secrets

import grpc

import games
from cardarena_api.v1 import arena_pb2 as pb
from ladder import authors, queries
from ladder.models import OPERATOR_AUTHOR
from ladder.records import MatchStatus
from ladder.store import NotFound, NotOwner, Store
from referee.channels import RelayUnavailable
from referee.gate import Context, Gatekeeper, TokenKind, unavailable
from referee.matches import MatchManager
from referee.service import RefereeService

CHALLENGE_ID = re.compile(r"[A-Za-z0-9_-]{1,40}")
"""A challenge id: with the prefix and the author's id, a match id fits in 64 characters."""


def match_id(author_id: str, challenge_id: str) -> str:
    """The match of an author's challenge: no author's id is another's, nor starts a
    tournament's (`<tournament>-m0001`) or the ladder's (`L<tick>-...`) ids."""
    return f"ch-{author_id}-{challenge_id}"


class Challenges:
    """The SetBot and Challenge calls of AuthorService."""

    def __init__(
        self, store: Store, gate: Gatekeeper, manager: MatchManager, referee: RefereeService
    ) -> None:
        self._store = store
        self._gate = gate
        self._manager = manager
        self._referee = referee

    async def set_bot(self, request: pb.SetBotRequest, context: Context) -> pb.SetBotReply:
        caller = await self._gate.caller(context, TokenKind.AUTHOR, TokenKind.ADMIN, call="SetBot")
        accepts = request.challenges if request.HasField("challenges") else None
        try:
            # An id or name@version names its bot's name; else it is a name, in any spelling.
            name = (await asyncio.to_thread(queries.resolve_bot, self._store, request.bot)).name
        except queries.UnknownBot:
            name = request.bot
        try:
            name, accepts_now = await asyncio.to_thread(
                authors.set_challenges, self._store, name, caller.author_id, accepts
            )
        except NotFound as error:
            await self._gate.refuse(context, grpc.StatusCode.NOT_FOUND, str(error))
        except NotOwner as error:
            await self._gate.refuse(
                context,
                grpc.StatusCode.PERMISSION_DENIED,
                f"{error}: SetBot needs its author's token or the admin token",
            )
        return pb.SetBotReply(name=name, challenges=accepts_now)

    async def challenge(self, request: pb.ChallengeRequest, context: Context) -> pb.Match:
        caller = await self._gate.caller(
            context, TokenKind.AUTHOR, TokenKind.ADMIN, call="Challenge"
        )
        challenger = caller.author_id or OPERATOR_AUTHOR
        challenge_id = request.challenge_id or secrets.token_hex(8)
        if not CHALLENGE_ID.fullmatch(challenge_id):
            await self._gate.refuse(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "challenge_id is 1..40 letters, digits, '-' or '_' (or empty: the referee "
                "draws one)",
            )
        refs = [request.bot, *request.opponents]
        try:
            # Before the bots are looked up one by one: as many as the game seats, no more.
            games.get(request.game).check_players(len(refs))
        except ValueError as error:
            await self._gate.refuse(context, grpc.StatusCode.INVALID_ARGUMENT, str(error))
        bots = []
        for ref in refs:
            try:
                bots.append(await asyncio.to_thread(queries.resolve_bot, self._store, ref))
            except queries.UnknownBot as error:
                await self._gate.refuse(context, grpc.StatusCode.NOT_FOUND, str(error))
        ids = [bot.id for bot in bots]
        if len(set(ids)) != len(ids):
            await self._gate.refuse(
                context, grpc.StatusCode.INVALID_ARGUMENT, "a bot takes one seat of a challenge"
            )
        wanted = match_id(challenger, challenge_id)
        try:
            known = await asyncio.to_thread(self._store.match, wanted)
        except NotFound:
            known = None
        if known is None or known.status == MatchStatus.ABORTED:
            # A match to start (again): its bots must be willing and there. One asked for
            # again as it runs or once it finished is answered as it is.
            await self._check(context, caller.author_id, refs, [bot.name for bot in bots], ids)
        start = pb.StartMatchRequest(
            match_id=wanted,
            game=request.game,
            players=len(ids),
            bot_ids=ids,
            duplicate=request.duplicate,
            deadline_ms=request.deadline_ms,
            option_values=request.option_values,
        )
        match = await self._referee.start(start, context, challenger)
        if request.wait and match.status == MatchStatus.RUNNING:
            match = await self._referee.wait(wanted, context)
        return await self._referee.message(match)

    async def _check(
        self,
        context: Context,
        author_id: str | None,
        refs: list[str],
        names: list[str],
        ids: list[str],
    ) -> None:
        """Refuse a challenge with a bot not the caller's (the first; the admin's may be
        anyone's), an opponent of another author that does not accept challenges, or a
        bot not connected now. `refs` as the caller named the bots, their `names` and
        `ids`, in the same order."""
        owned = await asyncio.to_thread(authors.owned_names, self._store, names)
        own = owned[names[0]]
        if author_id is not None and own.author.id != author_id:
            await self._gate.refuse(
                context,
                grpc.StatusCode.PERMISSION_DENIED,
                f"bot {refs[0]} belongs to the author {own.author.name!r}: a challenge is "
                "made with one of your own bots",
            )
        for ref, name in zip(refs[1:], names[1:], strict=True):
            if owned[name].author.id != own.author.id and not owned[name].challenges:
                await self._gate.refuse(
                    context,
                    grpc.StatusCode.FAILED_PRECONDITION,
                    f"bot {ref} does not accept challenges",
                )
        try:
            online = {bot.bot_id for bot in await self._manager.connected()}
        except RelayUnavailable as error:
            await unavailable(context, str(error))
        for ref, bot_id in zip(refs, ids, strict=True):
            if bot_id not in online:
                await self._gate.refuse(
                    context, grpc.StatusCode.FAILED_PRECONDITION, f"bot {ref} is offline"
                )
