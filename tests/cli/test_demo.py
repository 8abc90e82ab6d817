"""`arena demo`: the whole arena on one command, and nothing left behind."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from tests.support.dashboard import dashboard_metric_names, exported_metric_names

ARENA = [sys.executable, "-m", "arena_cli.main"]


def processes_using(folder: Path) -> list[int]:
    """Pids of live processes whose environment points into `folder`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().split()[2]
        except OSError:
            continue
        if str(folder).encode() in environ and state != "Z":
            found.append(int(entry.name))
    return found


def check_dashboard_metrics_are_exported(demo_output: str) -> None:
    """Every metric the Grafana dashboard queries is on some live /metrics page."""
    referee = re.search(r"referee .*\(metrics :(\d+)\)", demo_output)
    worker = re.search(r"worker .*\(metrics :(\d+)\)", demo_output)
    web = re.search(r"web +(http://\S+/)", demo_output)
    assert referee and worker and web, demo_output
    pages = [
        f"http://127.0.0.1:{referee.group(1)}/metrics",
        f"http://127.0.0.1:{worker.group(1)}/metrics",
        f"{web.group(1)}metrics",
    ]
    exported: set[str] = set()
    for url in pages:
        with urllib.request.urlopen(url, timeout=10) as page:
            exported |= exported_metric_names(page.read().decode())
    missing = dashboard_metric_names() - exported
    assert not missing, f"the dashboard queries metrics no process exports: {sorted(missing)}"


def clean_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env["ARENA_TEST_MARK"] = str(tmp_path)
    return env


def test_demo_prints_the_tables_and_urls_and_leaves_nothing_running(tmp_path: Path) -> None:
    data = tmp_path / "demo"
    done = subprocess.run(
        [*ARENA, "demo", "--matches", "1", "--data", str(data), "--timeout-s", "400"],
        capture_output=True,
        text=True,
        timeout=600,
        env=clean_env(tmp_path),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    for ladder in ("goodge-4p", "golden10-5p", "goof-4p"):
        assert re.search(rf"tournament \S+ \(demo {ladder}\), {ladder}: finished", out), out
    assert out.count("95% interval") == 3
    assert "Ladder standings" in out
    # Its pages stop with it: at the end, no address that is dead by the time it is read.
    assert "Standings page:" not in out and "A replay:" not in out
    assert "`arena demo --serve` keeps them up" in " ".join(out.split())  # rich wraps lines
    assert (data / "arena.db").exists()
    assert processes_using(tmp_path) == []


def test_demo_serve_serves_pages_until_interrupted(tmp_path: Path) -> None:
    data = tmp_path / "demo"
    demo = subprocess.Popen(
        [*ARENA, "demo", "--serve", "--matches", "1", "--data", str(data), "--timeout-s", "400"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=clean_env(tmp_path),
        cwd=tmp_path,
        start_new_session=True,  # a process group of its own, as a terminal gives it
    )
    try:
        lines = []
        deadline = time.monotonic() + 500
        assert demo.stdout is not None
        while time.monotonic() < deadline:
            line = demo.stdout.readline()
            if not line:
                break
            lines.append(line)
            if line.startswith("Serving"):
                break
        text = "".join(lines)
        assert "Serving" in text, text
        standings = re.search(r"Standings page: (\S+)", text)
        replay = re.search(r"A replay: +(\S+)", text)
        assert standings and replay, text
        with urllib.request.urlopen(standings.group(1), timeout=10) as page:
            assert page.status == 200 and "goodge-4p" in page.read().decode()
        with urllib.request.urlopen(replay.group(1), timeout=10) as page:
            assert page.status == 200
        # Play: the nav links it, and the demo's six bots are offered to a person.
        play = re.search(r"Play the bots: +(\S+)", text)
        assert play, text
        with urllib.request.urlopen(play.group(1), timeout=10) as page:
            assert page.status == 200 and 'id="nav-play"' in page.read().decode()
        api = play.group(1).replace("/play", "/api/play")
        with urllib.request.urlopen(api, timeout=10) as page:
            assert len(json.load(page)["opponents"]) == 6
        check_dashboard_metrics_are_exported(text)
        # Ctrl-C on a terminal reaches the whole group: the demo and every process it started.
        os.killpg(demo.pid, signal.SIGINT)
        rest, _ = demo.communicate(timeout=60)
        assert demo.returncode in (0, 130)
        assert "stopped on its own" not in rest, rest
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()
    deadline = time.monotonic() + 20
    while processes_using(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert processes_using(tmp_path) == []
