"""What an author sees of its own bot: its recent matches with every strike's reason
and its answer times, and its seats of a running match, live. (Being written.)"""

from __future__ import annotations

from collections.abc import AsyncIterator

from cardarena_api.v1 import arena_pb2 as pb
from referee.gate import Context


class BotViews:
    """The BotMatches and WatchSeat calls of AuthorService."""

    async def bot_matches(
        self, request: pb.BotMatchesRequest, context: Context
    ) -> pb.BotMatchesReply:
        raise NotImplementedError

    async def watch_seat(
        self, request: pb.WatchSeatRequest, context: Context
    ) -> AsyncIterator[pb.MatchEvent]:
        raise NotImplementedError
        yield
