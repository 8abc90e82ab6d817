"""The event loop the referee serves on: uvloop's where it is installed.

The server extra declares uvloop everywhere but Windows, which uvloop does not
support; there the referee runs on asyncio's own loop. grpc.aio runs on any
asyncio loop, and uvloop's costs it less per message: `python -m bench.referee`
measured about 5% less referee CPU per move (docs/performance.md). Kept apart
from `referee.server` so that the benchmark's bare gRPC server can run on the
same loop without loading the referee.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's new-loop function, or None (asyncio's default) on Windows."""
    if sys.platform == "win32":
        return None
    import uvloop

    return uvloop.new_event_loop


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)` on the referee's event loop."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(main)
