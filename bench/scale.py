"""Referee tier scaling: one referee process against several sharing a Redis relay.

Prints one JSON line:
{"replicas", "moves_per_s", "speedup", "cpu_bound_speedup", "local_p50_ms",
 "relay_p50_ms", "relay_extra_p50_ms", "loaded_local_p50_ms",
 "loaded_relay_p50_ms", "loaded_relay_extra_p50_ms", "referee_cpu_us_per_move",
 "relay_cpu_us_per_move", "relay_cpu_ratio", "tier_cpu_ratio", "bots_cpu_share",
 "relayed_share", "cores", "seconds", "matches", "bots"}

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
  replicas' sides together: two tiers in this process on the bench's Redis,
  `--matches` requests in flight at once, a bot that answers at once; and
  relay_cpu_ratio = (a local move's referee CPU in the first run + that) /
  the local move's: what a relayed move costs against a local one;
- tier_cpu_ratio: the last run's referee CPU per move over the first's.
  Above relay_cpu_ratio's share it is the processes' contention for the
  machine's cores (two referees and the bots on 2 cores), not the relay.

The bench runs its own redis-server on a free loopback port (no shared
Redis is touched) and stops every process it started, also on errors.
Progress goes to stderr.

    python -m bench.scale [--seconds 10] [--matches 32] [--bots 24] [--game golden10]
        [--players 3] [--replicas 1,2] [--latency-seconds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import math
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

import grpc
from prometheus_client.parser import text_string_to_metric_families

from arena_cli.processes import (
    CLOCK_TICKS,
    cpu_seconds,
    free_port,
    proc_stat,
    spawn,
    wait_serving,
)
from bots.sdk import channel
from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import arena_pb2_grpc as pb_grpc
from referee.channels import ActRequest, Answer
from referee.metrics import RefereeMetrics
from referee.sessions import SessionHub
from referee.tier.replica import Tier

BOT_PROCESSES = 2
"""Bot processes: more than one, so that the bots do not all share one core with one loop."""
BOT_CAPACITY = 4
"""Matches at once per bot: each bot sits in up to `players` of the slots' matches."""
DEADLINE_MS = 1000
READY_TIMEOUT_S = 60.0
MATCH_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0
"""The supervisor drains its children on SIGTERM (shutdown grace 10 s), so more than that."""
RELAY_REQUESTS = 6400
"""Relayed requests that measure the relay's own cost."""
SAMPLE_S = 0.25
"""How often the window samples arena_matches_running (how busy the slots kept the referee)."""

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]
"""Prometheus samples summed over processes, by name and sorted labels."""


class BenchError(RuntimeError):
    """Something the bench cannot measure past (its message says what)."""


def describe(error: BaseException) -> str:
    """An error in one line; a gRPC error as its status code and details."""
    if isinstance(error, grpc.aio.AioRpcError):
        return f"{error.code().name}: {error.details()}"
    return str(error)


def progress(message: str) -> None:
    """A progress line on stderr (stdout holds only the JSON line)."""
    print(f"bench.scale: {message}", file=sys.stderr, flush=True)


# --- processes -------------------------------------------------------------------------


def port_is_free(port: int) -> bool:
    """Whether nothing listens on `port` on loopback now."""
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def free_port_range(count: int) -> int:
    """A port such that it and the `count - 1` above it are free (process i exports on base+i)."""
    for _ in range(100):
        base = free_port()
        if base + count <= 65536 and all(port_is_free(base + i) for i in range(1, count)):
            return base
    raise BenchError(f"found no {count} free consecutive loopback ports in 100 tries")


def tail(log: Path, lines: int = 20) -> str:
    """The last lines of a log, for an error message."""
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return f"(no log at {log})"
    return "\n".join(text.splitlines()[-lines:])


def stop(process: subprocess.Popen[bytes], name: str, timeout_s: float = STOP_TIMEOUT_S) -> None:
    """SIGTERM, wait up to `timeout_s`, then SIGKILL."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout_s)
    except subprocess.TimeoutExpired:
        progress(f"{name} (pid {process.pid}) still running {timeout_s:g} s after SIGTERM: killed")
        process.kill()
        process.wait()


def children(pid: int) -> list[int]:
    """The child processes of `pid`: from /proc/PID/task/*/children, else by scanning /proc."""
    found: set[int] = set()
    listed = False
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        with contextlib.suppress(OSError):
            found.update(int(word) for word in task.read_text(encoding="ascii").split())
            listed = True
    if listed:
        return sorted(found)
    # Kernels without CONFIG_PROC_CHILDREN have no such file: match the parent field.
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                if int(proc_stat(int(entry.name))[1]) == pid:
                    found.add(int(entry.name))
    return sorted(found)


def cmdline(pid: int) -> str:
    """A process's command line, '' once it is gone."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode(errors="replace")


def is_referee_child(pid: int) -> bool:
    """A referee process the supervisor started (multiprocessing spawn), not its resource tracker."""
    line = cmdline(pid)
    return "spawn_main" in line and "resource_tracker" not in line


def referee_pids(supervisor: int, replicas: int) -> list[int]:
    """The processes that play matches: the supervisor's referee children, or itself alone."""
    if replicas == 1:
        # `--processes 1` serves in the process itself, with no supervisor.
        return [supervisor]
    return [pid for pid in children(supervisor) if is_referee_child(pid)]


def machine_busy_seconds() -> tuple[float, float]:
    """CPU seconds the machine was busy and in all, over every core (first line of /proc/stat)."""
    fields = [int(word) for word in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    every = sum(fields[:8])  # guest time is already inside user and nice
    idle = fields[3] + fields[4]  # idle and iowait
    return (every - idle) / CLOCK_TICKS, every / CLOCK_TICKS


class Started:
    """Processes this bench started; leaving the `with` stops them, last started first."""

    def __init__(self) -> None:
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> Started:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def add(self, process: subprocess.Popen[bytes], name: str) -> subprocess.Popen[bytes]:
        """Stop `process` at the end."""
        self._stack.callback(stop, process, name)
        return process

    def add_referee(self, process: subprocess.Popen[bytes]) -> subprocess.Popen[bytes]:
        """Stop the referee supervisor at the end, and any child it left behind."""
        self._stack.callback(stop_referee, process)
        return process


def stop_referee(process: subprocess.Popen[bytes]) -> None:
    """Stop the supervisor; should it have to be killed, end its referee children too."""
    pids = [pid for pid in children(process.pid) if is_referee_child(pid)]
    stop(process, "referee")
    if process.returncode not in (0, None):
        progress(f"referee exited {process.returncode}")
    # Killed supervisors leave their children running: end those (by pid, if still ours).
    for pid in pids:
        if is_referee_child(pid):
            progress(f"referee process {pid} outlived its supervisor: killed")
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def start_redis(workdir: Path, started: Started) -> tuple[str, int]:
    """A private redis-server on a free loopback port, persisting nothing; its URL and pid."""
    port = free_port()
    log = workdir / "redis.log"
    try:
        process = subprocess.Popen(
            [
                "redis-server",
                "--save",
                "",
                "--appendonly",
                "no",
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(workdir),
            ],
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
            cwd=workdir,
        )
    except FileNotFoundError:
        raise BenchError("redis-server is not installed (the bench runs its own)") from None
    started.add(process, "redis-server")
    end = time.monotonic() + 10
    while time.monotonic() < end:
        if process.poll() is not None:
            raise BenchError(f"redis-server exited {process.returncode}:\n{tail(log)}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1) as sock:
            sock.sendall(b"PING\r\n")
            if sock.recv(16).startswith(b"+PONG"):
                return f"redis://127.0.0.1:{port}", process.pid
        time.sleep(0.1)
    raise BenchError(f"redis-server on port {port} did not answer PING in 10 s:\n{tail(log)}")


def start_bots(
    address: str, tokens: list[str], workdir: Path, started: Started
) -> list[subprocess.Popen[bytes]]:
    """The bots, dealt round-robin over `BOT_PROCESSES` `bench.multibot` processes."""
    bots = []
    for number in range(BOT_PROCESSES):
        share = tokens[number::BOT_PROCESSES]
        if not share:
            continue
        tokens_file = workdir / f"tokens-{number}.json"
        tokens_file.write_text(json.dumps(share), encoding="utf-8")
        out = (workdir / f"bots-{number}.log").open("wb")
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bench.multibot",
                "--referee",
                address,
                "--tokens",
                str(tokens_file),
                "--capacity",
                str(BOT_CAPACITY),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        bots.append(started.add(process, f"bots-{number}"))
    return bots


# --- metrics ---------------------------------------------------------------------------


def scrape(port: int) -> Samples:
    """One process's metrics, by sample name and labels."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
        text = reply.read().decode("utf-8")
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            key = (sample.name, tuple(sorted(sample.labels.items())))
            samples[key] = samples.get(key, 0.0) + sample.value
    return samples


def scrape_all(ports: list[int]) -> Samples:
    """Every process's metrics, summed."""
    summed: Samples = {}
    for port in ports:
        for key, value in scrape(port).items():
            summed[key] = summed.get(key, 0.0) + value
    return summed


def delta(end: Samples, start: Samples) -> Samples:
    """What the counters and histograms gained between two scrapes (negatives kept)."""
    return {key: end.get(key, 0.0) - start.get(key, 0.0) for key in set(end) | set(start)}


def total(samples: Samples, name: str, **labels: str) -> float:
    """The sum of the samples named `name` whose labels include `labels`."""
    return sum(
        value
        for (sample, have), value in samples.items()
        if sample == name and labels.items() <= dict(have).items()
    )


def buckets(samples: Samples, histogram: str, **labels: str) -> list[tuple[float, float]]:
    """A histogram's cumulative buckets (upper bound, count), summed over other labels."""
    counts: dict[float, float] = {}
    for (sample, have), value in samples.items():
        named = dict(have)
        if sample == f"{histogram}_bucket" and labels.items() <= named.items():
            bound = float(named["le"])
            counts[bound] = counts.get(bound, 0.0) + value
    return sorted(counts.items())


def quantile(cumulative: list[tuple[float, float]], q: float) -> float | None:
    """The q-quantile, interpolated linearly within its bucket (as Prometheus does); None if empty.

    In the +Inf bucket it is the highest finite bound: all the histogram knows.
    """
    if not cumulative or cumulative[-1][1] <= 0:
        return None
    rank = q * cumulative[-1][1]
    lower, below = 0.0, 0.0
    for upper, count in cumulative:
        if count >= rank:
            if math.isinf(upper):
                return lower
            inside = count - below
            return lower + (upper - lower) * ((rank - below) / inside if inside > 0 else 1.0)
        lower, below = upper, count
    return lower


def ms(seconds: float | None) -> float | None:
    """Seconds to milliseconds, rounded; None stays None."""
    return None if seconds is None else round(seconds * 1000, 3)


# --- one run ---------------------------------------------------------------------------


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


@dataclass(frozen=True)
class Mark:
    """The counters at one end of the window."""

    at: float
    metrics: list[Samples]
    """Per referee process, in port order."""
    referee_cpu_s: float
    bots_cpu_s: float
    redis_cpu_s: float
    client_cpu_s: float
    machine: tuple[float, float]
    """Busy and all CPU seconds of the machine."""

    @classmethod
    def take(cls, ports: list[int], referee: list[int], bots: list[int], redis: int) -> Mark:
        """Scrape every process's metrics, then read the CPU counters."""
        # Metrics first, CPU right after: a few ms apart, against a window of seconds.
        return cls(
            at=time.monotonic(),
            metrics=[scrape(port) for port in ports],
            referee_cpu_s=sum(cpu_seconds(pid) for pid in referee),
            bots_cpu_s=sum(cpu_seconds(pid) for pid in bots),
            redis_cpu_s=cpu_seconds(redis),
            client_cpu_s=cpu_seconds(os.getpid()),
            machine=machine_busy_seconds(),
        )


@dataclass
class Window:
    """What one timed window measured."""

    replicas: int
    elapsed_s: float
    moves: float
    moves_by_process: list[float]
    referee_cpu_s: float
    bots_cpu_s: float
    redis_cpu_s: float
    client_cpu_s: float
    machine_busy_s: float
    machine_total_s: float
    mean_running: float
    finished: int
    metrics: Samples
    """All processes' gains over the window, summed."""

    @classmethod
    def between(
        cls, replicas: int, game: str, start: Mark, end: Mark, finished: int, running: float
    ) -> Window:
        """The gains from `start` to `end`."""
        gains = [
            delta(after, before) for after, before in zip(end.metrics, start.metrics, strict=True)
        ]
        summed: Samples = {}
        for gained in gains:
            for key, value in gained.items():
                summed[key] = summed.get(key, 0.0) + value
        return cls(
            replicas=replicas,
            elapsed_s=end.at - start.at,
            moves=total(summed, "arena_moves_total", game=game),
            moves_by_process=[total(gained, "arena_moves_total", game=game) for gained in gains],
            referee_cpu_s=end.referee_cpu_s - start.referee_cpu_s,
            bots_cpu_s=end.bots_cpu_s - start.bots_cpu_s,
            redis_cpu_s=end.redis_cpu_s - start.redis_cpu_s,
            client_cpu_s=end.client_cpu_s - start.client_cpu_s,
            machine_busy_s=end.machine[0] - start.machine[0],
            machine_total_s=end.machine[1] - start.machine[1],
            mean_running=running,
            finished=finished,
            metrics=summed,
        )


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


async def register_bots(address: str, count: int, game: str) -> tuple[list[str], list[str]]:
    """Register `count` bots (registration is open on loopback); their ids and tokens."""
    ids, tokens = [], []
    async with channel(address) as chan:
        stub = pb_grpc.BotServiceStub(chan)
        for number in range(count):
            reply = await stub.Register(
                pb.RegisterRequest(
                    name=f"scale-{number}-{uuid.uuid4().hex[:6]}", version="1", games=[game]
                ),
                timeout=10,
            )
            ids.append(reply.bot_id)
            tokens.append(reply.token)
    return ids, tokens


async def wait_connected(
    address: str, bot_ids: list[str], bots: list[subprocess.Popen[bytes]]
) -> Counter[str]:
    """Wait until every bot holds a session; how many each replica holds."""
    wanted = set(bot_ids)
    async with channel(address) as chan:
        stub = pb_grpc.RefereeServiceStub(chan)
        end = time.monotonic() + READY_TIMEOUT_S
        while True:
            for process in bots:
                if process.poll() is not None:
                    raise BenchError(f"a bot process exited {process.returncode}")
            reply = await stub.ListSessions(pb.ListSessionsRequest(), timeout=10)
            held = {s.bot_id: s.replica for s in reply.sessions if s.bot_id in wanted}
            if len(held) == len(wanted):
                return Counter(held.values())
            if time.monotonic() > end:
                raise BenchError(
                    f"{len(held)} of {len(wanted)} bots connected after {READY_TIMEOUT_S:g} s"
                )
            await asyncio.sleep(0.2)


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


def run(
    replicas: int, relay: str, redis: int, options: Options, workdir: Path
) -> tuple[Window, Window | None]:
    """One referee tier of `replicas` processes under the load; its window's measures,
    and with several replicas those of a window with one match at a time.

    `relay` is the Redis URL (without a database number), `redis` its server's pid.
    """
    rundir = workdir / f"replicas-{replicas}"
    rundir.mkdir()
    address = f"127.0.0.1:{free_port()}"
    base = free_port_range(replicas)
    ports = [base + index for index in range(replicas)]
    log = rundir / "referee.log"
    with Started() as started:
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
        bot_ids, tokens = asyncio.run(register_bots(address, options.bots, options.game))
        bots = start_bots(address, tokens, rundir, started)
        spread = asyncio.run(wait_connected(address, bot_ids, bots))
        progress(f"{options.bots} bots connected, per replica: {dict(sorted(spread.items()))}")

        marks: dict[str, Mark] = {}
        bot_pids = [process.pid for process in bots]

        def mark(name: str) -> None:
            marks[name] = Mark.take(ports, pids, bot_pids, redis)

        def running() -> float:
            return total(scrape_all(ports), "arena_matches_running")

        light = replace(options, matches=1, seconds=options.latency_seconds)
        phases = [("", options)] + ([("light ", light)] if replicas > 1 else [])
        windows: list[Window] = []
        for prefix, phase in phases:
            try:
                finished, mean_running = asyncio.run(
                    play(
                        address,
                        bot_ids,
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


RELAY_PROBE = ActRequest(
    "probe",
    "relay-cost",
    0,
    "golden10",
    0,
    3,
    {"hand": ["5h", "6c", "Td", "Js", "2d", "3c", "4s", "Kh"], "discard": ["Ah"], "round": 2},
    ("5h", "6c", "Td"),
    DEADLINE_MS,
    0,
)
"""A relayed request of a Golden 10 move's size."""


async def relay_cost(url: str, in_flight: int, requests: int) -> float:
    """The relay's CPU per relayed move (µs), both sides, `in_flight` requests at once.

    Replicas "a" and "b" are tiers in this process; the bot is a session of b's
    that answers each request at once, so all the CPU measured is the relay's
    (and this loop's).
    """
    a = Tier(url, "relay-cost-a", SessionHub(), 5.0, RefereeMetrics.create())
    b = Tier(url, "relay-cost-b", SessionHub(), 5.0, RefereeMetrics.create())
    await a.start()
    await b.start()
    bot = b.hub.open("relay-cost-bot", in_flight)
    await b.beat()

    async def answer() -> None:
        while True:
            message = await bot.outbox.get()
            if isinstance(message, ActRequest):
                bot.answer(Answer(message.request_id, index=0))

    answering = asyncio.create_task(answer())
    channel = a.seats.channel(bot.bot_id)
    counter = itertools.count()

    async def asker(count: int) -> None:
        for _ in range(count):
            request = replace(RELAY_PROBE, request_id=f"probe-{next(counter)}")
            await channel.act(request, 10.0)

    try:
        await asker(200)  # warm-up: connections, scripts, caches
        started = time.process_time()
        await asyncio.gather(*(asker(requests // in_flight) for _ in range(in_flight)))
        used = time.process_time() - started
    finally:
        answering.cancel()
        b.hub.close_all()
        await a.close()
        await b.close()
    return used * 1e6 / (requests // in_flight * in_flight)


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
            with Started() as started:
                relay, redis = start_redis(workdir, started)
                progress(f"redis-server at {relay}; work directory {workdir}")
                for replicas in counts:
                    window, latency_window = run(replicas, relay, redis, options, workdir)
                    windows.append(window)
                    progress(report(window, cores))
                    if latency_window is not None:
                        light = latency_window
                        progress("one match at a time: " + report(latency_window, cores))
                relay_us = asyncio.run(relay_cost(f"{relay}/0", args.matches, RELAY_REQUESTS))
                progress(f"the relay alone: {relay_us:.0f} µs of CPU per relayed move")
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
                "relay_cpu_ratio": relay_cpu_ratio,
                "tier_cpu_ratio": tier_cpu_ratio,
                "bots_cpu_share": [round(w.bots_cpu_s / (w.elapsed_s * cores), 3) for w in windows],
                "relayed_share": share,
                "cores": cores,
                "seconds": args.seconds,
                "matches": args.matches,
                "bots": args.bots,
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
