"""Metrics listeners: loopback unless told otherwise, and a taken port is a one-line error."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.test_referee_start import WATCHING_BINDS, free_port
from tests.support.processes import arena, clean_env


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A loopback port another process (this one) listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


@pytest.mark.parametrize("role", ["referee", "worker"])
def test_a_taken_metrics_port_stops_the_process_with_one_line(
    tmp_path: Path, taken_port: int, role: str
) -> None:
    args = ["--metrics-port", str(taken_port), "--db", f"sqlite:///{tmp_path / 'arena.db'}"]
    if role == "referee":
        args += ["--listen", f"127.0.0.1:{free_port()}"]
    done = arena(role, *args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"arena {role}: error: cannot serve metrics on 127.0.0.1:{taken_port}")


def test_the_referees_metrics_listen_on_loopback_unless_a_host_is_given(tmp_path: Path) -> None:
    for host in (None, "0.0.0.0"):
        metrics_port = free_port()
        command = [sys.executable, "-c", WATCHING_BINDS, "referee"]
        command += ["--listen", f"127.0.0.1:{free_port()}", "--metrics-port", str(metrics_port)]
        command += ["--db", f"sqlite:///{tmp_path / 'arena.db'}"]
        command += ["--metrics-host", host] if host else []
        referee = subprocess.Popen(
            command, stderr=subprocess.PIPE, text=True, env=clean_env(), cwd=tmp_path
        )
        try:
            assert referee.stderr is not None
            binds = []
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not any(str(metrics_port) in b for b in binds):
                line = referee.stderr.readline()
                if not line:
                    break
                binds += [line] if line.startswith("bind") else []
        finally:
            referee.terminate()
            referee.communicate(timeout=60)
        wanted = f"bind ('{host or '127.0.0.1'}', {metrics_port})"
        assert any(b.strip() == wanted for b in binds), binds
