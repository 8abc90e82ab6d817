"""Start and stop the arena's processes for benchmarks and tests of whole systems."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

ARENA = [sys.executable, "-m", "arena_cli.main"]


def free_port() -> int:
    """A TCP port on loopback that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_serving(address: str, timeout_s: float = 30.0) -> None:
    """Wait until the gRPC health service at `address` says SERVING."""
    deadline = time.monotonic() + timeout_s
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline:
            with contextlib.suppress(grpc.RpcError):
                reply = stub.Check(health_pb2.HealthCheckRequest(), timeout=1)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            time.sleep(0.1)
    raise TimeoutError(f"no SERVING referee at {address} after {timeout_s} s")


@contextlib.contextmanager
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    """A list to start processes into; all are stopped (TERM, then KILL) on exit."""
    started: list[subprocess.Popen[bytes]] = []
    try:
        yield started
    finally:
        for process in started:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 10
        for process in started:
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def spawn(
    args: Sequence[str], log: Path, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """Start `arena ARGS...` with output to `log`."""
    out = log.open("wb")
    return subprocess.Popen(
        [*ARENA, *args], stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}
    )


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def proc_stat(pid: int) -> list[str]:
    """/proc/PID/stat from field 3 (state) on; the name in parentheses may hold spaces."""
    text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    return text[text.rindex(")") + 2 :].split()


def cpu_seconds(pid: int) -> float:
    """A process's user+system CPU so far (fields 14 and 15 of /proc/PID/stat)."""
    fields = proc_stat(pid)
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
