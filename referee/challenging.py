"""Challenges: an author's unrated match of its own bot against chosen opponents,
and the setting that lets a bot name accept them. (Being written.)"""

from __future__ import annotations

from cardarena_api.v1 import arena_pb2 as pb
from referee.gate import Context


class Challenges:
    """The SetBot and Challenge calls of AuthorService."""

    async def set_bot(self, request: pb.SetBotRequest, context: Context) -> pb.SetBotReply:
        raise NotImplementedError

    async def challenge(self, request: pb.ChallengeRequest, context: Context) -> pb.Match:
        raise NotImplementedError
