"""What an author sees of its own bot: its recent matches with every strike's reason
and its answer times (BotMatches), and its seats of a running match, live (WatchSeat).

Both take the author's token of the bot's name, or the admin token: a strike's
reason and a seat's view show the bot's hand, which nobody else may see while it
matters. The matches are read from the store (ladder.bot_matches); the seats'
view is the match's full events, projected for the bot's seats
(referee.seat_view) by the replica that plays the match: another replica of a
tier reads that projection through the relay's Redis, as it reads a match's
public events (referee.tier.public, a stream of the "seat" kind per match and
bot, published only while some replica marks it watched).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncGenerator, AsyncIterator

import grpc

from cardarena_api.v1 import arena_pb2 as pb
from ladder import authors, queries
from ladder import bot_matches as recorded
from ladder.records import MatchRequest, MatchStatus
from ladder.store import NotFound, NotOwner, Store
from referee import wire_results
from referee.gate import Caller, Context, Gatekeeper, TokenKind, unavailable
from referee.limits import KeyedBuckets
from referee.matches import MatchManager
from referee.public import Event, RemoteMatches, TooManyWatchers, WatchUnavailable
from referee.seat_view import SeatProjector, seat_stream, stream_seat
from referee.settings import RefereeSettings

MAX_SEAT_WATCHES = 16
"""Seat streams one author may hold open at once, on one replica (the admin has no bound):
each follows its match with its own copy of the engine."""

S = grpc.StatusCode


class BotViews:
    """The BotMatches and WatchSeat calls of AuthorService."""

    def __init__(
        self,
        settings: RefereeSettings,
        store: Store,
        gate: Gatekeeper,
        manager: MatchManager,
        remote: RemoteMatches | None = None,
    ) -> None:
        self._store = store
        self._gate = gate
        self._manager = manager
        self._remote = remote
        """In a tier: the seat streams of the matches other replicas play."""
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
        # A name with two versions in the match watches the first one's seats.
        stream = seat_stream(match_id, seated[0])
        events = self.follow_seat(stream)
        if events is None and self._remote is not None:
            events = self._remote.watch(stream, lambda: self._manager.stored_end(match_id))
        if events is None:
            # It has just ended, or another referee on this database, outside any tier,
            # plays it.
            replica = await asyncio.to_thread(recorded.playing_replica, self._store, match_id)
            await self._gate.refuse(
                context,
                S.FAILED_PRECONDITION,
                f"match {match_id} is not running"
                if replica is None
                else f"match {match_id} is played by the referee {replica}: WatchSeat follows "
                "a match on the referee that plays it, or on its tier",
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
            async with contextlib.aclosing(events):
                async for event in events:
                    yield wire_results.event_message(event)
        except TooManyWatchers as error:
            await self._gate.refuse(context, S.RESOURCE_EXHAUSTED, str(error))
        except WatchUnavailable as error:
            await unavailable(context, str(error))
        finally:
            if watcher is not None:
                self._watching[watcher] -= 1
                if not self._watching[watcher]:
                    del self._watching[watcher]

    def seat_streams(self) -> list[str]:
        """The seat streams of the matches played here: one per bot of each (the tier
        publishes those another replica marks watched)."""
        return [
            seat_stream(match_id, bot)
            for match_id in self._manager.running()
            if (request := self._manager.running_request(match_id)) is not None
            for bot in dict.fromkeys(request.bot_ids)
        ]

    def follow_seat(self, stream: str) -> AsyncGenerator[Event, None] | None:
        """What a bot's seats see of a match played here, from its start (a `seat_stream`
        name); None when no such match runs here."""
        match_id, bot_id = stream_seat(stream)
        request = self._manager.running_request(match_id)
        if request is None or bot_id not in request.bot_ids:
            return None
        return self._seat_events(request, bot_id)

    async def _seat_events(self, request: MatchRequest, bot_id: str) -> AsyncGenerator[Event, None]:
        projector = SeatProjector(request, bot_id)
        # The full events so far, then as they happen (or, if the match has just ended,
        # as stored): each projected for the bot's seats only.
        async with contextlib.aclosing(self._manager.watch(request.id)) as events:
            async for event in events:
                for shown in projector.project(event):
                    yield shown

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
