"""The SDK's reconnect pauses fit in the referee's grace period.

After a `Reconnect` (a replica draining) the SDK opens a new session at once;
if that fails (nothing listens yet: a load balancer that still routes to the
stopped replica), its retries are quick at first. A bot whose referee is
reachable again at any moment of the first half of the grace period must be
back before the grace period ends, however the jitter falls.
"""

from __future__ import annotations

import asyncio
import itertools
import logging

import pytest

import bots
from arena_cli.processes import free_port
from bots.sdk import RETRY_DELAYS_S, Backoff, BotRunner
from referee.settings import RefereeSettings

GRACE_S = RefereeSettings().grace_s


def attempts(draw: float, within_s: float) -> list[float]:
    """When a bot tries again after a failed attempt at 0 (every pause drawn at `draw`),
    until the first attempt at or after `within_s`."""
    backoff = Backoff(draw=lambda: draw)
    times = [0.0]
    while times[-1] < within_s:
        times.append(times[-1] + backoff.next())
    return times


@pytest.mark.parametrize("draw", [0.0, 0.5, 1.0])
def test_retries_after_a_failed_reconnect_are_back_within_the_grace_period(draw: float) -> None:
    times = attempts(draw, GRACE_S / 2)
    # Whenever in the first half of the grace the referee listens again, the next attempt
    # comes before the grace ends.
    assert times[-1] < GRACE_S, times
    # And the first retries are quick: four of them within two and a half seconds.
    assert times[4] <= 2.5, times


def test_the_pauses_grow_to_a_steady_interval_and_are_jittered() -> None:
    low = Backoff(draw=lambda: 0.0)
    high = Backoff(draw=lambda: 1.0)
    for delay in (*RETRY_DELAYS_S, RETRY_DELAYS_S[-1], RETRY_DELAYS_S[-1]):
        assert low.next() == pytest.approx(delay * 0.8)
        assert high.next() == pytest.approx(delay * 1.2)


def test_a_session_that_opened_starts_the_quick_pauses_again() -> None:
    backoff = Backoff(draw=lambda: 0.5)
    for _ in range(10):
        backoff.next()
    assert backoff.next() == RETRY_DELAYS_S[-1]
    backoff.reset()
    assert [backoff.next() for _ in range(3)] == list(RETRY_DELAYS_S[:3])


def test_a_bot_whose_referee_is_not_there_retries_quickly_at_first(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The pauses the SDK logs ("retrying in S s") are the quick ones, not 5 s at once."""
    address = f"127.0.0.1:{free_port()}"  # nothing listens there
    runner = BotRunner(bots.load("random"), address, "arena_token")

    def logged() -> list[float]:
        return [
            float(r.getMessage().rsplit("retrying in ", 1)[1].split()[0])
            for r in caplog.records
            if "retrying in" in r.getMessage()
        ]

    async def briefly() -> None:
        task = asyncio.create_task(runner.run())
        for _ in itertools.repeat(None, 200):  # bounded: four refusals come within 2 s
            await asyncio.sleep(0.05)
            if len(logged()) >= 4:
                break
        runner.stop()
        await asyncio.wait_for(task, 30)

    with caplog.at_level(logging.WARNING, logger="bots.sdk"):
        asyncio.run(briefly())
    pauses = logged()[:4]
    assert len(pauses) == 4
    for pause, delay in zip(pauses, RETRY_DELAYS_S, strict=False):
        assert delay * 0.8 - 0.05 <= pause <= delay * 1.2 + 0.05, pauses
