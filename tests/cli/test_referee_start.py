"""`arena referee` refuses bad settings before it opens any port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

# The referee's main with every Python-level bind() printed on stderr, so that
# even a port held for a moment is seen (the metrics server binds in Python;
# gRPC binds in C, which the connection attempts below watch for).
WATCHING_BINDS = """\
import sys
sys.addaudithook(
    lambda event, args: print("bind", args[1], file=sys.stderr) if event == "socket.bind" else None
)
from arena_cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("0.0.0.0", 0))
        port: int = sock.getsockname()[1]
        return port


def accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.05):
            return True
    except OSError:
        return False


def bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("0.0.0.0", port))
        except OSError:
            return False
        return True


def test_no_admin_token_beyond_loopback_exits_2_having_opened_no_port(tmp_path: Path) -> None:
    grpc_port, metrics_port = free_port(), free_port()
    env = {name: value for name, value in os.environ.items() if not name.startswith("ARENA_")}
    command = [sys.executable, "-c", WATCHING_BINDS, "referee"]
    command += ["--listen", f"0.0.0.0:{grpc_port}", "--metrics-port", str(metrics_port)]
    command += ["--db", f"sqlite:///{tmp_path / 'arena.db'}"]
    referee = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path
    )
    listened = []
    try:
        deadline = time.monotonic() + 60
        while referee.poll() is None and time.monotonic() < deadline:
            listened += [port for port in (metrics_port, grpc_port) if accepts(port)]
            time.sleep(0.002)  # leaves the referee the CPU while it starts
        assert referee.poll() is not None, "the referee is still running after 60 s"
    finally:
        if referee.poll() is None:
            referee.kill()
        out, err = referee.communicate()
    assert referee.returncode == 2, out + err
    assert err.splitlines() == [
        f"arena referee: error: listening on 0.0.0.0:{grpc_port} (not loopback) needs an "
        "admin token: set ARENA_ADMIN_TOKEN or --admin-token"
    ]
    assert listened == []
    assert bindable(metrics_port) and bindable(grpc_port)
    assert not (tmp_path / "arena.db").exists(), "the store was opened"
