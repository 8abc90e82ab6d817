"""Ending a background task for sure.

A cancellation can be lost: Python 3.11's `asyncio.wait_for`, cancelled just as
the awaitable it waits for has finished, returns that result and drops the
cancellation, and redis-py may swallow one in a blocked read. A loop whose
cancellation is lost runs on, and whoever awaits its end waits for ever (a
stopping referee whose heartbeat went on beating). So a task is cancelled again
until it has ended.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

log = logging.getLogger(__name__)

AGAIN_S = 0.1
"""How long a cancelled task has to end before it is cancelled again."""


async def cancel_and_wait(*tasks: asyncio.Task[Any]) -> None:
    """Cancel `tasks` and return once every one has ended; one that had failed is logged
    (a stop goes on whatever a background task did)."""
    while running := [task for task in tasks if not task.done()]:
        for task in running:
            task.cancel()
        await asyncio.wait(running, timeout=AGAIN_S)
    for task in tasks:
        if not task.cancelled() and (error := task.exception()) is not None:
            log.warning("task %s had failed: %r", task.get_name(), error)
