"""The watch of the event loop's stalls: what a move's clock leaves out."""

from __future__ import annotations

import asyncio
import time

from referee.loop_watch import BEAT_S, LoopWatch
from tests.support.aio import run

STOOD_S = 0.3


def test_a_stall_is_counted_once_and_only_from_when_it_is_asked_about() -> None:
    async def test() -> None:
        loop = asyncio.get_running_loop()
        watch = LoopWatch.of(loop)
        assert LoopWatch.of(loop) is watch
        before = loop.time()
        await asyncio.sleep(3 * BEAT_S)
        time.sleep(STOOD_S)  # held up
        # Seen before the beat has had its turn, and the same once it has.
        seen = watch.stalled_s(before)
        assert seen >= STOOD_S
        await asyncio.sleep(3 * BEAT_S)
        assert seen <= watch.stalled_s(before) < 2 * STOOD_S  # once, not per look
        # A move that began after the stall is not excused it.
        assert watch.stalled_s(loop.time()) < STOOD_S

    run(test)
