"""The event loop the arena's gRPC processes run on: uvloop's where it is installed.

Both sides of the protocol run on it: the referee, and the bots of the Python SDK
(`bots.sdk`). The base install declares uvloop everywhere but Windows, which uvloop
does not support; there they run on asyncio's own loop. grpc.aio runs on any asyncio
loop, and uvloop's costs it less per message: `python -m bench.referee` measured about
5% less referee CPU per move and 12% less bot CPU per move (docs/performance.md). Here,
beside the protocol's modules, because the referee and the bots share nothing else;
the benchmark's bare gRPC server and client run on it too, without loading either.
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
    """`asyncio.run(main)` on the arena's event loop."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(main)
