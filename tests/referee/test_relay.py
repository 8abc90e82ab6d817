"""The relay between replicas when it loses messages, and when a replica dies.

Replicas are `Tier`s in one event loop on a Redis of the test's own, bots the
sessions of their hubs, as in test_tier. `Relay.fault` drops chosen messages
on their way: a lost `act`, `taken`, `answer` or verdict never becomes the
bot's timeout. Only the holder's word (its verdict) that the bot did not
answer in time does; what the relay could not carry aborts the match
(RelayUnavailable), and MatchManager stores it aborted and plays it again.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
import redis.asyncio as aioredis
import redis.exceptions

from ladder.records import MatchRequest, MatchStatus
from ladder.store import Store
from referee.channels import Answer, RelayUnavailable, SeatGone, SeatTimeout
from referee.matches import MatchManager
from referee.runner import Limits
from referee.sessions import Session
from referee.tier.channel import RESEND_S
from referee.tier.registry import Bounds
from referee.tier.relay import Fault, Relay, inbox, round_trip
from referee.tier.replica import Tier
from tests.referee.test_tier import act, next_act
from tests.support.aio import eventually, run, tiers
from tests.support.services import RedisServer


def drop(
    kind: str, to: str, count: int | None = None, seen: list[dict[str, Any]] | None = None
) -> Fault:
    """A fault that drops messages of `kind` (any if "*") to replica `to`: the first
    `count` of them, or all; each one dropped is added to `seen`."""
    left = [count]

    def fault(replica: str, message: dict[str, Any]) -> bool:
        if replica != to or kind not in ("*", message["kind"]):
            return False
        if left[0] is not None:
            if left[0] == 0:
                return False
            left[0] -= 1
        if seen is not None:
            seen.append(message)
        return True

    return fault


def delay(relay: Relay, to: str, seconds: float) -> Fault:
    """A fault of `relay` that holds every message to replica `to` back for `seconds` (a
    stalled replica, or a slow Redis), then sends it in the order it came."""
    loop = asyncio.get_running_loop()
    due: set[int] = set()
    """The messages held back whose time has come (by identity)."""

    def send(message: dict[str, Any]) -> None:
        due.add(id(message))
        relay.push(to, message)

    def fault(replica: str, message: dict[str, Any]) -> bool:
        if replica != to:
            return False
        if id(message) in due:
            due.discard(id(message))
            return False
        loop.call_later(seconds, send, message)
        return True

    return fault


async def answering(session: Session, index: int = 1) -> None:
    """Answer every Act request on the session at once (until cancelled)."""
    while True:
        request = await next_act(session)
        session.answer(Answer(request.request_id, index=index))


async def holding(a: Tier, b: Tier, bot_id: str = "bot") -> Session:
    """`bot_id` connected to b, which a knows as live."""
    session = b.hub.open(bot_id, 1)
    await b.beat()
    await a.beat()
    return session


def test_a_lost_act_is_sent_again_and_answered(redis_server: RedisServer) -> None:
    async def test() -> None:
        async with tiers(redis_server.url, "a", "b") as (a, b):
            bot = await holding(a, b)
            lost: list[dict[str, Any]] = []
            a.relay.fault = drop("act", "b", count=1, seen=lost)
            asking = asyncio.create_task(a.seats.channel("bot").act(act("r1"), 5))
            request = await next_act(bot)
            assert request.request_id == "r1" and len(lost) == 1
            assert bot.answer(Answer("r1", index=1))
            assert await asyncio.wait_for(asking, 10) == Answer("r1", index=1, relayed=True)

    run(test)


def test_a_request_sent_again_is_taken_once_and_its_answer_sent_again(
    redis_server: RedisServer,
) -> None:
    async def test() -> None:
        async with tiers(redis_server.url, "a", "b") as (a, b):
            bot = await holding(a, b)
            # The acknowledgement and the answer are lost: the copy sent again is not a
            # second request to the bot, and brings the answer the bot gave.
            lost: list[dict[str, Any]] = []
            faults = [drop("taken", "a", 1, lost), drop("answer", "a", 1, lost)]
            b.relay.fault = lambda replica, message: any(f(replica, message) for f in faults)
            asking = asyncio.create_task(a.seats.channel("bot").act(act("r1"), 5))
            assert (await next_act(bot)).request_id == "r1"
            assert bot.answer(Answer("r1", index=1))
            assert await asyncio.wait_for(asking, 10) == Answer("r1", index=1, relayed=True)
            assert [m["kind"] for m in lost] == ["taken", "answer"]
            assert bot.outbox.empty()

    run(test)


def test_a_quick_answer_goes_back_with_its_acknowledgement_in_one_push(
    redis_server: RedisServer,
) -> None:
    async def test() -> None:
        async with tiers(redis_server.url, "a", "b") as (a, b):
            bot = await holding(a, b)
            replying = asyncio.create_task(answering(bot))
            client = aioredis.from_url(redis_server.url)
            try:
                await client.config_resetstat()
                answer = await a.seats.channel("bot").act(act("r1"), 5)
                pushes = (await client.info("commandstats"))["cmdstat_rpush"]["calls"]
            finally:
                replying.cancel()
                await client.aclose()
            assert answer == Answer("r1", index=1, relayed=True)
            # One push each way: the request, then `taken` and the answer together.
            assert pushes == 2

    run(test)


def test_a_slow_answer_is_acknowledged_before_a_resend_is_due(
    redis_server: RedisServer,
) -> None:
    async def test() -> None:
        async with tiers(redis_server.url, "a", "b") as (a, b):
            bot = await holding(a, b)
            loop = asyncio.get_running_loop()
            sent: list[tuple[str, float]] = []

            def record(replica: str, message: dict[str, Any]) -> bool:
                sent.append((message["kind"], loop.time()))
                return False

            a.relay.fault = b.relay.fault = record
            start = loop.time()
            asking = asyncio.create_task(a.seats.channel("bot").act(act("r1"), 5))
            assert (await next_act(bot)).request_id == "r1"

            async def acknowledged() -> bool:
                return any(kind == "taken" for kind, _ in sent)

            await eventually(acknowledged, "the holder's `taken`")
            assert bot.answer(Answer("r1", index=1))
            assert (await asyncio.wait_for(asking, 10)).index == 1
            kinds = [kind for kind, _ in sent]
            assert kinds[:2] == ["act", "taken"] and kinds[-1] == "answer"
            # Sent by the holder's own timer, not with the answer: before a resend is due.
            assert sent[1][1] - start < RESEND_S

    run(test)


def test_a_request_the_relay_never_carries_is_not_the_bots_timeout(
    redis_server: RedisServer,
) -> None:
    async def test() -> None:
        async with tiers(redis_server.url, "a", "b") as (a, b):
            bot = await holding(a, b)
            a.relay.fault = drop("*", "b")
            with pytest.raises(RelayUnavailable, match="acknowledge"):
                await a.seats.channel("bot").act(act("r1"), 0.5)
            assert bot.outbox.empty()

    run(test)


def test_a_request_taken_after_its_deadline_is_answered_not_aborted(
    redis_server: RedisServer,
) -> None:
    async def test() -> None:
        async with tiers(redis_server.url, "a", "b") as (a, b):
            bot = await holding(a, b)
            replying = asyncio.create_task(answering(bot))
            # Everything a sends b comes 0.6 s late: b takes the request after its 0.4 s
            # deadline, and the bot answers it at once. Not yet acknowledged at the
            # deadline is not lost: a waits for b's word as for a request taken.
            a.relay.fault = delay(a.relay, "b", 0.6)
            answer = await a.seats.channel("bot").act(act("r1"), 0.4)
            assert answer == Answer("r1", index=1, relayed=True)
            replying.cancel()

    run(test)


def test_a_holder_that_stood_still_past_the_deadline_passes_the_answer_on(
    redis_server: RedisServer,
) -> None:
    async def test() -> None:
        async with tiers(redis_server.url, "a", "b") as (a, b):
            bot = await holding(a, b)
            loop = asyncio.get_running_loop()
            asking = asyncio.create_task(a.seats.channel("bot").act(act("r1"), 0.3))
            assert (await next_act(bot)).request_id == "r1"
            # Both replicas' loop stands still past the deadline (one process here); the
            # bot's answer came meanwhile, and is read after b's deadline timer's turn.
            time.sleep(0.6)
            loop.call_soon(loop.call_soon, bot.answer, Answer("r1", index=1))
            answer = await asyncio.wait_for(asking, 10)
            assert answer == Answer("r1", index=1, relayed=True)
            # Not charged the stall past its deadline.
            assert answer.bot_s is not None and answer.bot_s < 0.35, answer

    run(test)


def test_a_lost_answer_comes_with_the_verdict_or_is_a_relay_fault(
    redis_server: RedisServer,
) -> None:
    async def test() -> None:
        async with tiers(redis_server.url, "a", "b") as (a, b):
            bot = await holding(a, b)
            replying = asyncio.create_task(answering(bot))
            b.relay.fault = drop("answer", "a", count=1)
            # At the deadline a asks b what became of r1: b says again what the bot answered.
            answer = await a.seats.channel("bot").act(act("r1"), 0.5)
            assert answer == Answer("r1", index=1, relayed=True)
            # With the bot's own time, which the runner charges, not the verdict's wait.
            assert answer.bot_s is not None and answer.bot_s < 0.25, answer
            # Every answer lost, the verdict too: the relay is at fault, not the bot.
            b.relay.fault = drop("answer", "a")
            with pytest.raises(RelayUnavailable, match="verdict"):
                await a.seats.channel("bot").act(act("r2"), 0.5)
            replying.cancel()

    run(test)


def test_a_bot_that_does_not_answer_still_times_out(redis_server: RedisServer) -> None:
    async def test() -> None:
        async with tiers(redis_server.url, "a", "b") as (a, b):
            bot = await holding(a, b)
            # Its holder's verdict lost once: asked again, b says it again.
            b.relay.fault = drop("late", "a", count=1)
            with pytest.raises(SeatTimeout):
                await a.seats.channel("bot").act(act("r1"), 0.5)
            # Its answer once the holder gave its verdict is no answer any more.
            assert (await next_act(bot)).request_id == "r1"
            assert not bot.answer(Answer("r1", index=1))

    run(test)


def test_an_answer_counts_only_from_the_replica_asked(redis_server: RedisServer) -> None:
    async def test() -> None:
        async with tiers(redis_server.url, "a", "b") as (a, b):
            bot = await holding(a, b)
            asking = asyncio.create_task(a.seats.channel("bot").act(act("r1"), 5))
            assert (await next_act(bot)).request_id == "r1"
            forged = {"kind": "answer", "id": "r1", "index": 0, "action": None, "bot_s": 0.0}
            client = aioredis.Redis.from_url(redis_server.url)
            # Ahead of b's answer in a's inbox: one from a replica not asked, one for a
            # request a does not wait for.
            await client.rpush(
                inbox("a"),
                orjson.dumps({**forged, "from": "c"}),
                orjson.dumps({**forged, "from": "b", "id": "r9"}),
            )
            await client.aclose()
            assert bot.answer(Answer("r1", index=1))
            assert await asyncio.wait_for(asking, 10) == Answer("r1", index=1, relayed=True)

    run(test)


def test_a_relayed_wait_does_not_poll_the_registry(redis_server: RedisServer) -> None:
    async def test() -> None:
        async with tiers(redis_server.url, "a", "b") as (a, b):
            bot = await holding(a, b)
            lookups: list[str] = []
            locate_many = a.registry.locate_many

            async def counted(bot_ids: Any) -> Any:
                lookups.extend(bot_ids)
                return await locate_many(bot_ids)

            a.registry.locate_many = counted  # type: ignore[method-assign]
            asking = asyncio.create_task(a.seats.channel("bot").act(act("r1"), 10))
            assert (await next_act(bot)).request_id == "r1"
            await asyncio.sleep(2.0)  # the bot thinks, a while
            assert bot.answer(Answer("r1", index=1))
            assert (await asyncio.wait_for(asking, 10)).index == 1
            assert lookups == ["bot"]  # once, to send the request

    run(test)


QUICK = Bounds(heartbeat_s=0.2, expiry_s=1.0, unready_s=0.6)
"""A tier that counts a silent replica dead within a second."""


async def kill(tier: Tier) -> None:
    """Stop `tier` as SIGKILL would: no beat, no inbox read, no withdrawal nor leaving."""
    tasks = [task for task in (tier._beat, *tier.relay._tasks) if task is not None]
    while not all(task.done() for task in tasks):
        # Again and again: redis-py may swallow a cancellation in a blocked read.
        for task in tasks:
            task.cancel()
        await asyncio.wait(tasks, timeout=0.1)


async def wait_stale(tier: Tier, bot_id: str) -> None:
    """Until `tier` sees `bot_id`'s entry stale (its replica stopped refreshing it)."""
    while True:
        holder = (await tier.registry.locate_many([bot_id]))[bot_id]
        if holder is not None and holder.stale:
            return
        await asyncio.sleep(0.1)


def test_a_bot_whose_replica_died_is_not_gone(redis_server: RedisServer) -> None:
    async def test() -> None:
        async with tiers(redis_server.url, "a", "b", "c", grace_s=1.0, bounds=QUICK) as (a, b, c):
            await holding(a, b)
            await kill(b)
            await asyncio.wait_for(wait_stale(a, "bot"), 20)
            # Past the grace, and past the move's deadline: the relay's fault, not the bot's.
            with pytest.raises(RelayUnavailable):
                await a.seats.channel("bot").act(act("r1"), 30)
            with pytest.raises(RelayUnavailable):
                await a.seats.channel("bot").act(act("r2"), 0.3)
            # Back on c within the grace, it answers there.
            asking = asyncio.create_task(a.seats.channel("bot").act(act("r3"), 30))
            again = c.hub.open("bot", 1)
            assert (await next_act(again)).request_id == "r3"
            assert again.answer(Answer("r3", index=1))
            assert (await asyncio.wait_for(asking, 10)).index == 1

    run(test)


def test_a_bot_that_left_its_replica_is_gone(redis_server: RedisServer) -> None:
    async def test() -> None:
        async with tiers(redis_server.url, "a", "b", grace_s=1.0) as (a, b):
            bot = await holding(a, b)
            b.hub.close(bot)
            with pytest.raises(SeatGone):
                await a.seats.channel("bot").act(act("r1"), 30)

    run(test)


def test_a_request_sent_again_after_its_replica_died_is_no_strike(
    redis_server: RedisServer,
) -> None:
    async def test() -> None:
        async with tiers(redis_server.url, "a", "b", "c", bounds=QUICK) as (a, b, c):
            await holding(a, b)
            asking = asyncio.create_task(a.seats.channel("bot").act(act("r1"), 4))
            assert (await next_act(b.hub.get("bot"))).request_id == "r1"  # type: ignore[arg-type]
            await kill(b)
            # The bot reconnects to c, where the request comes again once a's heartbeat no
            # longer lists b; what is left of its time runs out there.
            moved = c.hub.open("bot", 1)
            assert (await next_act(moved)).request_id == "r1"
            with pytest.raises(RelayUnavailable):
                await asyncio.wait_for(asking, 20)

    run(test)


def test_a_dead_replicas_inbox_expires(redis_server: RedisServer) -> None:
    async def test() -> None:
        async with tiers(redis_server.url, "a", "b") as (a, b):
            a.relay.inbox_expiry_s = 1.0
            client = aioredis.Redis.from_url(redis_server.url)
            ended: list[str] = []
            b.relay.on_ended.append(ended.append)
            a.relay.announce_end("m1", ["b"])
            while not ended:  # b reads it: its inbox is empty, so Redis deleted it
                await asyncio.sleep(0.05)
            await kill(b)
            a.relay.announce_end("m2", ["b"])
            while not await client.exists(inbox("b")):
                await asyncio.sleep(0.05)
            assert 0 < await client.pttl(inbox("b")) <= 1000
            while await client.exists(inbox("b")):
                await asyncio.sleep(0.1)
            await client.aclose()

    run(test)


def test_a_match_the_relay_fails_is_aborted_and_played_again(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    store = Store(f"sqlite:///{tmp_path / 'arena.db'}")
    bots = [store.register_bot(name, "1", ["golden10"])[0].id for name in ("ann", "bo", "cy")]

    async def test() -> None:
        async with tiers(redis_server.url, "a", "b") as (a, b):
            sessions = [a.hub.open(bots[0], 1), a.hub.open(bots[1], 1), b.hub.open(bots[2], 1)]
            await b.beat()
            await a.beat()
            replying = [asyncio.create_task(answering(s, index=0)) for s in sessions]
            manager = MatchManager(store, a.seats, Limits(time_bank_ms=0), a.metrics, replica="a")
            # 2 s a move: played again, a request taken across replicas on a loaded machine
            # was seen to need more than 300 ms (an abort, as the relay's fault, not a strike).
            request = MatchRequest(
                "m1", "golden10", 3, tuple(bots), 7, {"rounds": "2"}, False, deadline_ms=2000
            )
            a.relay.fault = drop("*", "b")
            await manager.start(request)
            aborted = await asyncio.wait_for(manager.wait("m1"), 30)
            assert aborted.status == MatchStatus.ABORTED, aborted
            assert aborted.reason.startswith("relay unavailable"), aborted.reason
            assert a.metrics.timeouts.labels("golden10")._value.get() == 0
            a.relay.fault = None
            await manager.start(request)
            played = await asyncio.wait_for(manager.wait("m1"), 60)
            assert played.status == MatchStatus.FINISHED and played.result is not None
            assert played.result.forfeits == ()
            assert played.result.strikes == {bot: 0 for bot in bots}
            for task in replying:
                task.cancel()

    try:
        run(test)
    finally:
        store.close()


def test_a_round_trip_that_fails_leaves_no_reply_behind(redis_server: RedisServer) -> None:
    async def test() -> None:
        client = aioredis.from_url(redis_server.url, single_connection_client=True)
        try:
            await client.set("not-a-list", "x")
            # The first command's error ends the round trip with the second's reply unread.
            with pytest.raises(redis.exceptions.ResponseError, match="WRONGTYPE"):
                await round_trip(client, [("RPUSH", "not-a-list", "m"), ("INCR", "count")])
            # The next round trip reads its own replies, not that one left over.
            assert await round_trip(client, [("RPUSH", "list", "m"), ("GET", "not-a-list")]) == [
                1,
                b"x",
            ]
        finally:
            await client.aclose()

    run(test)


def test_a_relay_closed_while_a_push_is_on_its_way_sends_the_rest_after_it(
    redis_server: RedisServer,
) -> None:
    async def test() -> None:
        async with tiers(redis_server.url, "a", "b") as (a, b):
            ended: list[str] = []
            b.relay.on_ended.append(ended.append)
            a.relay.announce_end("m1", ["b"])
            await asyncio.sleep(0)  # a's sender takes it and waits for Redis's reply
            a.relay.announce_end("m2", ["b"])
            # Closing flushes what is left on the same connection: after that push, not
            # across it.
            await a.relay.close()

            async def both() -> bool:
                return ended == ["m1", "m2"]

            await eventually(both, "both announcements at b")

    run(test)
