"""The checks of `make smoke`, run by each install's own Python (see tools/smoke_install.sh).

    smoke_checks.py server WORK          the server install (`pip install '.[server]'`)
    smoke_checks.py base WORK ARENA      the base install (`pip install .`); ARENA is the
                                         server install's `arena`, for a referee

The server install: every module of the project imports, `arena --help`
answers, `arena play` prints its JSON summary, and a referee serves (gRPC
health SERVING, /metrics answers) and stops with exit status 0 on SIGTERM.
The base install (a bot author's): the engines, the SDK and the commands a
bot author runs import without SQLAlchemy, Celery or FastAPI, which are not
importable there; `arena play` works, `arena referee` says in one line that
it needs the server install; and two bots run from it play a match on a
referee of the server install. Each wait is for a condition with a generous
deadline, so a loaded machine only makes it slower.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import json
import os
import pkgutil
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from importlib.metadata import packages_distributions
from pathlib import Path
from typing import NoReturn

from arena_cli.processes import free_port, wait_serving

DISTRIBUTION = "card-arena"
ARENA = str(Path(sys.executable).parent / "arena")
DEADLINE_S = 60.0
BASE_PACKAGES = ("games", "bots", "cardarena_api")
"""What the base install holds for a bot author, every module of it importable."""
BASE_COMMANDS = ("arena_cli.main", "arena_cli.bot_cmd", "arena_cli.play", "arena_cli.match_cmd")
SERVER_ONLY = ("sqlalchemy", "celery", "fastapi")
"""Some of what only the server extra brings: none of it may be importable in the base."""
# No ARENA_* setting of the caller's may change what the commands do.
ENV = {name: value for name, value in os.environ.items() if not name.startswith("ARENA_")}


def fail(message: str) -> NoReturn:
    """Stop the smoke test with `message`."""
    sys.exit(f"smoke: FAILED: {message}")


def modules_of(tops: list[str]) -> list[str]:
    """The packages `tops` and every module under them."""
    return [
        *tops,
        *(
            module.name
            for top in tops
            for module in pkgutil.walk_packages(importlib.import_module(top).__path__, f"{top}.")
            # Alembic's migration scripts run inside Alembic only (the store runs them).
            if not module.name.startswith("ladder.migrations")
        ),
    ]


def check_imports() -> None:
    """Every module of the installed project imports with the declared dependencies alone.

    The commands below reach only part of the code; a module they do not
    import (the web, the workers) must not hide a missing dependency.
    """
    tops = sorted(top for top, names in packages_distributions().items() if DISTRIBUTION in names)
    if not tops:
        fail(f"{DISTRIBUTION} is not installed")
    names = modules_of(tops)
    for name in names:
        importlib.import_module(name)
    print(f"smoke: {len(names)} modules of {', '.join(tops)} import")


def check_base_imports() -> None:
    """The engines, the protocol and the SDK import; the server's libraries are absent."""
    present = [name for name in SERVER_ONLY if importlib.util.find_spec(name) is not None]
    if present:
        fail(f"the base install can import {', '.join(present)}")
    names = [*modules_of(list(BASE_PACKAGES)), *BASE_COMMANDS]
    for name in names:
        importlib.import_module(name)
    print(f"smoke: {len(names)} modules of the base install import; no {', '.join(SERVER_ONLY)}")


def run(work: Path, *args: str, status: int = 0) -> subprocess.CompletedProcess[str]:
    """`arena ARGS...` of this install, which must exit with `status`."""
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
    if done.returncode != status:
        fail(f"arena {' '.join(args)} exited {done.returncode}:\n{done.stderr}")
    print(f"smoke: arena {' '.join(args)}: ok")
    return done


def arena(work: Path, *args: str) -> str:
    """The output of `arena ARGS...`, which must exit 0."""
    return run(work, *args).stdout


@contextlib.contextmanager
def referee(work: Path, executable: str) -> Iterator[tuple[subprocess.Popen[bytes], str, int]]:
    """A referee of `executable` (an `arena`), serving; its process, address and metrics port.

    Its log is printed if the checks inside fail; it is killed if still running after.
    """
    address = f"127.0.0.1:{free_port()}"
    metrics_port = free_port()
    log = work / "referee.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                executable,
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
        yield process, address, metrics_port
    except BaseException:
        print(log.read_text(errors="replace"), file=sys.stderr)
        raise
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def check_referee(work: Path) -> None:
    """A referee starts, serves gRPC and /metrics, and stops cleanly on SIGTERM."""
    with referee(work, ARENA) as (process, address, metrics_port):
        url = f"http://127.0.0.1:{metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=DEADLINE_S) as page:
            if page.status != 200 or b"# TYPE" not in page.read():
                fail(f"{url} is not a Prometheus page")
        process.send_signal(signal.SIGTERM)
        status = process.wait(DEADLINE_S)
        if status != 0:
            fail(f"the referee exited {status} on SIGTERM")
    print(f"smoke: arena referee --listen {address}: served, stopped on SIGTERM with 0")


def check_bots_play(work: Path, server_arena: str) -> None:
    """Two bots of this install play a whole match on a referee of the server install."""
    with referee(work, server_arena) as (_, address, _), contextlib.ExitStack() as stack:
        bots = []
        for number in range(2):
            bot = json.loads(
                arena(work, "bot", "register", f"smoke-{number}", "--referee", address)
            )
            process = subprocess.Popen(
                [ARENA, "bot", "run", "rules", "--token", bot["token"], "--referee", address],
                stdout=subprocess.DEVNULL,
                stderr=(work / f"bot-{number}.log").open("wb"),
                env=ENV,
                cwd=work,
            )
            stack.callback(process.wait, DEADLINE_S)
            stack.callback(process.terminate)
            bots.append(bot["bot_id"])
        match = json.loads(
            arena(
                work,
                *("match", "run", "--game", "goof", "--bots", ",".join(bots), "--json"),
                *("--option", "rounds=1", "--option", "goof_pile=3", "--referee", address),
                *("--wait-for-bots", str(DEADLINE_S)),
            )
        )
        if match.get("status") != "finished" or match.get("forfeits"):
            fail(f"the base install's bots did not finish their match: {match}")
    print("smoke: two bots of the base install played a match on the server install's referee")


def check_play(work: Path) -> None:
    """`arena play` prints a summary with a score per seat."""
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


def main() -> None:
    """Run the checks of the install named by the first argument."""
    kind, work = sys.argv[1], Path(sys.argv[2])
    if kind == "base":
        check_base_imports()
    else:
        check_imports()
    if "referee" not in arena(work, "--help"):
        fail("arena --help does not list the referee command")
    check_play(work)
    if kind == "base":
        refused = run(work, "referee", "--listen", "127.0.0.1:0", status=2).stderr
        if "pip install 'card-arena[server]'" not in refused or len(refused.splitlines()) != 1:
            fail(f"arena referee in the base install does not say what to install: {refused}")
        check_bots_play(work, sys.argv[3])
    else:
        check_referee(work)


if __name__ == "__main__":
    main()
