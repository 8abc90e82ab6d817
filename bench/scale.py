"""Referee tier scaling: one referee process against several sharing a Redis relay.

Prints one JSON line:
{"replicas", "moves_per_s", "speedup", "cpu_bound_speedup", "local_p50_ms",
 "relay_p50_ms", "relay_extra_p50_ms", "loaded_local_p50_ms",
 "loaded_relay_p50_ms", "loaded_relay_extra_p50_ms", "referee_cpu_us_per_move",
 "relay_cpu_us_per_move", "relay_cpu_us_per_lone_move", "relay_cpu_ratio",
 "tier_cpu_ratio", "tier_extra_cpu_us_per_relayed_move", "bots_cpu_share",
 "relayed_share", "cores", "seconds", "matches", "bots", "sessions"}

For each replica count R of `--replicas` (default 1,2) the bench starts
`arena referee --processes R --relay redis://.../R` on a fresh SQLite
database, registers `--bots` light `random` bots played by two
`bench.multibot` processes (each bot holds its own connection, so the
kernel spreads them over the referee processes), and keeps `--matches`
matches running, each slot starting the next match when its last one
ends. Over a timed window of `--seconds` (after `--warmup` seconds) it
reads, from every referee process's Prometheus metrics and from /proc:

- moves_per_s: the arena_moves_total delta over the window; speedup is
  the last replica count's rate over the first's. The load is meant to
  saturate the machine (the default 32 matches at once do on 2 cores), so
  that throughput measures CPU, not latency;
- cpu_bound_speedup: the most any number of replicas could gain on this
  machine at the first run's costs per move (referee and bots): all cores
  over the cores that run used. The bots' share is what limits it;
- referee_cpu_us_per_move: user+system CPU of the referee processes (the
  supervisor's children; the referee itself when R is 1) per move;
- bots_cpu_share: the bot processes' CPU as a share of the whole machine
  (os.cpu_count() cores): what the bots take from the referee;
- local_p50_ms, relay_p50_ms: medians of arena_move_latency_seconds for
  moves of bots on the match's own replica (path="local") and on another
  one (path="relay"), and relay_extra_p50_ms the median of
  arena_relay_added_latency_seconds (what the relay adds to a relayed
  move), all interpolated within the histogram buckets: from a second
  window of the last multi-replica run with one match at a time (what a
  move costs, not how long it queues on a saturated machine); the same
  medians under the full load are the loaded_* fields;
- relayed_share: the fraction of moves relayed under the full load;
- relay_cpu_us_per_move: what the relay itself costs per relayed move, both
  replicas' sides together: two tiers in this process on the bench's Redis
  (`bench.relay_cost`), `--matches` requests in flight at once, a bot that
  answers at once; and relay_cpu_ratio = (a local move's referee CPU in the
  first run + that) / the local move's: what a relayed move costs against a
  local one when many are relayed at once;
- relay_cpu_us_per_lone_move: the same, one request in flight at a time:
  each relayed move's pushes and reads of an inbox carry it alone, as in a
  tier where relayed moves come one by one (they cost several times more);
- tier_cpu_ratio: the last run's referee CPU per move over the first's, and
  tier_extra_cpu_us_per_relayed_move the difference of the two per move
  relayed (last minus first, over relayed_share): what each relayed move
  cost the tier, to set beside the relay's two figures above. Two referees
  with no tier between them, each with half the load, cost what one does
  (docs/performance.md): the tier's extra is its relay.

Each loaded match seats consecutive bots in the order they registered. Its bots
keep a session on every replica of the tier, as the Python SDK does (sessions
"every_replica"), so a match is played where all its bots are and no move is
relayed. With `--one-session` each holds one session, where the kernel puts
it, as the Node example and older bots do (sessions "one"): a fifth to nearly a
third of the moves are then relayed, whichever replica plays the match. The
window with one match at a time always seats `LONE_BOTS` bots of one session
each, taken across the replicas, so that its moves include relayed ones.

The bench runs its own redis-server on a free loopback port (no shared
Redis is touched) and stops every process it started, also on errors.
Progress goes to stderr.

    python -m bench.scale [--seconds 10] [--matches 32] [--bots 24] [--game golden10]
        [--players 3] [--replicas 1,2] [--latency-seconds 5] [--one-session]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import replace
from functools import partial
from pathlib import Path

import grpc

from arena_cli.processes import free_port, spawn, wait_serving
from bench.match_slots import DEADLINE_MS, Options, play
from bench.processes import (
    BenchError,
    Started,
    across_replicas,
    free_port_range,
    referee_pids,
    register_bots,
    start_multibot,
    start_redis,
    tail,
    wait_connected,
)
from bench.relay_cost import relay_cost
from bench.scale_metrics import Mark, Window, buckets, ms, quantile, scrape, scrape_all, total
from cardarena_api import event_loop

BOT_PROCESSES = 2
"""Bot processes: more than one, so that the bots do not all share one core with one loop."""
BOT_CAPACITY = 4
"""Matches at once per bot: each bot sits in up to `players` of the slots' matches."""
READY_TIMEOUT_S = 60.0
RELAY_REQUESTS = 6400
"""Relayed requests that measure the relay's own cost."""
LONE_RELAY_REQUESTS = 1000
"""Relayed requests that measure it one at a time (each pays its round trips alone)."""
LONE_BOTS = 6
"""Bots of one session each, seated across the replicas in the window with one match at a
time (its relayed moves)."""


def describe(error: BaseException) -> str:
    """An error in one line; a gRPC error as its status code and details."""
    if isinstance(error, grpc.aio.AioRpcError):
        return f"{error.code().name}: {error.details()}"
    return str(error)


def progress(message: str) -> None:
    """A progress line on stderr (stdout holds only the JSON line)."""
    print(f"bench.scale: {message}", file=sys.stderr, flush=True)


def start_bots(
    address: str, tokens: list[str], workdir: Path, started: Started, one_session: bool
) -> list[subprocess.Popen[bytes]]:
    """The bots, dealt round-robin over `BOT_PROCESSES` `bench.multibot` processes."""
    bots = []
    for number in range(BOT_PROCESSES):
        share = tokens[number::BOT_PROCESSES]
        if not share:
            continue
        process = start_multibot(address, share, workdir, number, BOT_CAPACITY, one_session)
        bots.append(started.add(process, f"bots-{number}"))
    return bots


def connect_bots(
    address: str, names: list[str], game: str, workdir: Path, started: Started, one_session: bool
) -> tuple[dict[str, str], list[subprocess.Popen[bytes]]]:
    """Register and start bots of `names` (their files in `workdir`); the replica holding
    each one's session (its newest, for a bot with one on every replica), by bot id in the
    order of `names`, and their processes."""
    workdir.mkdir(exist_ok=True)
    bot_ids, tokens = asyncio.run(register_bots(address, names, [game]))
    bots = start_bots(address, tokens, workdir, started, one_session)
    held = asyncio.run(wait_connected(address, bot_ids, bots, READY_TIMEOUT_S))
    return {bot: held[bot] for bot in bot_ids}, bots


# --- one run ---------------------------------------------------------------------------


def wait_replicas(
    referee: subprocess.Popen[bytes], address: str, ports: list[int], replicas: int, log: Path
) -> None:
    """Wait until every referee process serves its metrics and sees the whole tier."""

    def alive() -> None:
        if referee.poll() is not None:
            raise BenchError(f"the referee exited {referee.returncode}:\n{tail(log)}")

    end = time.monotonic() + READY_TIMEOUT_S
    alive()
    try:
        wait_serving(address, READY_TIMEOUT_S)
    except TimeoutError as error:
        raise BenchError(f"{error}:\n{tail(log)}") from None
    # The health check reaches one process only; the metrics reach each. Until every
    # process listens the kernel would give all the bots' connections to the first ones.
    pending = list(ports)
    while pending:
        alive()
        if time.monotonic() > end:
            raise BenchError(
                f"referee metrics on ports {pending} not up, or not seeing {replicas} "
                f"replicas, after {READY_TIMEOUT_S:g} s:\n{tail(log)}"
            )
        with contextlib.suppress(OSError):
            # arena_referee_replicas counts the live replicas the tier's Redis shows.
            if total(scrape(pending[0]), "arena_referee_replicas") >= replicas:
                pending.pop(0)
                continue
        time.sleep(0.2)


def run(
    replicas: int,
    relay: str,
    redis: int,
    options: Options,
    workdir: Path,
    one_session: bool = False,
) -> tuple[Window, Window | None]:
    """One referee tier of `replicas` processes under the load; its window's measures,
    and with several replicas those of a window with one match at a time.

    `relay` is the Redis URL (without a database number), `redis` its server's pid. With
    `one_session` the load's bots hold one session each, not one on every replica.
    """
    rundir = workdir / f"replicas-{replicas}"
    rundir.mkdir()
    address = f"127.0.0.1:{free_port()}"
    base = free_port_range(replicas)
    ports = [base + index for index in range(replicas)]
    log = rundir / "referee.log"
    with Started(progress) as started:
        referee = started.add_referee(
            spawn(
                [
                    "referee",
                    "--listen",
                    address,
                    "--db",
                    f"sqlite:///{rundir / 'arena.db'}",
                    "--relay",
                    f"{relay}/{replicas}",
                    "--processes",
                    str(replicas),
                    "--metrics-port",
                    str(base),
                    "--registration",
                    "open",
                    # The bench is the only client; per-address rate bounds would throttle it.
                    "--registrations-per-minute",
                    "0",
                    "--reads-per-minute",
                    "0",
                ],
                log,
            )
        )
        wait_replicas(referee, address, ports, replicas, log)
        pids = referee_pids(referee.pid, replicas)
        if len(pids) != replicas:
            raise BenchError(f"found {len(pids)} referee processes, not {replicas}: {pids}")
        progress(f"{replicas} referee process(es) {pids} on {address}, metrics on {ports}")
        names = [f"scale-{number}-{uuid.uuid4().hex[:6]}" for number in range(options.bots)]
        held, bots = connect_bots(address, names, options.game, rundir, started, one_session)
        spread = dict(Counter(held.values()))
        progress(f"{options.bots} bots connected, their newest sessions per replica: {spread}")
        lone: dict[str, str] = {}
        if replicas > 1:
            lone_names = [f"lone-{number}-{uuid.uuid4().hex[:6]}" for number in range(LONE_BOTS)]
            lone, lone_bots = connect_bots(
                address, lone_names, options.game, rundir / "lone", started, True
            )
            bots += lone_bots
            spread = dict(Counter(lone.values()))
            progress(f"{LONE_BOTS} bots of one session connected, per replica: {spread}")

        marks: dict[str, Mark] = {}
        bot_pids = [process.pid for process in bots]

        def mark(name: str) -> None:
            marks[name] = Mark.take(ports, pids, bot_pids, redis)

        def running() -> float:
            return total(scrape_all(ports), "arena_matches_running")

        light = replace(options, matches=1, seconds=options.latency_seconds)
        # The one match at a time seats bots of one session, taken across the replicas,
        # so that its moves include relayed ones.
        phases = [("", options, list(held))]
        if replicas > 1:
            phases.append(("light ", light, across_replicas(lone)))
        windows: list[Window] = []
        for prefix, phase, seated in phases:
            try:
                finished, mean_running = asyncio.run(
                    play(
                        address,
                        seated,
                        phase,
                        partial(mark, prefix + "start"),
                        partial(mark, prefix + "end"),
                        running,
                    )
                )
            except (OSError, grpc.RpcError) as error:
                raise BenchError(
                    f"the run with {replicas} replica(s) failed: {describe(error)}"
                ) from None
            windows.append(
                Window.between(
                    replicas,
                    options.game,
                    marks[prefix + "start"],
                    marks[prefix + "end"],
                    finished,
                    mean_running,
                )
            )
        if referee_pids(referee.pid, replicas) != pids:
            raise BenchError("a referee process restarted during the window (see its log)")
    return windows[0], windows[1] if len(windows) > 1 else None


def relay_measures(window: Window, game: str) -> dict[str, float | None]:
    """Latency medians and the relayed share of a multi-replica window."""
    metrics = window.metrics
    latency = "arena_move_latency_seconds"
    local = buckets(metrics, latency, game=game, path="local")
    relay = buckets(metrics, latency, game=game, path="relay")
    local_n = local[-1][1] if local else 0.0
    relay_n = relay[-1][1] if relay else 0.0
    measures: dict[str, float | None] = {
        "local_p50_ms": ms(quantile(local, 0.5)),
        "relay_p50_ms": ms(quantile(relay, 0.5)),
        "relay_extra_p50_ms": ms(
            quantile(buckets(metrics, "arena_relay_added_latency_seconds"), 0.5)
        ),
        "relayed_share": (
            round(relay_n / (local_n + relay_n), 4) if local_n + relay_n > 0 else None
        ),
    }
    everything = quantile(buckets(metrics, latency, game=game), 0.5)
    progress(f"all moves' p50 in the {window.replicas}-replica run: {ms(everything)} ms")
    return measures


def terminated(signum: int, frame: object) -> None:
    """SIGTERM: unwind like Ctrl-C, so that every process started is stopped."""
    # Once: a second signal must not break off the stopping itself.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt


def main() -> int:
    """Run each replica count; print the JSON line."""
    signal.signal(signal.SIGTERM, terminated)
    # The whole docstring: it says what each field of the JSON line measures.
    parser = argparse.ArgumentParser(
        prog="python -m bench.scale",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--seconds", type=float, default=10.0, help="timed window per run (default 10)"
    )
    parser.add_argument(
        "--warmup", type=float, default=1.0, help="seconds of play before the window (default 1)"
    )
    parser.add_argument(
        "--matches", type=int, default=32, help="matches kept running at once (default 32)"
    )
    parser.add_argument(
        "--bots", type=int, default=24, help="random bots, over 2 bot processes (default 24)"
    )
    parser.add_argument(
        "--latency-seconds",
        type=float,
        default=5.0,
        help="window with one match at a time for the latency medians (default 5)",
    )
    parser.add_argument("--game", default="golden10", help="game (default golden10)")
    parser.add_argument("--players", type=int, default=3, help="seats per match (default 3)")
    parser.add_argument(
        "--replicas",
        default="1,2",
        help="comma-separated referee process counts, each run in turn (default 1,2)",
    )
    parser.add_argument(
        "--one-session",
        action="store_true",
        help="the loaded bots hold one session each, not one on every replica (as the Node "
        "example and older bots do): the tier relays their seats' moves in matches elsewhere",
    )
    parser.add_argument(
        "--workdir",
        type=Path,
        help="keep logs and databases here (a new directory) instead of a temporary one",
    )
    args = parser.parse_args()
    try:
        counts = [int(word) for word in args.replicas.split(",") if word.strip()]
    except ValueError:
        parser.error(f"--replicas takes comma-separated numbers, not {args.replicas!r}")
    if not counts or min(counts) < 1:
        parser.error("--replicas needs at least one count, each at least 1")
    if args.players > args.bots:
        parser.error("--bots must be at least --players")
    if args.matches * args.players > args.bots * BOT_CAPACITY:
        parser.error(f"--matches * --players exceeds the bots' seats (--bots * {BOT_CAPACITY})")
    if args.seconds <= 0 or args.warmup < 0:
        parser.error("--seconds must be positive and --warmup not negative")
    options = Options(
        args.seconds,
        args.warmup,
        args.matches,
        args.bots,
        args.game,
        args.players,
        args.latency_seconds,
    )
    cores = os.cpu_count() or 1
    windows: list[Window] = []
    light: Window | None = None
    with contextlib.ExitStack() as stack:
        if args.workdir is None:
            workdir = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        else:
            workdir = args.workdir
            workdir.mkdir(parents=True)
        try:
            with Started(progress) as started:
                relay, redis = start_redis(workdir, started)
                progress(f"redis-server at {relay}; work directory {workdir}")
                for replicas in counts:
                    window, latency_window = run(
                        replicas, relay, redis, options, workdir, args.one_session
                    )
                    windows.append(window)
                    progress(report(window, cores))
                    if latency_window is not None:
                        light = latency_window
                        progress("one match at a time: " + report(latency_window, cores))
                relay_us = event_loop.run(
                    relay_cost(f"{relay}/0", args.matches, RELAY_REQUESTS, DEADLINE_MS)
                )
                lone_relay_us = event_loop.run(
                    relay_cost(f"{relay}/0", 1, LONE_RELAY_REQUESTS, DEADLINE_MS)
                )
                progress(
                    f"the relay alone: {relay_us:.0f} µs of CPU per relayed move at "
                    f"{args.matches} in flight, {lone_relay_us:.0f} µs one at a time"
                )
        except (BenchError, grpc.RpcError) as error:
            what = describe(error)
            if isinstance(error, grpc.RpcError):
                what = f"a call to the referee failed: {what}"
            keep = " (--workdir DIR keeps the logs)" if args.workdir is None else ""
            progress(f"error: {what}{keep}")
            return 1
        except KeyboardInterrupt:
            progress("interrupted")
            return 1
    rates = [w.moves / w.elapsed_s for w in windows]
    tiers = [w for w in windows if w.replicas > 1]
    nothing = dict.fromkeys(("local_p50_ms", "relay_p50_ms", "relay_extra_p50_ms", "relayed_share"))
    loaded = relay_measures(tiers[-1], args.game) if tiers else nothing
    unloaded = relay_measures(light, args.game) if light is not None else nothing
    cpu = [w.referee_cpu_s * 1e6 / w.moves if w.moves > 0 else None for w in windows]
    share = loaded["relayed_share"]
    first, last = cpu[0], cpu[-1]
    relay_cpu_ratio = round((first + relay_us) / first, 3) if first else None
    tier_cpu_ratio = round(last / first, 3) if tiers and first and last else None
    extra_per_relayed = (
        round((last - first) / share, 1) if tiers and first and last and share else None
    )
    used = (windows[0].referee_cpu_s + windows[0].bots_cpu_s) / windows[0].elapsed_s
    print(
        json.dumps(
            {
                "replicas": counts,
                "moves_per_s": [round(rate, 1) for rate in rates],
                "speedup": round(rates[-1] / rates[0], 3) if rates[0] > 0 else None,
                "cpu_bound_speedup": round(cores / used, 3) if used > 0 else None,
                "local_p50_ms": unloaded["local_p50_ms"],
                "relay_p50_ms": unloaded["relay_p50_ms"],
                "relay_extra_p50_ms": unloaded["relay_extra_p50_ms"],
                "loaded_local_p50_ms": loaded["local_p50_ms"],
                "loaded_relay_p50_ms": loaded["relay_p50_ms"],
                "loaded_relay_extra_p50_ms": loaded["relay_extra_p50_ms"],
                "referee_cpu_us_per_move": [None if c is None else round(c, 1) for c in cpu],
                "relay_cpu_us_per_move": round(relay_us, 1),
                "relay_cpu_us_per_lone_move": round(lone_relay_us, 1),
                "relay_cpu_ratio": relay_cpu_ratio,
                "tier_cpu_ratio": tier_cpu_ratio,
                "tier_extra_cpu_us_per_relayed_move": extra_per_relayed,
                "bots_cpu_share": [round(w.bots_cpu_s / (w.elapsed_s * cores), 3) for w in windows],
                "relayed_share": share,
                "cores": cores,
                "seconds": args.seconds,
                "matches": args.matches,
                "bots": args.bots,
                "sessions": "one" if args.one_session else "every_replica",
            }
        ),
        flush=True,
    )
    return 0


def report(window: Window, cores: int) -> str:
    """A progress line for one run: what the JSON line leaves out, too."""
    elapsed = window.elapsed_s
    busy = window.machine_busy_s / window.machine_total_s if window.machine_total_s else 0.0
    ours = window.referee_cpu_s + window.bots_cpu_s + window.redis_cpu_s + window.client_cpu_s
    # What the machine was busy with besides this bench: on a shared machine it skews the
    # result, and a 2-core machine has nothing to spare.
    other = max(0.0, window.machine_busy_s - ours) / elapsed
    warning = (
        f"; WARNING: other processes took {other:.2f} cores, the result is disturbed"
        if other > 0.15
        else ""
    )
    return (
        f"{window.replicas} replica(s): {window.moves / elapsed:.0f} moves/s "
        f"(by process {[round(m / elapsed) for m in window.moves_by_process]}), "
        f"{window.finished} matches in {elapsed:.1f} s, "
        f"{window.mean_running:.1f} running on average; CPU in cores: "
        f"referee {window.referee_cpu_s / elapsed:.2f}, bots {window.bots_cpu_s / elapsed:.2f}, "
        f"redis {window.redis_cpu_s / elapsed:.2f}, this client {window.client_cpu_s / elapsed:.2f}, "
        f"anything else {other:.2f}; machine {busy:.0%} busy of {cores} cores{warning}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
