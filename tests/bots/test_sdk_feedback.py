"""What the SDK tells a bot's author: how each match ended, and its errors without a flood."""

from __future__ import annotations

import asyncio
import logging

import pytest

import bots
from arena_cli.processes import free_port
from bots.sdk import BotRunner, RaisedLog, match_end_line
from cardarena_api.v1 import arena_pb2 as pb


def end(*entries: pb.EntryResult) -> pb.MatchEnd:
    return pb.MatchEnd(
        match_id="m1", result=pb.MatchResult(entries=entries, scores=[e.score for e in entries])
    )


def test_a_match_end_says_the_place_score_strikes_and_why_a_bot_forfeited() -> None:
    ended = end(
        pb.EntryResult(bot_id="a", score=455, rank=1, strikes=1),
        pb.EntryResult(
            bot_id="b", score=-100, rank=3, strikes=3, forfeited=True, forfeit_reason="3 strikes"
        ),
        pb.EntryResult(bot_id="c", score=90, rank=2),
    )
    assert match_end_line(ended, "a") == "match m1 ended: place 1 of 3, score 455, 1 strike"
    assert match_end_line(ended, "b") == (
        "match m1 ended: place 3 of 3, score -100, 3 strikes, forfeited: 3 strikes"
    )
    assert match_end_line(ended, "z") == "match m1 ended: scores 455, -100, 90"


def raise_value_error() -> None:
    raise ValueError("no card to play")


def test_a_repeated_exception_is_logged_in_full_once_then_counted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [0.0]
    raised = RaisedLog(every_s=10.0, clock=lambda: now[0])
    with caplog.at_level(logging.ERROR, logger="bots.sdk"):
        for move in range(750):
            now[0] = move * 0.01  # 750 moves in 7.5 s
            try:
                raise_value_error()
            except ValueError as error:
                raised.record(error, f"match m1 seat {move % 4}")
        now[0] = 10.5
        try:
            raise_value_error()
        except ValueError as error:
            raised.record(error, "match m1 seat 0")
    records = [r for r in caplog.records if r.name == "bots.sdk"]
    assert [r.exc_info is not None for r in records] == [True, False]
    assert "ValueError: no card to play again, 751 times so far" in records[1].getMessage()


def test_another_exception_gets_its_own_traceback(caplog: pytest.LogCaptureFixture) -> None:
    raised = RaisedLog(clock=lambda: 0.0)
    with caplog.at_level(logging.ERROR, logger="bots.sdk"):
        for error in (ValueError("a"), KeyError("b"), ValueError("a")):
            try:
                raise error
            except Exception as caught:
                raised.record(caught, "match m1 seat 0")
    assert [r.exc_info is not None for r in caplog.records] == [True, True]


def test_a_referee_that_is_not_there_is_named_with_the_retry_interval(
    caplog: pytest.LogCaptureFixture,
) -> None:
    address = f"127.0.0.1:{free_port()}"  # nothing listens there
    runner = BotRunner(bots.load("random"), address, "arena_token")

    async def briefly() -> None:
        task = asyncio.create_task(runner.run(max_backoff_s=0.2))
        for _ in range(100):  # bounded: a few refusals come within a second
            await asyncio.sleep(0.05)
            if sum("retrying in" in r.getMessage() for r in caplog.records) >= 2:
                break
        runner.stop()
        await asyncio.wait_for(task, 30)

    with caplog.at_level(logging.WARNING, logger="bots.sdk"):
        asyncio.run(briefly())
    lines = [r.getMessage() for r in caplog.records if "retrying in" in r.getMessage()]
    assert len(lines) >= 2
    assert all(f"the referee at {address} ended: UNAVAILABLE" in line for line in lines)
