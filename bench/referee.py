"""Referee throughput: concurrent matches of `random` bots in separate processes.

Prints one JSON line:
{"moves_per_s", "p50_ms", "p99_ms", "baseline_roundtrips_per_s", "ratio",
 "referee_cpu_us_per_move", "baseline_server_cpu_us_per_roundtrip",
 "bot_cpu_us_per_move", "baseline_client_cpu_us_per_roundtrip",
 "baseline_clients", "one_client_roundtrips_per_s", "one_client_ratio", ...}
where the baseline is a bare grpc.aio bidirectional-stream ping-pong with the
same message size and the same number of exchanges in flight, measured in
the same run, in the bots' shape: as many client processes as there are bot
processes (`baseline_clients`, at most one per match), each with its own
connection, and ratio = moves_per_s / baseline_roundtrips_per_s. The CPU
figures are the referee process's own user+system time over the played
window per move, and the bot processes' together per move (each move is
one bot's answer: a bot's CPU per move it answered, on the mean), so that
the referee's cost and the bots' are seen apart; beside each, the same
figure for the ping-pong's server and its clients: what gRPC alone costs
per exchange, the floor under both.

The same ping-pong from one client process, all its streams on one
connection (`one_client_*`), is the baseline this bench had first: that
process reads and writes for every stream at each wake-up, where a bot's
process wakes for its own stream alone, so it runs about 1.6 times the
round trips a second of the bots' shape on 2 cores, at less than half the
client CPU per round trip (docs/performance.md).

    python -m bench.referee [--matches 8] [--game goodge] [--seconds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from arena_cli.processes import cpu_seconds, free_port, processes, spawn, wait_serving
from bench.processes import (
    BenchError,
    move_latencies,
    quantile,
    register_bots,
    wait_connected,
)
from bots.sdk import channel
from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import arena_pb2_grpc as pb_grpc

PINGPONG = (sys.executable, "-m", "bench.pingpong")


async def play_matches(
    address: str,
    bot_ids: list[str],
    matches: int,
    game: str,
    players: int,
    seconds: float,
    pids: Sequence[int],
    window: AbstractContextManager[object],
) -> dict[str, Any]:
    """Keep `matches` matches running for about `seconds`, inside `window`; moves,
    latencies, and the CPU seconds each of `pids` used meanwhile."""
    done: list[str] = []
    async with channel(address) as chan:
        stub = pb_grpc.RefereeServiceStub(chan)
        deadline = time.monotonic() + seconds

        async def slot(number: int) -> None:
            round_number = 0
            while time.monotonic() < deadline:
                seats = [bot_ids[(number + offset) % len(bot_ids)] for offset in range(players)]
                match_id = f"bench-{uuid.uuid4().hex}"
                request = pb.StartMatchRequest(
                    match_id=match_id,
                    game=game,
                    players=players,
                    bot_ids=seats,
                    seed=number * 1000 + round_number,
                    deadline_ms=1000,
                )
                await stub.StartMatch(request, timeout=30)
                match = await stub.GetMatch(pb.GetMatchRequest(match_id=match_id, wait=True))
                assert match.status == "finished", match.reason
                done.append(match_id)
                round_number += 1

        with window:
            start = time.monotonic()
            cpu_before = [cpu_seconds(pid) for pid in pids]
            await asyncio.gather(*(slot(number) for number in range(matches)))
            elapsed = time.monotonic() - start
            cpu = [cpu_seconds(pid) - was for pid, was in zip(pids, cpu_before, strict=True)]
        # Latencies come from the stored events, so measuring adds no traffic to the moves.
        latencies = await move_latencies(stub, done)
    return {
        "moves": len(latencies),
        "elapsed_s": elapsed,
        "matches_finished": len(done),
        "cpu_s": cpu,
        "p50_ms": statistics.median(latencies),
        "p99_ms": quantile(latencies, 0.99),
    }


def act_size(game: str, players: int) -> int:
    """The mean size in bytes of an Act message of `game`, from a local game."""
    import games
    from referee import wire_results
    from referee.channels import ActRequest

    spec = games.get(game)
    state = spec.new_game(players, 1)
    sizes: list[int] = []
    while not state.is_over() and len(sizes) < 400:
        seat = state.to_act()[0]
        legal = tuple(str(a) for a in state.legal_actions(seat))
        request = ActRequest(
            uuid.uuid4().hex,
            uuid.uuid4().hex,
            0,
            game,
            seat,
            players,
            state.observation(seat),
            legal,
            1000,
            5000,
        )
        sizes.append(wire_results.referee_message(request).ByteSize())
        state.apply(seat, legal[0])
    return int(statistics.mean(sizes))


def baseline(
    streams: int, clients: int, size: int, seconds: float, workdir: Path
) -> dict[str, float]:
    """The bare ping-pong, `streams` exchanges in flight from `clients` client processes:
    round trips per second, and the CPU microseconds per round trip of its server (the
    floor under the referee's figure) and of its clients (under a bot's)."""
    port = free_port()
    with processes() as started:
        server = subprocess.Popen(
            [*PINGPONG, "serve", str(port)],
            stdout=subprocess.PIPE,
            stderr=(workdir / "pingpong-server.log").open("wb"),
        )
        started.append(server)
        # Counted from when it serves: its start-up (imports) is no exchange's cost, as the
        # referee's is not in its figure either.
        assert server.stdout is not None
        if server.stdout.readline() != b"serving\n":
            raise BenchError(
                f"the ping-pong server did not start: {workdir / 'pingpong-server.log'}"
            )
        shares = [streams // clients + (number < streams % clients) for number in range(clients)]
        runs = []
        for number, share in enumerate(shares):
            runs.append(
                subprocess.Popen(
                    [*PINGPONG, "client", str(port), str(share), str(size), str(seconds)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=(workdir / f"pingpong-client-{number}.log").open("wb"),
                )
            )
            started.append(runs[-1])
        for run in runs:
            assert run.stdout is not None
            if run.stdout.readline() != b"ready\n":
                raise BenchError(f"a ping-pong client did not connect: see {workdir}")
        server_cpu = cpu_seconds(server.pid)
        for run in runs:
            assert run.stdin is not None
            run.stdin.write(b"go\n")
            run.stdin.flush()
        figures = [json.loads(run.communicate(timeout=seconds + 60)[0]) for run in runs]
        server_cpu = cpu_seconds(server.pid) - server_cpu
    roundtrips = max(1, sum(figure["roundtrips"] for figure in figures))
    return {
        "roundtrips_per_s": sum(figure["roundtrips_per_s"] for figure in figures),
        "server_cpu_us": server_cpu * 1e6 / roundtrips,
        "client_cpu_us": sum(figure["cpu_s"] for figure in figures) * 1e6 / roundtrips,
    }


Window = Callable[[int, int], AbstractContextManager[object]]
"""What wraps the measured window, given the referee's pid and the first bot's
(`bench.profile` samples one of them)."""


def parser() -> argparse.ArgumentParser:
    """The options of this bench (`bench.profile` takes the same)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=8, help="concurrent matches (default 8)")
    parser.add_argument("--game", default="goodge", help="game (default goodge)")
    parser.add_argument("--players", type=int, default=4, help="seats per match (default 4)")
    parser.add_argument("--bots", type=int, default=8, help="bot processes (default 8)")
    parser.add_argument(
        "--seconds", type=float, default=10.0, help="how long to keep matches going"
    )
    return parser


def measure(
    args: argparse.Namespace, window: Window = lambda referee, bot: nullcontext()
) -> dict[str, Any]:
    """Play the bench's matches, then the ping-pong baseline; the JSON line's figures."""
    with tempfile.TemporaryDirectory() as tmp, processes() as started:
        workdir = Path(tmp)
        port = free_port()
        address = f"127.0.0.1:{port}"
        referee = spawn(
            [
                "referee",
                "--listen",
                address,
                "--db",
                f"sqlite:///{workdir / 'bench.db'}",
                "--metrics-port",
                "0",
            ],
            workdir / "referee.log",
        )
        started.append(referee)
        wait_serving(address)
        names = [f"bench-{number}-{uuid.uuid4().hex[:6]}" for number in range(args.bots)]
        bot_ids, tokens = asyncio.run(register_bots(address, names, ["goodge", "golden10", "goof"]))
        bots = []
        for number, token in enumerate(tokens):
            bots.append(
                spawn(
                    [
                        "bot",
                        "run",
                        "random",
                        "--token",
                        token,
                        "--referee",
                        address,
                        "--capacity",
                        str(args.matches),
                    ],
                    workdir / f"bot-{number}.log",
                )
            )
            started.append(bots[-1])
        asyncio.run(wait_connected(address, bot_ids, bots, 60))
        measured = asyncio.run(
            play_matches(
                address,
                bot_ids,
                args.matches,
                args.game,
                args.players,
                args.seconds,
                [referee.pid, *(bot.pid for bot in bots)],
                window(referee.pid, bots[0].pid),
            )
        )
        size = act_size(args.game, args.players)
        seconds = min(args.seconds, 5.0)
        clients = min(args.bots, args.matches)
        bare = baseline(args.matches, clients, size, seconds, workdir)
        one_client = baseline(args.matches, 1, size, seconds, workdir)
    moves_per_s = measured["moves"] / measured["elapsed_s"]
    referee_cpu_s, *bots_cpu_s = measured["cpu_s"]
    moves = max(1, measured["moves"])
    return {
        "moves_per_s": round(moves_per_s, 1),
        "p50_ms": round(measured["p50_ms"], 3),
        "p99_ms": round(measured["p99_ms"], 3),
        "baseline_roundtrips_per_s": round(bare["roundtrips_per_s"], 1),
        "ratio": round(moves_per_s / bare["roundtrips_per_s"], 3),
        "referee_cpu_us_per_move": round(referee_cpu_s * 1e6 / moves, 1),
        "baseline_server_cpu_us_per_roundtrip": round(bare["server_cpu_us"], 1),
        "bot_cpu_us_per_move": round(sum(bots_cpu_s) * 1e6 / moves, 1),
        "baseline_client_cpu_us_per_roundtrip": round(bare["client_cpu_us"], 1),
        "baseline_clients": clients,
        "one_client_roundtrips_per_s": round(one_client["roundtrips_per_s"], 1),
        "one_client_ratio": round(moves_per_s / one_client["roundtrips_per_s"], 3),
        "moves": measured["moves"],
        "matches": args.matches,
        "matches_finished": measured["matches_finished"],
        "game": args.game,
        "act_bytes": size,
    }


def main() -> None:
    """Print the JSON line."""
    print(json.dumps(measure(parser().parse_args())))


if __name__ == "__main__":
    main()
