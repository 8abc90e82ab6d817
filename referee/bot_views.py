"""What an author sees of its own bot: its recent matches with every strike's reason
and its answer times (BotMatches), and its seats of a running match, live (WatchSeat).

Both take the author's token of the bot's name, or the admin token: a strike's
reason and a seat's view show the bot's hand, which nobody else may see while it
matters. The matches are read from the store (ladder.bot_matches); the seats'
view is the match's full events on this replica, projected for the bot's seats
(referee.seat_view). A match another replica of a tier plays is not forwarded:
the call says which replica plays it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator

import grpc

from cardarena_api.v1 import arena_pb2 as pb
from ladder import authors, queries
from ladder import bot_matches as recorded
from ladder.records import MatchStatus
from ladder.store import NotFound, NotOwner, Store
from referee import wire_results
from referee.gate import Caller, Context, Gatekeeper, TokenKind
from referee.limits import KeyedBuckets
from referee.matches import MatchManager
from referee.seat_view import SeatProjector
from referee.settings import RefereeSettings

MAX_SEAT_WATCHES = 16
"""Seat streams one author may hold open at once, on one replica (the admin has no bound):
each follows its match with its own copy of the engine."""

S = grpc.StatusCode


class BotViews:
    """The BotMatches and WatchSeat calls of AuthorService."""

    def __init__(
        self, settings: RefereeSettings, store: Store, gate: Gatekeeper, manager: MatchManager
    ) -> None:
        self._store = store
        self._gate = gate
        self._manager = manager
        self._reads = KeyedBuckets(settings.reads_per_minute)
        self._watching: Counter[str] = Counter()
        """Seat streams open now, per author id."""

    async def bot_matches(
        self, request: pb.BotMatchesRequest, context: Context
    ) -> pb.BotMatchesReply:
        caller = await self._gate.caller(
            context, TokenKind.AUTHOR, TokenKind.ADMIN, call="BotMatches"
        )
        await self._gate.bound(self._reads, context, "match reads")
        limit = request.limit or recorded.DEFAULT_LIMIT
        if not 1 <= limit <= recorded.MAX_LIMIT:
            await self._gate.refuse(
                context,
                S.INVALID_ARGUMENT,
                f"limit is 1..{recorded.MAX_LIMIT} matches (0: {recorded.DEFAULT_LIMIT})",
            )
        versions = await self._versions(context, caller, request.bot, "BotMatches")
        lines = await asyncio.to_thread(recorded.bot_matches, self._store, versions.bot_ids, limit)
        return pb.BotMatchesReply(matches=[_bot_match(line) for line in lines])

    async def watch_seat(
        self, request: pb.WatchSeatRequest, context: Context
    ) -> AsyncIterator[pb.MatchEvent]:
        caller = await self._gate.caller(
            context, TokenKind.AUTHOR, TokenKind.ADMIN, call="WatchSeat"
        )
        await self._gate.bound(self._reads, context, "match reads")
        versions = await self._versions(context, caller, request.bot, "WatchSeat")
        match_id = request.match_id
        try:
            match = await asyncio.to_thread(self._store.match, match_id)
        except NotFound as error:
            await self._gate.refuse(context, S.NOT_FOUND, str(error))
        if match.status != MatchStatus.RUNNING:
            await self._gate.refuse(
                context, S.FAILED_PRECONDITION, f"match {match_id} is not running ({match.status})"
            )
        seated = [bot for bot in match.request.bot_ids if bot in versions.bot_ids]
        if not seated:
            await self._gate.refuse(
                context, S.NOT_FOUND, f"bot {request.bot} has no seat in match {match_id}"
            )
        if match_id not in self._manager.running():
            replica = await asyncio.to_thread(recorded.playing_replica, self._store, match_id)
            await self._gate.refuse(
                context,
                S.FAILED_PRECONDITION,
                f"match {match_id} is played by the referee replica {replica or '(none now)'}: "
                "WatchSeat follows a match only on the replica that plays it",
            )
        watcher = caller.author_id
        if watcher is not None and self._watching[watcher] >= MAX_SEAT_WATCHES:
            await self._gate.refuse(
                context,
                S.RESOURCE_EXHAUSTED,
                f"{MAX_SEAT_WATCHES} seat streams of this author are open already",
            )
        if watcher is not None:
            self._watching[watcher] += 1
        try:
            # A name with two versions in the match watches the first one's seats.
            projector = SeatProjector(match.request, seated[0])
            # The full events so far, then as they happen (or, if the match has just ended,
            # as stored): each projected for the bot's seats only.
            async with contextlib.aclosing(self._manager.watch(match_id)) as events:
                async for event in events:
                    for shown in projector.project(event):
                        yield wire_results.event_message(shown)
        finally:
            if watcher is not None:
                self._watching[watcher] -= 1
                if not self._watching[watcher]:
                    del self._watching[watcher]

    async def _versions(
        self, context: Context, caller: Caller, ref: str, call: str
    ) -> recorded.Versions:
        """The versions `ref` names, if the caller may see them: the name's author (or the
        admin); NOT_FOUND or PERMISSION_DENIED, naming the owner, otherwise."""
        try:
            versions = await asyncio.to_thread(recorded.versions, self._store, ref)
        except queries.UnknownBot as error:
            await self._gate.refuse(context, S.NOT_FOUND, str(error))
        if caller.author_id is not None:
            owner = await asyncio.to_thread(authors.owner_of, self._store, versions.name)
            if owner is None or owner.id != caller.author_id:
                refused = NotOwner(versions.name, versions.name, owner.name if owner else "nobody")
                await self._gate.refuse(
                    context,
                    S.PERMISSION_DENIED,
                    f"{refused}: {call} needs its author's token or the admin token",
                )
        return versions


def _bot_match(line: recorded.BotMatch) -> pb.BotMatch:
    return pb.BotMatch(
        match_id=line.match_id,
        game=line.game,
        players=line.players,
        recorded_at=line.recorded_at.isoformat(),
        place=line.place,
        score=line.score,
        challenge=line.challenger is not None,
        challenger=line.challenger or "",
        strikes=len(line.strikes),
        forfeited=line.forfeited,
        forfeit_reason=line.forfeit_reason,
        strike_events=[
            pb.StrikeEvent(
                game_index=strike.game_index,
                seat=strike.seat,
                bot=line.bot_id,
                reason=strike.reason,
                strikes=strike.strikes,
            )
            for strike in line.strikes
        ],
        answers=line.answers.count,
        answer_p50_ms=line.answers.p50_ms,
        answer_p99_ms=line.answers.p99_ms,
        answer_max_ms=line.answers.max_ms,
        tournament_id=line.tournament_id or "",
        bot_id=line.bot_id,
    )
