"""Load: 200 bots connected at once, 50 matches at a time on one referee.

Prints one JSON line:
{"bots", "concurrent_matches", "matches_per_min", "moves_per_s", "p99_move_ms",
 "referee_rss_mb", "referee_cpu_us_per_move", "lost", "double_counted", ...}

The bots are `random` bots, `--bots-per-process` of them in each of several
`bench.multibot` processes (one BotRunner, one session, per bot). The
matches (Golden 10, 4 players, `--rounds` rounds) are played in `--waves`
waves of `--matches` at once; in each wave every bot sits in one match.
moves_per_s and p99_move_ms (Act sent to answer received, as the referee
timed it) come from the stored replays, read once the waves are over (building
them would stall the moves measured); referee_rss_mb is the referee's peak
resident memory (VmHWM), referee_cpu_us_per_move its CPU over the waves per
move played; lost counts matches started but not
finished; double_counted counts matches the store holds more games of than
were played (a match played twice).

    python -m bench.load [--bots 200] [--bots-per-process 25] [--matches 50] [--waves 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from arena_cli.processes import cpu_seconds, free_port, processes, spawn, wait_serving
from bench.processes import (
    move_latencies,
    quantile,
    register_bots,
    start_multibot,
    wait_connected,
)
from bots.sdk import channel
from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import arena_pb2_grpc as pb_grpc
from ladder.models import ReplayRow
from ladder.store import Store

GAME = "golden10"
PLAYERS = 4


def peak_rss_mb(pid: int) -> float:
    """A process's peak resident memory in MB (VmHWM from /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def play(
    address: str,
    bot_ids: list[str],
    matches: int,
    waves: int,
    rounds: int,
    cpu: Callable[[], float],
) -> dict[str, Any]:
    """Play the waves; counts, latencies, the time taken and `cpu()`'s rise over the waves."""
    done: list[str] = []
    started = finished = 0
    peak = 0
    running = 0
    async with channel(address) as chan:
        stub = pb_grpc.RefereeServiceStub(chan)

        async def one(wave: int, slot: int) -> None:
            nonlocal started, finished, running, peak
            # Each wave seats every bot once, in other groups than the last wave.
            shift = wave * (len(bot_ids) // matches // 2 + 1)
            seats = [
                bot_ids[(slot * PLAYERS + seat * (1 + wave) + shift) % len(bot_ids)]
                for seat in range(PLAYERS)
            ]
            if len(set(seats)) < PLAYERS:
                seats = bot_ids[slot * PLAYERS : slot * PLAYERS + PLAYERS]
            match_id = f"load-w{wave}-m{slot:03d}"
            await stub.StartMatch(
                pb.StartMatchRequest(
                    match_id=match_id,
                    game=GAME,
                    players=PLAYERS,
                    bot_ids=seats,
                    seed=wave * 1000 + slot,
                    deadline_ms=1000,
                    options={"rounds": str(rounds)},
                ),
                timeout=60,
            )
            started += 1
            running += 1
            peak = max(peak, running)
            match = await stub.GetMatch(
                pb.GetMatchRequest(match_id=match_id, wait=True), timeout=600
            )
            running -= 1
            if match.status != "finished":
                return
            finished += 1
            done.append(match_id)

        start, cpu_start = time.monotonic(), cpu()
        for wave in range(waves):
            await asyncio.gather(*(one(wave, slot) for slot in range(matches)))
        elapsed, cpu_used = time.monotonic() - start, cpu() - cpu_start
        latencies = await move_latencies(stub, done)
    return {
        "started": started,
        "finished": finished,
        "peak_running": peak,
        "elapsed_s": elapsed,
        "cpu_s": cpu_used,
        "moves": len(latencies),
        "p99_ms": quantile(latencies, 0.99),
        "p50_ms": quantile(latencies, 0.5),
    }


def double_counted(database_url: str) -> int:
    """Matches the store holds more than one game of (non-duplicate matches play one)."""
    store = Store(database_url, upgrade=False)
    try:
        with store.session() as session:
            rows = session.execute(
                select(ReplayRow.match_id, func.count())
                .group_by(ReplayRow.match_id)
                .having(func.count() > 1)
            ).all()
        return len(rows)
    finally:
        store.close()


def main() -> None:
    """Print the JSON line."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=200, help="bots connected (default 200)")
    parser.add_argument("--bots-per-process", type=int, default=25, help="(default 25)")
    parser.add_argument("--matches", type=int, default=50, help="matches at once (default 50)")
    parser.add_argument("--waves", type=int, default=2, help="waves of matches (default 2)")
    parser.add_argument("--rounds", type=int, default=2, help="Golden 10 rounds (default 2)")
    args = parser.parse_args()
    if args.matches * PLAYERS > args.bots:
        parser.error("--matches * 4 must not exceed --bots (each bot in one match a wave)")
    with tempfile.TemporaryDirectory() as tmp, processes() as started:
        workdir = Path(tmp)
        database_url = f"sqlite:///{workdir / 'arena.db'}"
        address = f"127.0.0.1:{free_port()}"
        referee = spawn(
            [
                "referee",
                "--listen",
                address,
                "--db",
                database_url,
                "--metrics-port",
                "0",
                "--registrations-per-minute",
                str(args.bots * 10),
            ],
            workdir / "referee.log",
        )
        started.append(referee)
        wait_serving(address)
        names = [f"load-{number}" for number in range(args.bots)]
        bot_ids, tokens = asyncio.run(register_bots(address, names, [GAME]))
        bots = []
        for number, first in enumerate(range(0, args.bots, args.bots_per_process)):
            share = tokens[first : first + args.bots_per_process]
            bots.append(start_multibot(address, share, workdir, number))
            started.append(bots[-1])
        asyncio.run(wait_connected(address, bot_ids, bots, 120))
        measured = asyncio.run(
            play(
                address,
                bot_ids,
                args.matches,
                args.waves,
                args.rounds,
                partial(cpu_seconds, referee.pid),
            )
        )
        referee_cpu = measured["cpu_s"]
        rss = peak_rss_mb(referee.pid)
        doubled = double_counted(database_url)
    elapsed = measured["elapsed_s"]
    print(
        json.dumps(
            {
                "bots": args.bots,
                "concurrent_matches": measured["peak_running"],
                "matches_per_min": round(measured["finished"] / elapsed * 60, 1),
                "moves_per_s": round(measured["moves"] / elapsed, 1),
                "p99_move_ms": round(measured["p99_ms"], 3),
                "referee_rss_mb": round(rss, 1),
                "referee_cpu_us_per_move": round(referee_cpu * 1e6 / max(1, measured["moves"]), 1),
                "lost": measured["started"] - measured["finished"],
                "double_counted": doubled,
                "matches": measured["finished"],
                "p50_move_ms": round(measured["p50_ms"], 3),
                "elapsed_s": round(elapsed, 2),
                "game": f"{GAME}-{PLAYERS}p",
                "rounds": args.rounds,
            }
        )
    )


if __name__ == "__main__":
    main()
