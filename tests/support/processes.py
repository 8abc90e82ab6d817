"""Processes for the tests: start, stop and wait for them, on free loopback ports.

A `Processes` group starts each process from the repository root, with the
tests' environment (`clean_env`: no ARENA_* settings, unbuffered) and its
output in a log file, and `close` stops each one by its pid. Every wait is
bounded (`wait_until`, `wait_exit`).
"""

from __future__ import annotations

import os
import pty
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
ARENA = [PYTHON, "-m", "arena_cli.main"]
"""The `arena` command of this checkout."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(check: Callable[[], Any], timeout_s: float, what: str, every_s: float = 0.05) -> Any:
    """Poll `check` until it returns something truthy; fail after `timeout_s`."""
    end = time.monotonic() + timeout_s
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout_s:g} s waiting for {what}")
        time.sleep(every_s)


def clean_env() -> dict[str, str]:
    """This environment without ARENA_* settings, unbuffered."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env["PYTHONUNBUFFERED"] = "1"
    return env


def arena(
    *args: str, cwd: Path = REPO, env: dict[str, str] | None = None, timeout_s: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run `arena ARGS...` to its end (no ARENA_* settings but those of `env`)."""
    return subprocess.run(
        [*ARENA, *args],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        env={**clean_env(), **(env or {})},
        cwd=cwd,
    )


class Processes:
    """The processes a fixture started; `close` stops each one by its pid."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.started: list[tuple[subprocess.Popen[bytes], Path]] = []

    def start(self, name: str, argv: Sequence[str]) -> subprocess.Popen[bytes]:
        log = self.logs / f"{name}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                list(argv), cwd=REPO, env=clean_env(), stdout=out, stderr=subprocess.STDOUT
            )
        self.started.append((proc, log))
        return proc

    @staticmethod
    def stop(proc: subprocess.Popen[bytes], timeout_s: float = 10.0) -> None:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)

    def close(self) -> None:
        for proc, _ in reversed(self.started):
            self.stop(proc)
        self.started.clear()


def wait_exit(proc: subprocess.Popen[bytes], timeout_s: float = 30) -> int:
    """Wait for a process to end; its exit status."""
    end = time.monotonic() + timeout_s
    while proc.poll() is None:
        if time.monotonic() > end:
            raise AssertionError(f"pid {proc.pid} still running after {timeout_s:g} s")
        time.sleep(0.05)
    return int(proc.returncode)


def pause(proc: subprocess.Popen[bytes], seconds: float) -> None:
    """Stop `proc` for `seconds` (SIGSTOP, then SIGCONT): a host that starves it of CPU."""
    os.kill(proc.pid, signal.SIGSTOP)
    try:
        time.sleep(seconds)  # the fault's length, not a wait for a condition
    finally:
        os.kill(proc.pid, signal.SIGCONT)


def on_a_terminal(*args: str) -> tuple[subprocess.Popen[bytes], int]:
    """`arena ARGS...` with stderr on a pseudo-terminal (as a user runs it); its fd to read."""
    reader, writer = pty.openpty()
    process = subprocess.Popen(
        [*ARENA, *args],
        cwd=REPO,
        env=clean_env(),
        stdout=subprocess.PIPE,
        stderr=writer,
        stdin=subprocess.DEVNULL,
    )
    os.close(writer)
    return process, reader


def read_until(fd: int, wanted: bytes, timeout_s: float) -> bytes:
    """What the terminal showed until `wanted` appeared (or the time ran out)."""
    seen = b""
    deadline = time.monotonic() + timeout_s
    while wanted not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                seen += os.read(fd, 4096)
            except OSError:  # the process closed the terminal
                break
    return seen
