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
from referee.server import start
from referee.settings import RefereeSettings
from tests.support.aio import run
from tests.support.ladder import register
from workers.referee_client import start_request


def test_start_match_of_a_cancelled_tournaments_match_is_refused(tmp_path: Path) -> None:
    async def test() -> None:
        referee = await start(
            RefereeSettings(
                listen="127.0.0.1:0",
                database_url=f"sqlite:///{tmp_path / 'arena.db'}",
                metrics_port=None,
                shutdown_grace_s=1,
            )
        )
        store = referee.store
        try:
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
        finally:
            await referee.stop()

    run(test)
