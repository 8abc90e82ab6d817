"""The registry and a replica's membership on a real Redis (a server of the test's own):
one time source (Redis's), bounded keys, slots never renewed over capacity, waiters
served in order, and readiness that follows Redis."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import pytest
import redis.asyncio as aioredis

from ladder.records import MatchRequest
from referee.sessions import Reconnect
from referee.tier.placement import Placer, TierUnavailable
from referee.tier.registry import (
    DEFAULT_BOUNDS,
    REPLICAS,
    SESSIONS,
    Bounds,
    Holder,
    Listed,
    Registry,
    slots_key,
)
from tests.support.aio import eventually, run, tiers
from tests.support.services import RedisServer

SHORT = Bounds(heartbeat_s=0.1, expiry_s=0.5, tombstone_s=1.0, unready_s=0.3)
"""Bounds short enough for a test to outlive them."""


@asynccontextmanager
async def registries(
    redis: RedisServer, *names: str, bounds: Bounds = DEFAULT_BOUNDS
) -> AsyncIterator[list[Registry]]:
    clients = [aioredis.Redis.from_url(redis.url) for _ in names]
    try:
        yield [Registry(c, name, bounds) for c, name in zip(clients, names, strict=True)]
    finally:
        for client in clients:
            await client.aclose()


@contextmanager
def wall_clock_off_by(offset_s: float) -> Iterator[None]:
    """This process's wall clock `offset_s` off (as another machine's may be)."""
    real = time.time
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(time, "time", lambda: real() + offset_s)
        yield


def test_clocks_of_the_replicas_change_no_outcome(redis_server: RedisServer) -> None:
    """a's machine runs 10 s ahead, b's 10 s behind: both see each other alive, the
    session published last wins, slots are counted right."""

    async def test() -> None:
        async with registries(redis_server, "a", "b") as (a, b):
            with wall_clock_off_by(10):
                first = await a.publish("bot", "s-a", 1)
                await a.heartbeat([Listed("bot", "s-a", 1, first)], [], False, 0)
                assert await a.acquire(["bot"], [1], "m1")
            with wall_clock_off_by(-10):
                beat = await b.heartbeat([], [], False, 0)
                assert [r.name for r in beat.replicas] == ["a", "b"]
                assert await b.locate("bot") == Holder("bot", "a", "s-a", 1)
                assert await b.busy(["bot"]) == {"bot": 1}
                assert not await b.acquire(["bot"], [1], "m2")  # full
                second = await b.publish("bot", "s-b", 1)
            with wall_clock_off_by(10):
                beat = await a.heartbeat(
                    [Listed("bot", "s-a", 1, first)], [("bot", "m1")], False, 1
                )
                assert [r.name for r in beat.replicas] == ["a", "b"]
                assert beat.stale == ["bot"] and beat.lost == []
            with wall_clock_off_by(-10):
                beat = await b.heartbeat([Listed("bot", "s-b", 1, second)], [], False, 0)
                assert beat.stale == []
                assert await b.locate("bot") == Holder("bot", "b", "s-b", 1)

    run(test)


def test_a_killed_replica_leaves_nothing_that_lasts(redis_server: RedisServer) -> None:
    """ "dead" stops beating without leaving: its entries turn stale at their expiry, are
    removed by the survivor's beats after the tombstone, and once no replica is left
    every key expires."""

    async def test() -> None:
        async with registries(redis_server, "dead", "alive", bounds=SHORT) as (dead, alive):
            order = await dead.publish("bot", "s1", 2)
            assert await dead.acquire(["bot"], [2], "m1")
            await dead.heartbeat([Listed("bot", "s1", 2, order)], [("bot", "m1")], False, 1)
            assert (await alive.locate_many(["bot"]))["bot"] == Holder("bot", "dead", "s1", 2)

            async def stale() -> bool:
                await alive.heartbeat([], [], False, 0)
                holder = (await alive.locate_many(["bot"]))["bot"]
                return holder is not None and holder.stale

            await eventually(stale, "the entry to turn stale")
            assert await alive.locate("bot") is None
            assert [r.name for r in await alive.replicas()] == ["alive"]
            assert await alive.holders() == []
            assert await alive.busy(["bot"]) == {"bot": 0}

            async def swept() -> bool:
                await alive.heartbeat([], [], False, 0)
                client = alive.client
                return not (
                    await client.hexists(SESSIONS, "bot")
                    or await client.hexists(REPLICAS, "dead")
                    or await client.exists(slots_key("bot"))
                )

            await eventually(swept, "the survivor's beats to remove the dead entries")
            assert (await alive.locate_many(["bot"]))["bot"] is None
            # The survivor is killed too: nothing it wrote outlives the bound.
            await eventually(
                lambda: asyncio.to_thread(lambda: redis_server.keys() == 0), "every key to expire"
            )

    run(test)


def test_a_slot_that_expired_is_reported_not_renewed_over_capacity(
    redis_server: RedisServer,
) -> None:
    async def test() -> None:
        async with registries(redis_server, "a", "b", bounds=SHORT) as (a, b):
            assert await a.acquire(["bot"], [1], "m1")
            beat = await a.heartbeat([], [("bot", "m1")], False, 1)
            assert beat.lost == []
            # a is cut off past the slot's expiry; b takes the bot's only slot.
            await eventually(lambda: b.acquire(["bot"], [1], "m2"), "the slot to expire")
            beat = await a.heartbeat([], [("bot", "m1")], False, 1)
            assert beat.lost == [("bot", "m1")]
            assert await b.busy(["bot"]) == {"bot": 1}
            # A released slot is not renewed either.
            await b.release(["bot"], "m2")
            assert (await b.heartbeat([], [("bot", "m2")], False, 0)).lost == [("bot", "m2")]
            assert await b.busy(["bot"]) == {"bot": 0}

    run(test)


def test_matches_waiting_for_a_bot_are_served_in_the_order_they_came(
    redis_server: RedisServer,
) -> None:
    """m2 waits for x and y; m3, come later, for x alone: when x frees, m3 does not
    overtake m2."""

    async def test() -> None:
        async with tiers(redis_server.url, "a", bounds=SHORT) as (a,):
            a.hub.open("x", 1)
            a.hub.open("y", 1)
            await a.beat()
            await a.seats.acquire(["x"], "m1")
            await a.seats.acquire(["y"], "m0")
            # Each waiter queues at its first step, before it awaits anything.
            second = asyncio.create_task(a.seats.acquire(["x", "y"], "m2"))
            await asyncio.sleep(0)
            third = asyncio.create_task(a.seats.acquire(["x"], "m3"))
            await asyncio.sleep(0)
            await a.seats.release(["x"], "m1")
            await asyncio.sleep(1.5)  # three polls: the overtaking this test rules out
            assert not third.done() and not second.done()
            await a.seats.release(["y"], "m0")
            await asyncio.wait_for(second, 5)
            assert not third.done()
            await a.seats.release(["x", "y"], "m2")
            await asyncio.wait_for(third, 5)

    run(test)


def test_a_replica_cut_off_from_redis_is_not_ready_and_sends_its_bots_away(
    redis_server: RedisServer,
) -> None:
    async def test() -> None:
        async with tiers(redis_server.url, "a", bounds=SHORT) as (a,):
            assert a.ready
            changes: list[bool] = []
            a.on_ready.append(changes.append)
            bot = a.hub.open("bot", 1)

            async def started(request: MatchRequest) -> Any:
                raise AssertionError("a replica that is not ready started a match")

            placer = Placer(a, started, a.metrics)
            control = aioredis.Redis.from_url(redis_server.url)
            await control.execute_command("CLIENT", "PAUSE", "3000", "ALL")
            await control.aclose()
            await eventually(lambda: asyncio.sleep(0, not a.ready), "the tier to be not ready")
            # (A test process held up for `unready_s` on a loaded machine flips it too.)
            assert changes[-1:] == [False], changes
            request = MatchRequest("m1", "golden10", 2, ("bot", "other"), None, {}, False, 1000)
            with pytest.raises(TierUnavailable):
                await placer.start(request)

            async def told_to_move() -> bool:
                while not bot.outbox.empty():
                    if isinstance(bot.outbox.get_nowait(), Reconnect):
                        return True
                return False

            await eventually(told_to_move, "the bot to be asked to move")
            await eventually(lambda: asyncio.sleep(0, a.ready), "the tier to be ready again")
            assert changes[-2:] == [False, True], changes

    run(test)


def test_a_replica_that_starts_without_redis_is_ready_once_redis_answers(
    redis_server: RedisServer,
) -> None:
    async def test() -> None:
        redis_server.stop()
        assert redis_server.proc is not None
        redis_server.proc.wait(10)
        async with tiers(redis_server.url, "a", bounds=SHORT) as (a,):
            assert not a.ready
            changes: list[bool] = []
            a.on_ready.append(changes.append)
            await asyncio.to_thread(redis_server.start)
            await eventually(lambda: asyncio.sleep(0, a.ready), "the tier to be ready")
            assert changes[-1:] == [True], changes

    run(test)
