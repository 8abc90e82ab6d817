"""StartMatch of a tournament's match that its tournament cancelled first: refused in one
line, FAILED_PRECONDITION, nothing stored (the workers take that for "cancelled")."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest

from cardarena_api.v1 import arena_pb2_grpc as pb_grpc
from ladder import tournaments
from ladder.store import NotFound
from tests.support.aio import lone_referee, run
from tests.support.ladder import register
from workers.referee_client import start_request


def test_start_match_of_a_cancelled_tournaments_match_is_refused(tmp_path: Path) -> None:
    async def test() -> None:
        async with lone_referee(tmp_path) as referee:
            store = referee.store
            bots = [register(store, "off") for _ in range(3)]
            tid = tournaments.create_tournament(store, "goof", 3, bots, duplicate=False)
            (match_id,) = tournaments.pending_matches(store, tid)
            request = tournaments.planned_request(store, match_id)
            assert request is not None
            assert tournaments.cancel_tournament(store, tid) == [match_id]
            async with grpc.aio.insecure_channel(f"127.0.0.1:{referee.port}") as channel:
                stub = pb_grpc.RefereeServiceStub(channel)
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await stub.StartMatch(start_request(request))
            assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert refused.value.details() == (
                f"match {match_id} is not played: its tournament {tid} was cancelled before"
                " any referee started it"
            )
            with pytest.raises(NotFound):
                await asyncio.to_thread(store.match, match_id)

    run(test)
