"""bench.scale's load: match slots kept busy, and a timed window measured amid them.

Each of `matches` slots starts a match of its bots, waits for it to end and
starts the next, so that the referee tier always has that many running. Once
`warmup` seconds have passed, `play` calls its caller to measure the start of
the window, samples how many matches run every `SAMPLE_S`, measures the end
after `seconds`, then lets the slots finish their current matches. A match
that fails or outlasts `MATCH_TIMEOUT_S` ends the run at once.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

import grpc

from bench.processes import BenchError
from bots.sdk import channel
from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import arena_pb2_grpc as pb_grpc

DEADLINE_MS = 1000
MATCH_TIMEOUT_S = 60.0
SAMPLE_S = 0.25
"""How often the window samples arena_matches_running (how busy the slots kept the referee)."""


@dataclass(frozen=True)
class Options:
    """What every run plays."""

    seconds: float
    warmup: float
    matches: int
    bots: int
    game: str
    players: int
    latency_seconds: float


async def play(
    address: str,
    bot_ids: list[str],
    options: Options,
    measure_start: Callable[[], None],
    measure_end: Callable[[], None],
    sample_running: Callable[[], float],
) -> tuple[int, float]:
    """Keep `matches` slots busy; measure around the window; matches finished, mean running."""
    stopping = asyncio.Event()
    finished = 0
    async with channel(address) as chan:
        stub = pb_grpc.RefereeServiceStub(chan)

        async def slot(number: int) -> None:
            nonlocal finished
            round_number = 0
            while not stopping.is_set():
                seats = [
                    bot_ids[(number + offset) % len(bot_ids)] for offset in range(options.players)
                ]
                match_id = f"scale-{uuid.uuid4().hex}"
                await stub.StartMatch(
                    pb.StartMatchRequest(
                        match_id=match_id,
                        game=options.game,
                        players=options.players,
                        bot_ids=seats,
                        seed=number * 100_000 + round_number,
                        deadline_ms=DEADLINE_MS,
                        duplicate=False,
                    ),
                    timeout=30,
                )
                try:
                    match = await stub.GetMatch(
                        pb.GetMatchRequest(match_id=match_id, wait=True), timeout=MATCH_TIMEOUT_S
                    )
                except grpc.aio.AioRpcError as error:
                    if error.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                        raise BenchError(
                            f"match {match_id} not over after {MATCH_TIMEOUT_S:g} s"
                        ) from None
                    raise
                if match.status != "finished":
                    raise BenchError(
                        f"match {match_id} ({', '.join(seats)}) ended {match.status}: "
                        f"{match.reason or 'no reason given'}"
                    )
                finished += 1
                round_number += 1

        async def window() -> tuple[int, float]:
            try:
                await asyncio.sleep(options.warmup)
                await asyncio.to_thread(measure_start)
                before = finished
                running: list[float] = []
                end = time.monotonic() + options.seconds
                while (left := end - time.monotonic()) > 0:
                    await asyncio.sleep(min(SAMPLE_S, left))
                    if time.monotonic() < end:
                        running.append(await asyncio.to_thread(sample_running))
                await asyncio.to_thread(measure_end)
                return finished - before, sum(running) / len(running) if running else 0.0
            finally:
                # The slots end their current matches: the referee then stops with none running.
                stopping.set()

        measuring = asyncio.create_task(window())
        slots = [asyncio.create_task(slot(number)) for number in range(options.matches)]
        tasks: list[asyncio.Task[object]] = [measuring, *slots]
        try:
            # A slot's failure ends the run at once, not after the window.
            done, pending = await asyncio.wait(
                tasks,
                timeout=options.warmup + options.seconds + MATCH_TIMEOUT_S + 30,
                return_when=asyncio.FIRST_EXCEPTION,
            )
            for task in done:
                task.result()  # the first error, if any
            if pending:
                raise BenchError("slots still waiting for their matches after the window")
            return measuring.result()
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
