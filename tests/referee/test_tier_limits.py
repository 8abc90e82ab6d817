"""The session-open bound holds across the tier: replicas on one Redis share one budget
per bot, and each falls back to its own while Redis does not answer."""

from __future__ import annotations

import redis.asyncio as aioredis

from referee.tier.limits import RETRY_S, TierAllowance
from tests.support.aio import run
from tests.support.services import RedisServer


def test_two_replicas_share_one_budget_per_bot(redis_server: RedisServer) -> None:
    async def test() -> None:
        clients = [aioredis.Redis.from_url(redis_server.url) for _ in range(2)]
        a, b = (TierAllowance(client, "session-opens", 3) for client in clients)
        try:
            assert [await a.take("bot"), await b.take("bot"), await a.take("bot")] == [True] * 3
            # The bot's minute is used up on both replicas; another bot has its own.
            assert not await b.take("bot")
            assert not await a.take("bot")
            assert await b.take("other")
        finally:
            for client in clients:
                await client.aclose()

    run(test)


def test_a_replica_counts_alone_while_redis_is_away_and_shares_again_after(
    redis_server: RedisServer,
) -> None:
    now = [0.0]

    async def test() -> None:
        client = aioredis.Redis.from_url(redis_server.url, socket_timeout=10)
        # A Redis restarted on a loaded machine may take longer than the referee's half a
        # second to answer its first script; waited for, the take must count in Redis.
        allowance = TierAllowance(client, "session-opens", 2, clock=lambda: now[0], timeout_s=10)
        try:
            assert await allowance.take("bot")
            redis_server.shutdown_nosave()
            # This replica's own bucket: its whole minute, as a lone referee's.
            assert [await allowance.take("bot") for _ in range(3)] == [True, True, False]
            redis_server.start()
            now[0] += RETRY_S
            # Redis restarted empty: the shared count begins again.
            assert [await allowance.take("bot") for _ in range(3)] == [True, True, False]
        finally:
            await client.aclose()

    run(test)


def test_no_bound_takes_nothing_from_redis() -> None:
    async def test() -> None:
        # Nothing listens on port 1: a bound of 0 never asks.
        client = aioredis.Redis.from_url("redis://127.0.0.1:1/0")
        allowance = TierAllowance(client, "session-opens", 0)
        assert all([await allowance.take("bot") for _ in range(100)])
        await client.aclose()

    run(test)
