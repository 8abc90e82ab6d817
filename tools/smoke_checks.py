"""The checks of `make smoke`, run by the plain install's Python (see tools/smoke_install.sh).

Every module of the project imports, `arena --help` answers, `arena play` prints its JSON summary, and a referee
serves (gRPC health SERVING, /metrics answers) and stops with exit status 0 on
SIGTERM. Each wait is for a condition with a generous deadline, so a loaded
machine only makes it slower.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import signal
import subprocess
import sys
import urllib.request
from importlib.metadata import packages_distributions
from pathlib import Path
from typing import NoReturn

from arena_cli.processes import free_port, wait_serving

DISTRIBUTION = "card-arena"
ARENA = str(Path(sys.executable).parent / "arena")
DEADLINE_S = 60.0
# No ARENA_* setting of the caller's may change what the commands do.
ENV = {name: value for name, value in os.environ.items() if not name.startswith("ARENA_")}


def fail(message: str) -> NoReturn:
    """Stop the smoke test with `message`."""
    sys.exit(f"smoke: FAILED: {message}")


def check_imports() -> None:
    """Every module of the installed project imports with the declared dependencies alone.

    The commands below reach only part of the code; a module they do not
    import (the web, the workers) must not hide a missing dependency.
    """
    tops = sorted(top for top, names in packages_distributions().items() if DISTRIBUTION in names)
    if not tops:
        fail(f"{DISTRIBUTION} is not installed")
    modules = [
        module.name
        for top in tops
        for module in pkgutil.walk_packages(importlib.import_module(top).__path__, f"{top}.")
        # Alembic's migration scripts run inside Alembic only (the store runs them).
        if not module.name.startswith("ladder.migrations")
    ]
    for name in [*tops, *modules]:
        importlib.import_module(name)
    print(f"smoke: {len(tops) + len(modules)} modules of {', '.join(tops)} import")


def arena(work: Path, *args: str) -> str:
    """The output of `arena ARGS...`, which must exit 0."""
    # The work folder as the current one: nothing of the source tree is importable.
    done = subprocess.run(
        [ARENA, *args],
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
        env=ENV,
        cwd=work,
        check=False,
    )
    if done.returncode != 0:
        fail(f"arena {' '.join(args)} exited {done.returncode}:\n{done.stderr}")
    print(f"smoke: arena {' '.join(args)}: ok")
    return done.stdout


def check_referee(work: Path) -> None:
    """A referee starts, serves gRPC and /metrics, and stops cleanly on SIGTERM."""
    address = f"127.0.0.1:{free_port()}"
    metrics_port = free_port()
    log = work / "referee.log"
    with log.open("wb") as out:
        referee = subprocess.Popen(
            [
                ARENA,
                "referee",
                "--listen",
                address,
                "--db",
                f"sqlite:///{work / 'smoke.db'}",
                "--metrics-port",
                str(metrics_port),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=ENV,
            cwd=work,
        )
    try:
        wait_serving(address, DEADLINE_S)
        url = f"http://127.0.0.1:{metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=DEADLINE_S) as page:
            if page.status != 200 or b"# TYPE" not in page.read():
                fail(f"{url} is not a Prometheus page")
        referee.send_signal(signal.SIGTERM)
        status = referee.wait(DEADLINE_S)
        if status != 0:
            fail(f"the referee exited {status} on SIGTERM")
    except BaseException:
        print(log.read_text(errors="replace"), file=sys.stderr)
        raise
    finally:
        if referee.poll() is None:
            referee.kill()
            referee.wait()
    print(f"smoke: arena referee --listen {address}: served, stopped on SIGTERM with 0")


def main() -> None:
    """Run every check in the folder given as the only argument."""
    work = Path(sys.argv[1])
    check_imports()
    if "referee" not in arena(work, "--help"):
        fail("arena --help does not list the referee command")
    summary = json.loads(
        arena(
            work,
            *("play", "goodge", "--players", "4", "--bots", "rules,random,random,random"),
            *("--seed", "1", "--json"),
        )
    )
    scores = summary.get("scores")
    if not (isinstance(scores, list) and len(scores) == 4):
        fail(f"arena play --json has no four scores: {summary}")
    check_referee(work)


if __name__ == "__main__":
    main()
