"""Pipeline overhead: the same matches played directly and through the workers.

Prints one JSON line:
{"matches", "direct_s", "pipeline_s", "overhead_ratio", "direct_cpu_s", "pipeline_cpu_s", ...}
(a) direct: every match of a planned round robin started on the referee at
once and waited for; (b) pipeline: the same round robin created as a
tournament, handed to a Celery worker, played through the referee and
recorded, until the tournament is finished. Same referee, same bot
processes, same seeds and seats. A first round of each warms up and is not
counted; then they alternate. overhead_ratio = pipeline_s / direct_s;
direct_cpu_s and pipeline_cpu_s: CPU seconds of each role's processes
(referee, bots, worker, this bench) over each path's timed rounds.

    python -m bench.pipeline [--bots 5] [--game goodge] [--players 4]

The broker is the embedded one unless ARENA_BROKER_URL is set (redis://...).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import tempfile
import time
from pathlib import Path

from arena_cli.processes import cpu_seconds, free_port, processes, spawn, wait_serving
from bots.sdk import channel, register
from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import arena_pb2_grpc as pb_grpc
from ladder import queries, tournaments
from ladder.records import TournamentStatus
from ladder.store import MatchRequest, Store
from workers import WorkerSettings, make_app
from workers.celery_app import ArenaCelery
from workers.referee_client import start_request
from workers.tasks import CREATE_ROUND_ROBIN


async def play_direct(address: str, requests: list[MatchRequest]) -> float:
    """Seconds to play every request at once straight on the referee."""
    async with channel(address) as chan:
        stub = pb_grpc.RefereeServiceStub(chan)
        start = time.monotonic()

        async def one(request: MatchRequest) -> None:
            await stub.StartMatch(start_request(request), timeout=30)
            match = await stub.GetMatch(pb.GetMatchRequest(match_id=request.id, wait=True))
            assert match.status == "finished", match.reason

        await asyncio.gather(*(one(request) for request in requests))
        return time.monotonic() - start


def cpu(roles: dict[str, list[int]]) -> dict[str, float]:
    """CPU seconds so far of each role's processes."""
    return {role: sum(cpu_seconds(pid) for pid in pids) for role, pids in roles.items()}


def written(database: Path) -> tuple[tuple[int, int], ...]:
    """When and how far the SQLite database and its write-ahead log were last written."""
    found = []
    for path in (database, database.with_name(database.name + "-wal")):
        try:
            stat = path.stat()
        except FileNotFoundError:
            stat = None
        found.append((0, 0) if stat is None else (stat.st_mtime_ns, stat.st_size))
    return tuple(found)


def run_pipeline(
    app: ArenaCelery, store: Store, database: Path, tournament_id: str, timeout_s: float
) -> float:
    """Seconds from handing the tournament to the workers until it is finished."""
    start = time.monotonic()
    app.enqueue(CREATE_ROUND_ROBIN, tournament_id)
    # The status is read only after the database was written: read 20 times a second
    # regardless, the query cost this process about as much CPU as the worker spends,
    # taken from the referee and bots being timed on a machine whose cores they fill.
    # A look at the files costs next to nothing, so it is made often: the finish is
    # seen within 10 ms, as the direct path's waiting call sees its matches end.
    seen = None
    while True:
        now = written(database)
        if now != seen:
            seen = now
            if queries.tournament_status(store, tournament_id) == TournamentStatus.FINISHED:
                return time.monotonic() - start
        if time.monotonic() > start + timeout_s:
            raise TimeoutError(f"the tournament did not finish in {timeout_s:g} s")
        time.sleep(0.01)


def main() -> None:
    """Print the JSON line."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=5, help="entrants (default 5)")
    parser.add_argument("--game", default="goodge", help="game (default goodge)")
    parser.add_argument("--players", type=int, default=4, help="seats per match (default 4)")
    parser.add_argument("--concurrency", type=int, default=8, help="worker threads (default 8)")
    parser.add_argument("--timeout-s", type=float, default=900, help="give up after this long")
    parser.add_argument("--repeats", type=int, default=2, help="timed rounds of each (default 2)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, processes() as started:
        workdir = Path(tmp)
        database = workdir / "arena.db"
        database_url = f"sqlite:///{database}"
        address = f"127.0.0.1:{free_port()}"
        common = {"ARENA_DATABASE_URL": database_url, "ARENA_REFEREE": address}
        broker_url = os.environ.get("ARENA_BROKER_URL") or None
        started.append(
            spawn(
                ["referee", "--listen", address, "--metrics-port", "0"],
                workdir / "referee.log",
                common,
            )
        )
        wait_serving(address)
        bot_ids = []
        for number in range(args.bots):
            # Rules bots choose by what they see alone: both paths play the very same
            # games. A random bot draws from one RNG across all the matches it plays at
            # once, so its games (and their lengths, ±5% a round) changed between paths.
            reply = asyncio.run(register(address, f"rules-{number}", "1", [args.game]))
            bot_ids.append(reply.bot_id)
            started.append(
                spawn(
                    ["bot", "run", "rules", "--referee", address, "--capacity", "16"],
                    workdir / f"bot-{number}.log",
                    {**common, "ARENA_BOT_TOKEN": reply.token},
                )
            )
        roles = {"referee": [started[0].pid], "bots": [p.pid for p in started[1:]]}
        started.append(
            spawn(
                ["worker", "--metrics-port", "0", "--concurrency", str(args.concurrency)],
                workdir / "worker.log",
                {**common, "ARENA_LADDER_INTERVAL_S": "0"},
            )
        )
        roles["worker"] = [started[-1].pid]
        roles["bench"] = [os.getpid()]
        time.sleep(2.0)
        store = Store(database_url)
        app = make_app(
            settings=WorkerSettings.from_env(
                database_url=database_url, broker_url=broker_url, metrics_port=0
            )
        )
        try:
            direct_s = pipeline_s = 0.0
            matches = 0
            direct_cpu = dict.fromkeys(roles, 0.0)
            pipeline_cpu = dict.fromkeys(roles, 0.0)
            # Round 0 warms both paths up and is not counted; then they alternate.
            for repeat in range(args.repeats + 1):
                tournament_id = tournaments.create_tournament(
                    store, args.game, args.players, bot_ids, duplicate=True, seed=7 + repeat
                )
                planned = [
                    tournaments.planned_request(store, match_id)
                    for match_id in tournaments.pending_matches(store, tournament_id)
                ]
                requests = [
                    dataclasses.replace(request, id=f"direct-{request.id}")
                    for request in planned
                    if request is not None
                ]
                before = cpu(roles)
                direct = asyncio.run(play_direct(address, requests))
                between = cpu(roles)
                pipeline = run_pipeline(app, store, database, tournament_id, args.timeout_s)
                after = cpu(roles)
                if repeat > 0:
                    direct_s += direct
                    pipeline_s += pipeline
                    matches += len(requests)
                    for role in roles:
                        direct_cpu[role] += between[role] - before[role]
                        pipeline_cpu[role] += after[role] - between[role]
        finally:
            app.close()
            store.close()
    print(
        json.dumps(
            {
                "matches": matches,
                "direct_s": round(direct_s, 3),
                "pipeline_s": round(pipeline_s, 3),
                "overhead_ratio": round(pipeline_s / direct_s, 3),
                "direct_cpu_s": {role: round(s, 2) for role, s in direct_cpu.items()},
                "pipeline_cpu_s": {role: round(s, 2) for role, s in pipeline_cpu.items()},
                "game": args.game,
                "players": args.players,
                "broker": "embedded" if broker_url is None else broker_url.split(":", 1)[0],
            }
        )
    )


if __name__ == "__main__":
    main()
