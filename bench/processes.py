"""The processes a bench starts besides the referee: bots, Redis, and how they are stopped.

`arena_cli.processes` starts the arena's own commands and stops them all at
once; this module adds what the benches need on top: bots registered and
played many to a `bench.multibot` process, waited for until each holds its
session; a private redis-server; and `Started`, which stops processes one
by one, last started first, and a referee supervisor's children with it
(`arena referee --processes N`), which a tier bench must be sure are gone.
Also the moves' latencies of finished matches, from their replays.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from arena_cli.processes import free_port, proc_stat
from bots.sdk import channel
from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import arena_pb2_grpc as pb_grpc

STOP_TIMEOUT_S = 30.0
"""The supervisor drains its children on SIGTERM (shutdown grace 10 s), so more than that."""

Say = Callable[[str], None]
"""Where a bench reports a process it had to kill (its progress lines)."""


class BenchError(RuntimeError):
    """Something the bench cannot measure past (its message says what)."""


# --- ports and logs --------------------------------------------------------------------


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


# --- stopping --------------------------------------------------------------------------


def stop(
    process: subprocess.Popen[bytes], name: str, say: Say, timeout_s: float = STOP_TIMEOUT_S
) -> None:
    """SIGTERM, wait up to `timeout_s`, then SIGKILL."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout_s)
    except subprocess.TimeoutExpired:
        say(f"{name} (pid {process.pid}) still running {timeout_s:g} s after SIGTERM: killed")
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


def stop_referee(process: subprocess.Popen[bytes], say: Say) -> None:
    """Stop the supervisor; should it have to be killed, end its referee children too."""
    pids = [pid for pid in children(process.pid) if is_referee_child(pid)]
    stop(process, "referee", say)
    if process.returncode not in (0, None):
        say(f"referee exited {process.returncode}")
    # Killed supervisors leave their children running: end those (by pid, if still ours).
    for pid in pids:
        if is_referee_child(pid):
            say(f"referee process {pid} outlived its supervisor: killed")
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


class Started:
    """Processes a bench started; leaving the `with` stops them, last started first.

    What had to be killed is reported to `say`.
    """

    def __init__(self, say: Say) -> None:
        self._say = say
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> Started:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def add(self, process: subprocess.Popen[bytes], name: str) -> subprocess.Popen[bytes]:
        """Stop `process` at the end."""
        self._stack.callback(stop, process, name, self._say)
        return process

    def add_referee(self, process: subprocess.Popen[bytes]) -> subprocess.Popen[bytes]:
        """Stop the referee supervisor at the end, and any child it left behind."""
        self._stack.callback(stop_referee, process, self._say)
        return process


# --- starting --------------------------------------------------------------------------


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


async def register_bots(
    address: str, names: list[str], games: list[str]
) -> tuple[list[str], list[str]]:
    """Register a bot of each name playing `games` (registration is open on loopback);
    their ids and tokens."""
    ids, tokens = [], []
    async with channel(address) as chan:
        stub = pb_grpc.BotServiceStub(chan)
        for name in names:
            reply = await stub.Register(
                pb.RegisterRequest(name=name, version="1", games=games), timeout=10
            )
            ids.append(reply.bot_id)
            tokens.append(reply.token)
    return ids, tokens


def start_multibot(
    address: str,
    tokens: list[str],
    workdir: Path,
    number: int,
    capacity: int | None = None,
    one_session: bool = False,
) -> subprocess.Popen[bytes]:
    """The `number`-th `bench.multibot` process, playing the bots of `tokens`.

    Its tokens go to tokens-NUMBER.json and its output to bots-NUMBER.log in
    `workdir`; `capacity` is each bot's matches at once (multibot's default if None);
    `one_session` bots hold one session each, not one per replica of a tier.
    """
    tokens_file = workdir / f"tokens-{number}.json"
    tokens_file.write_text(json.dumps(tokens), encoding="utf-8")
    command = [
        sys.executable,
        "-m",
        "bench.multibot",
        "--referee",
        address,
        "--tokens",
        str(tokens_file),
    ]
    if capacity is not None:
        command += ["--capacity", str(capacity)]
    if one_session:
        command.append("--one-session")
    out = (workdir / f"bots-{number}.log").open("wb")
    return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)


async def wait_connected(
    address: str, bot_ids: list[str], bots: list[subprocess.Popen[bytes]], timeout_s: float
) -> dict[str, str]:
    """Wait until every bot holds a session, while the `bots` processes that play them run;
    the replica that holds each bot's session, by bot id."""
    wanted = set(bot_ids)
    async with channel(address) as chan:
        stub = pb_grpc.RefereeServiceStub(chan)
        end = time.monotonic() + timeout_s
        while True:
            for process in bots:
                if process.poll() is not None:
                    raise BenchError(f"a bot process exited {process.returncode}")
            reply = await stub.ListSessions(pb.ListSessionsRequest(), timeout=10)
            held = {s.bot_id: s.replica for s in reply.sessions if s.bot_id in wanted}
            if len(held) == len(wanted):
                return held
            if time.monotonic() > end:
                raise BenchError(
                    f"{len(held)} of {len(wanted)} bots connected after {timeout_s:g} s"
                )
            await asyncio.sleep(0.2)


async def move_latencies(
    stub: pb_grpc.RefereeServiceAsyncStub, match_ids: list[str]
) -> list[float]:
    """Every timed move's latency (ms) in the replays of `match_ids`, sorted.

    A bench reads them after its measured window: building a replay is not a move's
    work, and would stall the moves measured.
    """
    latencies: list[float] = []
    for match_id in match_ids:
        replay = await stub.GetReplay(pb.GetMatchRequest(match_id=match_id), timeout=60)
        for game in replay.games:
            for event in json.loads(game.events_json):
                if event["type"] == "action" and event.get("ms") is not None:
                    latencies.append(float(event["ms"]))
    return sorted(latencies)


def quantile(ordered: list[float], q: float) -> float:
    """The `q` quantile of the sorted `ordered` (the value at that share of it; 0 if empty)."""
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else 0.0


def across_replicas(held: dict[str, str]) -> list[str]:
    """The bots of `held` (bot id -> replica) taken from each replica in turn: any few
    consecutive ones sit on as many replicas as they can, so a match of them has seats
    that the relay reaches."""
    by_replica: dict[str, list[str]] = {}
    for bot, replica in sorted(held.items()):
        by_replica.setdefault(replica, []).append(bot)
    columns = [by_replica[replica] for replica in sorted(by_replica)]
    return [bot for row in itertools.zip_longest(*columns) for bot in row if bot is not None]
