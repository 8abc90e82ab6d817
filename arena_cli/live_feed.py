"""The web's live views fed by the referee's public streams, over gRPC.

Here and not in `ladder.web`: the ladder imports neither the referee nor the
generated stubs; `arena web` (the composition root) gives the app this feed.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

import grpc

from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import arena_pb2_grpc as pb_grpc
from ladder.web.live import LiveNotFound, LiveUnavailable


class RefereeFeed:
    """The referee's public streams (WatchPublic) for the web's live views.

    No token: the web relays only what the referee shows anyone. The channel is
    opened by the first watch, in the web's event loop, and shared by all.
    """

    def __init__(self, address: str) -> None:
        self.address = address
        self._stub: pb_grpc.RefereeServiceAsyncStub | None = None

    async def watch(self, match_id: str) -> AsyncGenerator[str, None]:
        """The JSON of each public event of the match (ladder.web.live.LiveFeed)."""
        if self._stub is None:
            self._stub = pb_grpc.RefereeServiceStub(grpc.aio.insecure_channel(self.address))
        call = self._stub.WatchPublic(pb.GetMatchRequest(match_id=match_id))
        try:
            async for event in call:
                yield event.json
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.NOT_FOUND:
                raise LiveNotFound(error.details() or f"no match {match_id}") from None
            raise LiveUnavailable(
                f"{self.address}: {error.code().name.lower()} ({error.details()})"
            ) from None
        finally:
            call.cancel()
