"""The call metadata both sides of the protocol name (docs/protocol.md)."""

from __future__ import annotations

from collections.abc import Sequence

import grpc

NEEDS = "arena-needs"
"""Trailing metadata of a refusal for want of a token: the kinds it takes (admin, author)."""
PIN = "arena-replica"
"""Session metadata: the replica of a tier the session is for (from `Welcome.replicas`)."""
TRY_AGAIN = "arena-try-again"
"""Trailing metadata ("1") of an UNAVAILABLE the referee sent itself: its database, its
relay, or its stopping keeps it from serving the call now, and the same call may succeed
in a moment. gRPC's own UNAVAILABLE, from a referee that was not reached, has none."""
REPLICAS = "arena-replicas"
"""Trailing metadata of a session refused for landing on another replica than its `PIN`:
the tier's live replicas, comma-separated."""


def trailing_value(error: grpc.Call | grpc.aio.AioRpcError, key: str) -> str | None:
    """The value of `key` in a failed call's trailing metadata, if it is there."""
    # grpc's stubs type the metadata as one item, not the pairs it is.
    pairs: Sequence[tuple[str, str | bytes]] = error.trailing_metadata() or ()  # type: ignore[assignment]
    for name, value in pairs:
        if name == key and isinstance(value, str):
            return value
    return None
