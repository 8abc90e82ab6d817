"""A blocking client of the referee's RefereeService, for the workers.

Workers run tasks in threads (or processes) that mostly wait on the referee,
so a plain synchronous gRPC channel fits; it is thread-safe and shared by
the tasks of one process.
"""

from __future__ import annotations

import grpc

from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import arena_pb2_grpc as pb_grpc
from ladder.store import MatchRequest

START_TIMEOUT_S = 30.0
LIST_TIMEOUT_S = 10.0

TRANSIENT = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.CANCELLED,  # the referee shut down during the call
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        grpc.StatusCode.ABORTED,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNKNOWN,
    }
)
"""Status codes worth trying again later (the referee restarts, is busy, or is slow)."""


def is_transient(error: grpc.RpcError) -> bool:
    """Whether a failed call may succeed if tried again later."""
    code = error.code() if isinstance(error, grpc.Call) else None
    return code is None or code in TRANSIENT


def refused_as_cancelled(error: grpc.RpcError) -> bool:
    """Whether StartMatch refused a tournament's match because its tournament cancelled it
    before the match was started: it is not stored, and never will be."""
    return isinstance(error, grpc.Call) and error.code() == grpc.StatusCode.FAILED_PRECONDITION


def start_request(request: MatchRequest) -> pb.StartMatchRequest:
    """The StartMatch message that asks the referee to play `request`.

    The seed travels as decimal text (drawn seeds have 128 bits); a request
    without one leaves it to the referee to draw a secret seed.
    """
    return pb.StartMatchRequest(
        match_id=request.id,
        game=request.game,
        players=request.players,
        bot_ids=list(request.bot_ids),
        duplicate=request.duplicate,
        deadline_ms=request.deadline_ms,
        seed_decimal="" if request.seed is None else str(request.seed),
        options={key: str(value) for key, value in request.options.items()},
    )


class RefereeCallFailed(RuntimeError):
    """A failed call to the referee, as a plain exception (gRPC's own do not serialise)."""

    def __init__(self, message: str, transient: bool) -> None:
        super().__init__(message)
        self.transient = transient

    @classmethod
    def of(cls, error: grpc.RpcError) -> RefereeCallFailed:
        """The plain form of a gRPC error: its status code and details."""
        if isinstance(error, grpc.Call):
            message = f"referee call failed: {error.code().name}: {error.details()}"
        else:
            message = f"referee call failed: {error}"
        return cls(message, is_transient(error))


class RefereeClient:
    """StartMatch, GetMatch(wait) and ListSessions with the admin token."""

    def __init__(self, address: str, admin_token: str | None = None) -> None:
        self.address = address
        self._metadata = (("authorization", f"Bearer {admin_token}"),) if admin_token else None
        self._channel = grpc.insecure_channel(
            address,
            options=[
                ("grpc.keepalive_time_ms", 20_000),
                ("grpc.keepalive_permit_without_calls", 1),
                ("grpc.max_receive_message_length", 16 * 1024 * 1024),
            ],
        )
        self._stub = pb_grpc.RefereeServiceStub(self._channel)

    def close(self) -> None:
        """Close the channel."""
        self._channel.close()

    def start(self, request: MatchRequest) -> pb.Match:
        """Start a match (idempotent by id; an aborted match is played again)."""
        return self._stub.StartMatch(
            start_request(request),
            metadata=self._metadata,
            timeout=START_TIMEOUT_S,
        )

    def wait(self, match_id: str, timeout_s: float) -> pb.Match:
        """The match once it is no longer running (raises DEADLINE_EXCEEDED after `timeout_s`)."""
        return self._stub.GetMatch(
            pb.GetMatchRequest(match_id=match_id, wait=True),
            metadata=self._metadata,
            timeout=timeout_s,
        )

    def sessions(self) -> list[pb.SessionInfo]:
        """The bots connected now, with their capacity and busy slots."""
        reply = self._stub.ListSessions(
            pb.ListSessionsRequest(), metadata=self._metadata, timeout=LIST_TIMEOUT_S
        )
        return list(reply.sessions)
