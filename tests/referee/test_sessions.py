"""A seat's move when the fault is the referee's: its loop stood still, or its database
kept the bot out.

The loop is held up by a blocking sleep (as a stopped, starved or collecting
process would be). The bot's answer came meanwhile, and is handed on after
the deadline's timer has had its turn, as grpc.aio's tasks hand on a read:
the time the referee did not run is not the bot's. A bot away while the
referee refused sessions for its database's failure may have been kept out:
its seat aborts the match (SessionsRefused) instead of a timeout or a forfeit.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from referee.channels import Answer, SeatGone, SeatTimeout, SessionsRefused
from referee.sessions import (
    EXTENSIONS,
    LocalSeatChannel,
    Session,
    SessionHub,
)
from tests.referee.test_tier import act
from tests.support.aio import run
from tests.support.clock import Clock

DEADLINE_S = 0.1
STALL_S = 0.3


def stand_still(seconds: float) -> None:
    """Hold the event loop up, as a stopped process would be."""
    time.sleep(seconds)


def test_an_answer_that_came_while_the_referee_stood_still_counts() -> None:
    async def test() -> None:
        loop = asyncio.get_running_loop()
        session = Session("bot", 1)
        asking = asyncio.create_task(session.ask(act("r1"), DEADLINE_S))
        await asyncio.sleep(0)  # the request is on its way
        stand_still(STALL_S)
        # Read after the deadline's timer, due by now, has had its turn.
        loop.call_soon(loop.call_soon, session.answer, Answer("r1", index=1))
        answer = await asking
        assert answer.index == 1
        # Not charged the stall past its deadline (when in the stall it answered, nobody
        # can tell: about its deadline, which costs its time bank nothing to speak of).
        assert answer.bot_s is not None and answer.bot_s < DEADLINE_S + 0.05, answer

    run(test)


@pytest.mark.parametrize("bank_s", [0.0, 5.0])
def test_a_stall_that_ends_before_the_deadline_is_not_the_bots_time(bank_s: float) -> None:
    """The loop stands still as the Act waits to be written, and the stall is over before
    the deadline's timer is due: the timer is on time, yet the bot, which answers at once
    once it has the Act, would be charged the stall: its time bank, or a strike without
    one."""

    async def test() -> None:
        loop = asyncio.get_running_loop()
        session = Session("bot", 1)
        asking = asyncio.create_task(session.ask(act("r1"), DEADLINE_S + bank_s))
        await asyncio.sleep(0)  # the request is in the outbox
        stand_still(0.8 * DEADLINE_S)
        # The bot has the Act only now, and answers within a fifth of its time.
        loop.call_later(0.4 * DEADLINE_S, session.answer, Answer("r1", index=1))
        answer = await asking
        assert answer.index == 1
        assert answer.bot_s is not None and answer.bot_s < 0.8 * DEADLINE_S, answer

    run(test)


def test_a_bot_that_did_not_answer_still_times_out_after_a_stall() -> None:
    async def test() -> None:
        session = Session("bot", 1)
        asking = asyncio.create_task(session.ask(act("r1"), DEADLINE_S))
        await asyncio.sleep(0)
        stand_still(STALL_S)
        started = time.monotonic()
        with pytest.raises(SeatTimeout):
            await asking
        # Waited again once, at most the move's own time: not the stall's length.
        assert time.monotonic() - started < STALL_S

    run(test)


def test_a_loop_late_turn_after_turn_does_not_hold_a_move_open_for_good() -> None:
    async def test() -> None:
        loop = asyncio.get_running_loop()
        session = Session("bot", 1)
        stalls = 0

        def overloaded() -> None:
            nonlocal stalls
            stalls += 1
            stand_still(DEADLINE_S)
            loop.call_soon(overloaded)

        asking = asyncio.create_task(session.ask(act("r1"), DEADLINE_S))
        await asyncio.sleep(0)
        loop.call_soon(overloaded)
        with pytest.raises(SeatTimeout):
            await asking
        assert stalls <= 2 * (EXTENSIONS + 2), stalls

    run(test)


def test_a_seat_away_while_sessions_were_refused_aborts_rather_than_strikes() -> None:
    async def test() -> None:
        clock = Clock()
        hub = SessionHub(clock)
        channel = LocalSeatChannel(hub, "bot", grace_s=5.0, clock=clock)
        hub.close(hub.open("bot", 1))
        clock.now += 1.0
        with pytest.raises(SeatTimeout):  # away, no refusal: the bot's own absence
            await channel.act(act("r1"), 0)
        hub.refused()  # some session, whose is not known, could not open
        clock.now += 1.0
        with pytest.raises(SessionsRefused):
            await channel.act(act("r2"), 0)
        clock.now += 4.0  # past the grace: not a forfeit either
        with pytest.raises(SessionsRefused):
            await channel.act(act("r3"), 30)

    run(test)


def test_a_refusal_before_the_bot_left_is_not_its_excuse() -> None:
    async def test() -> None:
        clock = Clock()
        hub = SessionHub(clock)
        channel = LocalSeatChannel(hub, "bot", grace_s=1.0, clock=clock)
        session = hub.open("bot", 1)
        hub.refused()
        clock.now += 0.1
        hub.close(session)
        clock.now += 0.5
        with pytest.raises(SeatTimeout):
            await channel.act(act("r1"), 0)
        clock.now += 1.0
        with pytest.raises(SeatGone):
            await channel.act(act("r2"), 30)

    run(test)


@pytest.mark.parametrize("database", ["answers", "fails", "is silent"])
def test_a_verdict_on_a_seat_away_asks_the_database_first(database: str) -> None:
    """A database that does not answer when an away seat's time is up may be keeping the
    bot out, here or on another replica: not the bot's fault."""

    async def probe() -> bool:
        if database == "is silent":
            await asyncio.Event().wait()  # a network that drops the packets
        return database == "answers"

    async def test() -> None:
        hub = SessionHub(probe=probe)
        channel = LocalSeatChannel(hub, "bot", grace_s=5.0)
        hub.close(hub.open("bot", 1))
        expected = SeatTimeout if database == "answers" else SessionsRefused
        with pytest.raises(expected):
            await channel.act(act("r1"), DEADLINE_S)

    run(test)
