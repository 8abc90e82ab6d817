"""Asyncio helpers for the in-process tests: a bounded run, a wait on a condition,
replicas of the tier (`Tier`) on one Redis, and whole referee servers, alone or on one
relay."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from referee.metrics import RefereeMetrics
from referee.server import Referee, start
from referee.sessions import SessionHub
from referee.settings import RefereeSettings
from referee.tier.registry import DEFAULT_BOUNDS, Bounds
from referee.tier.replica import Tier
from tests.support.services import RedisServer


def run(test: Callable[[], Awaitable[None]], timeout_s: float = 60) -> None:
    """Run the coroutine `test()` to its end, failing after `timeout_s`."""
    asyncio.run(asyncio.wait_for(test(), timeout_s))


async def eventually(check: Callable[[], Awaitable[Any]], what: str, timeout_s: float = 10) -> Any:
    """Poll `check` until it returns something truthy."""
    end = time.monotonic() + timeout_s
    while not (value := await check()):
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout_s:g} s waiting for {what}")
        await asyncio.sleep(0.05)
    return value


@asynccontextmanager
async def tiers(
    redis_url: str, *names: str, grace_s: float = 2.0, bounds: Bounds = DEFAULT_BOUNDS
) -> AsyncIterator[list[Tier]]:
    """Started tiers named `names` on the Redis at `redis_url`, closed afterwards."""
    joined = [
        Tier(redis_url, name, SessionHub(), grace_s, RefereeMetrics.create(), bounds=bounds)
        for name in names
    ]
    for tier in joined:
        await tier.start()
    try:
        yield joined
    finally:
        for tier in joined:
            tier.hub.close_all()
            await tier.close()


@asynccontextmanager
async def lone_referee(workdir: Path) -> AsyncIterator[Referee]:
    """A referee server outside any tier, on a database in `workdir`; stopped afterwards."""
    referee = await start(
        RefereeSettings(
            listen="127.0.0.1:0",
            database_url=f"sqlite:///{workdir / 'arena.db'}",
            metrics_port=None,
            shutdown_grace_s=1,
        )
    )
    try:
        yield referee
    finally:
        await referee.stop()


@asynccontextmanager
async def replicas(
    workdir: Path,
    redis: RedisServer,
    *names: str,
    hosts: Sequence[str] = (),
    port: int = 0,
    relay_url: str = "",
    **settings: Any,
) -> AsyncIterator[list[Referee]]:
    """Referee servers (`referee.server.start`) named `names`, on one database in `workdir`
    and one relay on `redis`, with `settings` besides; stopped afterwards. Replica i
    listens on `hosts[i]`, else on 127.0.0.1 (a client of `[::1]` comes from another
    address than one of 127.0.0.1; one of 127.0.0.2 does not: Linux picks 127.0.0.1),
    on `port` (0: a port of its own; else one port they share, as behind a load balancer:
    the kernel gives each new connection to one of them). `relay_url`, if given, reaches
    the same Redis another way (through a proxy the test can cut)."""
    started = []
    try:
        for index, name in enumerate(names):
            host = hosts[index] if index < len(hosts) else "127.0.0.1"
            started.append(
                await start(
                    RefereeSettings(
                        listen=f"{host}:{port}",
                        database_url=f"sqlite:///{workdir / 'arena.db'}",
                        metrics_port=None,
                        relay_url=relay_url or redis.url,
                        replica=name,
                        shutdown_grace_s=1,
                        **settings,
                    )
                )
            )
        yield started
    finally:
        for referee in started:
            await referee.stop()
