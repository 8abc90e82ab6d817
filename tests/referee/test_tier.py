"""The tier's parts on a real Redis (a server of the test's own): placement, the
registry, and the relay seat channel between replicas in one process.

The replicas here are `Tier`s sharing one Redis, each with its own session hub; a
bot is a `Session` of a hub whose outbox the test reads and answers, as the
gRPC servicer would.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable
from dataclasses import replace
from typing import Any

import pytest

from ladder.errors import MatchCancelled, QuotaExceeded
from ladder.records import GameStart, Match, MatchRequest
from ladder.store import Conflict
from referee.channels import (
    ActRequest,
    Answer,
    RelayUnavailable,
    SeatGone,
    SeatTimeout,
    SentAway,
    SessionsRefused,
)
from referee.matches import BadMatch
from referee.metrics import RefereeMetrics
from referee.sessions import Session, SessionHub
from referee.tier.placement import Placer, placement
from referee.tier.registry import Bounds, Holder, Replica
from referee.tier.replica import Tier
from tests.support.aio import eventually, run, tiers
from tests.support.services import RedisServer
from tests.support.tcp_proxy import TcpProxy


def test_a_match_goes_where_most_of_its_seats_are() -> None:
    live = [Replica("a", False, 2, 5), Replica("b", False, 2, 1), Replica("c", False, 1, 0)]
    assert placement([["b"], ["b"], ["a"]], live, "a") == "b"
    # A tie stays where the call came in; among others, the one with fewer matches.
    assert placement([["a"], ["b"]], live, "a") == "a"
    assert placement([["a"], ["b"]], live, "c") == "b"
    # No seat held anywhere (or only by replicas that are gone): here.
    assert placement([[], []], live, "c") == "c"
    assert placement([["gone"]], live, "c") == "c"
    # A draining replica takes no match, however many seats it holds.
    draining = [Replica("a", False, 1, 0), Replica("b", True, 2, 0)]
    assert placement([["b"], ["b"], ["a"]], draining, "c") == "a"
    # Bots holding a session on several replicas: where all of them are.
    assert placement([["a", "b"], ["b", "c"], ["a", "b", "c"]], live, "a") == "b"
    assert placement([["a", "b"], ["a", "b"]], live, "c") == "b"


def test_the_registry_holds_the_newest_session_and_forgets_a_dead_replica(
    redis_server: RedisServer,
) -> None:
    async def test() -> None:
        async with tiers(redis_server.url, "a", "b") as (a, b):
            old = a.hub.open("bot", 2)
            await a.beat()
            assert await b.registry.locate("bot") == Holder("bot", "a", old.id, 2)
            # The bot reconnects to b while a still holds a half-open stream: the newest
            # session wins, and a's next heartbeat closes its stale one.
            new = b.hub.open("bot", 3)
            await b.beat()
            await a.beat()
            assert old.closed and a.hub.get("bot") is None
            assert await a.registry.locate("bot") == Holder("bot", "b", new.id, 3)
            # a withdrawing its old session does not remove b's entry.
            await a.registry.withdraw("bot", old.id)
            assert (await a.registry.locate("bot")) is not None
            assert [r.name for r in await a.registry.replicas()] == ["a", "b"]
        # A replica that stops beating (killed): tests/referee/test_registry.py.

    run(test)


def test_sessions_of_one_instance_stand_side_by_side_until_another_instance_opens(
    redis_server: RedisServer,
) -> None:
    """A bot process holding a session on each replica (one `Hello.instance`): none of
    them is stale, and a match goes where all its bots are. A new process of the bot
    (another instance) replaces them all, as a new session always did."""

    # No heartbeat but the test's own: what the registry says is what each step wrote.
    manual = Bounds(heartbeat_s=30.0, expiry_s=90.0, tombstone_s=60.0, unready_s=60.0)

    async def test() -> None:
        async with tiers(redis_server.url, "a", "b", "c", bounds=manual) as (a, b, c):
            replicas = ["a", "b", "c"]
            on_a = a.hub.open("bot", 2, instance="i1")
            await a.beat()
            on_b = b.hub.open("bot", 2, instance="i1")
            c.hub.open("other", 1)
            for tier in (b, c, a, b, a):
                await tier.beat()
            assert not on_a.closed and not on_b.closed
            assert await a.registry.held_by(["bot", "other"], replicas) == {
                "bot": ["a", "b"],
                "other": ["c"],
            }
            assert await a.registry.locate("bot") == Holder("bot", "b", on_b.id, 2)
            # b's session ends (b drains, say): a's stands, and the entry names it at once,
            # not at a's next beat (none comes in this test): meanwhile the others would
            # find the bot nowhere.
            b.hub.close(on_b)

            async def withdrawn() -> bool:
                found = await c.registry.locate("bot")
                return found is None or found.replica != "b"

            await eventually(withdrawn, "b's session to be withdrawn")
            assert await c.registry.locate("bot") == Holder("bot", "a", on_a.id, 2)
            assert await a.registry.held_by(["bot"], replicas) == {"bot": ["a"]}
            # The bot restarts (another instance) on c: a's session is stale now.
            on_c = c.hub.open("bot", 2, instance="i2")
            await c.beat()
            await a.beat()
            assert on_a.closed and a.hub.get("bot") is None
            assert await a.registry.held_by(["bot"], replicas) == {"bot": ["c"]}
            assert await a.registry.locate("bot") == Holder("bot", "c", on_c.id, 2)

    run(test)


def test_a_session_is_published_once_when_a_heartbeat_comes_before_its_publication(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Published twice, the late copy could land after the bot's newer session on another
    # replica had been published, and take the registry back to the stale one.
    async def test() -> None:
        async with tiers(redis_server.url, "a") as (a,):
            published: list[str] = []
            publish = a.registry.publish

            async def counted(bot_id: str, session_id: str, capacity: int, instance: str) -> int:
                published.append(session_id)
                return await publish(bot_id, session_id, capacity, instance)

            monkeypatch.setattr(a.registry, "publish", counted)
            session = a.hub.open("bot", 2)
            await a.beat()
            await a.beat()
            assert published == [session.id]
            assert await a.registry.locate("bot") == Holder("bot", "a", session.id, 2)

    run(test)


async def busy(tier: Tier) -> dict[str, int]:
    """Matches each connected bot plays now, as ListSessions reports them."""
    return {bot.bot_id: bot.busy for bot in await tier.seats.connected()}


def test_a_tier_closes_when_its_heartbeat_ends_just_as_it_is_cancelled(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Python 3.11's wait_for, cancelled when the beat it waits for has just finished,
    # returns the beat's result and drops the cancellation: the heartbeat went on beating
    # and a stopping replica waited for it for ever (seen once in a loaded run).
    async def test() -> None:
        tier = Tier(redis_server.url, "a", SessionHub(), 2.0, RefereeMetrics.create())
        await tier.start()
        beating = asyncio.Event()
        finish = asyncio.Event()
        beat = tier.beat

        async def held_beat() -> None:
            await beat()
            beating.set()
            await finish.wait()

        monkeypatch.setattr(tier, "beat", held_beat)
        await asyncio.wait_for(beating.wait(), 10)
        # The beat finishes in the loop's next round, and the close begins in the same
        # round, after it: the beat is done, the heartbeat not yet woken.
        finish.set()
        await asyncio.sleep(0)
        closing = asyncio.create_task(tier.close())
        done, _ = await asyncio.wait([closing], timeout=10)
        if not done:
            for task in asyncio.all_tasks():
                if task.get_name() == "tier heartbeat":
                    task.cancel()
            await closing
        assert done, "the tier did not close: its heartbeat swallowed the cancellation"

    run(test)


def test_slots_are_counted_across_replicas(redis_server: RedisServer) -> None:
    async def test() -> None:
        async with tiers(redis_server.url, "a", "b") as (a, b):
            a.hub.open("x", 2)
            a.hub.open("y", 1)
            await a.beat()
            await a.seats.acquire(["x"], "m1")
            await b.seats.acquire(["x"], "m2")
            # x plays two matches, one on each replica: a third waits for a slot.
            third = asyncio.create_task(b.seats.acquire(["x", "y"], "m3"))
            await asyncio.sleep(1.0)
            assert not third.done()
            assert await busy(b) == {"x": 2, "y": 0}
            await a.seats.release(["x"], "m1")
            await asyncio.wait_for(third, 5)
            assert await busy(a) == {"x": 2, "y": 1}

    run(test)


def test_the_registry_is_rebuilt_after_redis_loses_everything(redis_server: RedisServer) -> None:
    async def test() -> None:
        async with tiers(redis_server.url, "a") as (a,):
            session = a.hub.open("bot", 1)
            await a.seats.acquire(["bot"], "m1")
            await a.beat()
            await a.clients.commands.flushall()
            assert await a.registry.locate("bot") is None
            await a.beat()
            assert await a.registry.locate("bot") == Holder("bot", "a", session.id, 1)
            # The lost slot is not taken again (it might be over the bot's capacity now).
            assert await busy(a) == {"bot": 0}

    run(test)


def act(request_id: str, seat: int = 0) -> ActRequest:
    return ActRequest(request_id, "m1", 0, "golden10", seat, 3, {"hand": []}, ("a", "b"), 1000, 0)


async def next_act(session: Session) -> ActRequest:
    """The next Act request on the session's outbox (notices skipped)."""
    while True:
        message = await asyncio.wait_for(session.outbox.get(), 10)
        if isinstance(message, ActRequest):
            return message


def test_a_seat_held_by_another_replica_is_asked_through_the_relay(
    redis_server: RedisServer,
) -> None:
    async def test() -> None:
        async with tiers(redis_server.url, "a", "b") as (a, b):
            bot = b.hub.open("bot", 1)
            await b.beat()
            channel = a.seats.channel("bot")
            await channel.notify(GameStart("m1", 0, 0, "golden10", ("bot",), {}, "c0ffee"))
            asking = asyncio.create_task(channel.act(act("r1"), 10))
            notice = await asyncio.wait_for(bot.outbox.get(), 10)
            assert isinstance(notice, GameStart) and notice.seed_commitment == "c0ffee"
            request = await next_act(bot)
            assert request == act("r1")
            assert bot.answer(Answer("r1", index=1))
            answer = await asyncio.wait_for(asking, 10)
            assert answer == Answer("r1", index=1, relayed=True)
            assert a.metrics.relayed.labels("sent")._value.get() == 1
            assert b.metrics.relayed.labels("forwarded")._value.get() == 1

    run(test)


def test_a_request_follows_its_bot_to_another_replica_mid_turn(redis_server: RedisServer) -> None:
    async def test() -> None:
        async with tiers(redis_server.url, "a", "b", "c") as (a, b, c):
            first = b.hub.open("bot", 1)
            await b.beat()
            asking = asyncio.create_task(a.seats.channel("bot").act(act("r1"), 20))
            assert (await next_act(first)).request_id == "r1"
            # The bot drops its stream on b without answering and reconnects to c.
            b.hub.close(first)
            second = c.hub.open("bot", 1)
            again = await next_act(second)
            assert again.request_id == "r1"
            assert second.answer(Answer("r1", action="b"))
            assert (await asyncio.wait_for(asking, 10)).action == "b"

    run(test)


def test_a_bot_that_is_nowhere_has_the_grace_period(redis_server: RedisServer) -> None:
    async def test() -> None:
        async with tiers(redis_server.url, "a", grace_s=1.0) as (a,):
            started = time.monotonic()
            with pytest.raises(SeatGone):
                await a.seats.channel("absent").act(act("r1"), 30)
            assert 0.9 <= time.monotonic() - started < 10
            # Within the grace, a short deadline is a plain timeout.
            with pytest.raises(SeatTimeout):
                await a.seats.channel("absent").act(act("r2"), 0.2)

    run(test)


@pytest.mark.parametrize("found", ["nowhere", "elsewhere"])
def test_a_bot_away_while_redis_stalled_is_not_struck(
    redis_server: RedisServer, found: str
) -> None:
    """Redis stalls while a bot moves from a to b (as when a replica that lost Redis
    asks its bots to move): b cannot publish the new session, and a's look-up, answered
    once Redis is back, finds the bot nowhere or, late, on b. The deadline passed
    meanwhile, for the relay's fault, not the bot's: the match aborts, nobody is struck."""
    proxy, through = TcpProxy.before(redis_server.url)

    async def test() -> None:
        async with tiers(through, "a", "b") as (a, b):
            first = a.hub.open("bot", 1)
            await a.beat()
            await b.beat()
            proxy.freeze()
            a.hub.close(first)
            if found == "elsewhere":
                b.hub.open("bot", 1)
            asking = asyncio.create_task(a.seats.channel("bot").act(act("r1"), 0.3))
            await asyncio.sleep(1.0)  # the stall's length, not a wait for something
            proxy.thaw()
            if found == "elsewhere":
                await b.beat()  # b publishes the session once Redis answers
            with pytest.raises(RelayUnavailable, match="Redis"):
                await asyncio.wait_for(asking, 10)

    with proxy:
        run(test)


@pytest.mark.parametrize("seat", ["relayed", "local"])
def test_a_bot_sent_away_by_a_drain_mid_move_is_not_struck(
    redis_server: RedisServer, seat: str
) -> None:
    """b drains while the bot, held there, has a move to make, for a match on a
    (`relayed`) or on b itself (`local`): b asks the bot to reconnect elsewhere, and
    the bot is not back before the move's deadline. The reconnect was the arena's
    doing: the match aborts, nobody is struck."""

    async def test() -> None:
        async with tiers(redis_server.url, "a", "b") as (a, b):
            held = b.hub.open("bot", 1)
            await a.beat()
            await b.beat()
            asker = a if seat == "relayed" else b
            asking = asyncio.create_task(asker.seats.channel("bot").act(act("r1"), 0.5))
            await next_act(held)
            await b.drain("this referee replica is stopping; reconnect")
            await a.beat()
            b.hub.close(held)  # the bot leaves as asked, and is slow to come back
            with pytest.raises(SentAway, match="reconnect"):
                await asyncio.wait_for(asking, 10)

    run(test)


def test_a_relayed_act_tells_the_bot_its_time_by_the_holders_clock_alone(
    redis_server: RedisServer,
) -> None:
    """The asking replica's wall clock is 400 ms behind the holder's: the bot is still
    told the whole of its move's time, not what the two clocks' difference leaves."""

    async def test() -> None:
        async with tiers(redis_server.url, "a", "b") as (a, b):
            held = b.hub.open("bot", 1)
            await b.beat()
            behind = replace(act("r1"), asked_at=time.time() - 0.4)
            asking = asyncio.create_task(a.seats.channel("bot").act(behind, 1.0))
            sent = await next_act(held)
            deadline_ms, _ = sent.clock_left(time.time())  # as the holder writes it
            assert deadline_ms > 900, deadline_ms
            held.answer(Answer(sent.request_id, 0))
            await asking

    run(test)


def test_a_slow_look_up_of_the_holder_is_not_the_bots_time(redis_server: RedisServer) -> None:
    """Redis takes a while to say where the bot is (a fork for a snapshot, a busy
    moment), not long enough to be distrusted: the time it took is the relay's, and the
    bot, which answers within half its time once it has the Act, still has its whole
    move's time."""
    deadline_s = 0.4

    async def test() -> None:
        async with tiers(redis_server.url, "a", "b") as (a, b):
            held = b.hub.open("bot", 1)
            await b.beat()
            loop = asyncio.get_running_loop()

            async def bot() -> None:
                while True:
                    request = await next_act(held)
                    loop.call_later(deadline_s / 2, held.answer, Answer(request.request_id, 0))

            answering = asyncio.create_task(bot())
            locate_many = a.registry.locate_many

            async def slow(bot_ids: Any) -> Any:
                await asyncio.sleep(0.8 * deadline_s)  # under SLOW_S: Redis is believed
                return await locate_many(bot_ids)

            a.registry.locate_many = slow  # type: ignore[method-assign]
            answer = await a.seats.channel("bot").act(act("r1"), deadline_s)
            assert answer.index == 0 and answer.bot_s is not None
            assert answer.bot_s < deadline_s, answer
            answering.cancel()

    run(test)


@pytest.mark.parametrize("after", ["cut", "back"])
def test_a_bot_kept_out_by_a_replica_cut_off_a_moment_ago_is_not_struck(
    redis_server: RedisServer, after: str
) -> None:
    """b lost Redis a moment ago, so it opens no session (it could not make it known),
    and it could not tell the tier that it refused the bot that left a. a's seat, away
    meanwhile, is not struck when its deadline passes: a asks the other replicas whether
    they refused a session, and b does not answer while it is cut off (`cut`), or says
    it did once it is `back`."""
    proxy, through = TcpProxy.before(redis_server.url)

    async def test() -> None:
        async with tiers(redis_server.url, "a") as (a,), tiers(through, "b") as (b,):
            first = a.hub.open("bot", 1)
            await a.beat()
            await b.beat()
            proxy.cut()
            a.hub.close(first)
            b.hub.refused()  # the bot, leaving a, was kept out of b

            def asked(replica: str, message: dict[str, Any]) -> bool:
                if after == "back" and message["kind"] == "call":
                    proxy.restore()  # b's Redis comes back as a asks it
                return False  # sent on

            a.relay.fault = asked
            fault = SessionsRefused if after == "back" else RelayUnavailable
            with pytest.raises(fault, match="replica b"):
                await a.seats.channel("bot").act(act("r1"), 0.3)

    with proxy:
        run(test)


def test_a_bot_kept_out_by_a_replica_cut_off_past_its_expiry_is_not_struck(
    redis_server: RedisServer,
) -> None:
    """b has been cut off from Redis for longer than an entry lives: the others count it
    gone, but it still refuses the bots that come to it (as a load balancer may send
    them, until its readiness fails). a's seat, away meanwhile, asks b too, as a replica
    gone only a moment ago: b does not answer, and the match aborts."""
    proxy, through = TcpProxy.before(redis_server.url)
    short = Bounds(heartbeat_s=0.1, expiry_s=0.5, tombstone_s=60.0, unready_s=0.3)

    async def test() -> None:
        async with (
            tiers(redis_server.url, "a", bounds=short) as (a,),
            tiers(through, "b", bounds=short) as (b,),
        ):
            first = a.hub.open("bot", 1)

            def joined(*names: str) -> Awaitable[bool]:
                return asyncio.sleep(0, {replica.name for replica in a.live} == set(names))

            await eventually(lambda: joined("a", "b"), "b to join")
            proxy.cut()
            await eventually(lambda: joined("a"), "b's entry to expire")
            a.hub.close(first)
            b.hub.refused()  # the bot, leaving a, was kept out of b
            with pytest.raises(RelayUnavailable, match="replica b"):
                await a.seats.channel("bot").act(act("r1"), 0.3)

    with proxy:
        run(test)


def test_a_refusal_on_one_replica_excuses_an_absence_on_the_others(
    redis_server: RedisServer,
) -> None:
    """b's database failed to open a session, whose is not known: a seat on a, away
    meanwhile, aborts its match (SessionsRefused) where it would have timed out; with no
    refusal, the absence is the bot's own."""

    async def test() -> None:
        async with tiers(redis_server.url, "a", "b") as (a, b):
            await a.beat()
            await b.beat()
            with pytest.raises(SeatTimeout):
                await a.seats.channel("absent").act(act("r1"), 0.2)

            def asked(replica: str, message: dict[str, Any]) -> bool:
                if message["kind"] == "call":
                    b.hub.refused()  # while the bot is away
                return False  # sent on

            a.relay.fault = asked
            with pytest.raises(SessionsRefused, match="replica b"):
                await a.seats.channel("absent").act(act("r2"), 0.2)

    run(test)


def test_a_call_runs_on_the_replica_it_names(redis_server: RedisServer) -> None:
    async def test() -> None:
        async with tiers(redis_server.url, "a", "b") as (a, b):
            seen: list[dict[str, Any]] = []

            async def echo(payload: dict[str, Any]) -> dict[str, Any]:
                seen.append(payload)
                if payload.get("fail"):
                    raise ValueError("refused")
                return {"where": b.replica, **payload}

            b.relay.handle("echo", echo)
            assert await a.relay.call("b", "echo", {"n": 1}, 10) == {"where": "b", "n": 1}
            with pytest.raises(Exception, match="refused") as failed:
                await a.relay.call("b", "echo", {"fail": True}, 10)
            assert getattr(failed.value, "kind", None) == "ValueError"
            # Nobody reads a dead replica's inbox: the call times out.
            with pytest.raises(TimeoutError):
                await a.relay.call("gone", "echo", {}, 0.5)

    run(test)


@pytest.mark.parametrize(
    "refusal",
    [
        BadMatch("bot y does not play golden10"),
        Conflict("match m1 exists with other settings"),
        QuotaExceeded("challenges per hour", 3, None, "one of the author's challenges ends"),
        MatchCancelled("match m1 is not played: its tournament t1 was cancelled"),
    ],
    ids=lambda refusal: type(refusal).__name__,
)
def test_a_match_refused_where_it_was_forwarded_is_refused_here_too(
    redis_server: RedisServer, refusal: Exception, caplog: pytest.LogCaptureFixture
) -> None:
    """The replica the match belongs on refuses it for the request's own sake (its bots, a
    match of that id, the author's quota): the caller hears that refusal, and the match is
    not tried again here as if that replica had failed."""

    async def test() -> None:
        async with tiers(redis_server.url, "a", "b") as (a, b):
            b.hub.open("x", 1)
            b.hub.open("y", 1)
            await b.beat()
            await a.beat()

            async def refused(request: MatchRequest) -> Match:
                raise refusal

            async def here(request: MatchRequest) -> Match:
                raise AssertionError("a match refused where it belongs was played here")

            Placer(b, refused, b.metrics)
            placer = Placer(a, here, a.metrics)
            request = MatchRequest("m1", "golden10", 2, ("x", "y"), None, {}, False, 1000)
            with pytest.raises(type(refusal), match=re.escape(str(refusal))):
                await placer.start(request)
            assert "playing it here" not in caplog.text

    run(test)
