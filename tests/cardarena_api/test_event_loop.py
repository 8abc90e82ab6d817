"""The referee and the SDK's bots run on uvloop's loop where the base install has it (not
Windows)."""

from __future__ import annotations

import asyncio
import sys

import pytest

from cardarena_api.event_loop import loop_factory, run


@pytest.mark.skipif(sys.platform == "win32", reason="uvloop has no Windows build")
def test_the_arenas_processes_run_on_uvloop() -> None:
    import uvloop

    async def which() -> type[asyncio.AbstractEventLoop]:
        return type(asyncio.get_running_loop())

    assert loop_factory() is uvloop.new_event_loop
    assert issubclass(run(which()), uvloop.Loop)
