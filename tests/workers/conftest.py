"""Fixtures for the workers' tests: a referee, bot processes, `arena worker`, Redis.

Everything runs as real processes over loopback (helpers from the referee's
end-to-end tests); every process is stopped when its test ends and every
wait is bounded.
"""

from __future__ import annotations

import random
import subprocess
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from ladder import queries
from ladder.store import Store
from tests.conftest import REDIS_URL, service_missing
from tests.referee.conftest import (
    PYTHON,
    REPO,
    BotHandle,
    Processes,
    RefereeProc,
    clean_env,
    free_port,
    launch_referee,
    wait_until,
)

ARENA = [PYTHON, "-m", "arena_cli.main"]


class Arena:
    """A referee with its database, bot processes, and the workers a test starts."""

    def __init__(self, workdir: Path, procs: Processes, referee: RefereeProc) -> None:
        self.workdir = workdir
        self.procs = procs
        self.referee = referee
        self.db = f"sqlite:///{workdir / 'arena.db'}"
        self.store = Store(self.db, upgrade=False)
        self.worker_logs: list[Path] = []

    def bots(self, kinds: Sequence[str], games: Sequence[str]) -> list[BotHandle]:
        """Register one bot per kind and run `arena bot run KIND` for it; wait until connected."""
        handles = [self.referee.run_bot(kind, self.referee.register(kind, games)) for kind in kinds]
        self.referee.wait_connected(handles)
        return handles

    def worker(
        self,
        *extra: str,
        broker: str | None = None,
        name: str = "worker",
        env: dict[str, str] | None = None,
    ) -> subprocess.Popen[bytes]:
        """Start `arena worker` on this arena's database and referee (stopped at the end)."""
        argv = [*ARENA, "worker", "--db", self.db, "--referee", self.referee.address, *extra]
        if broker:
            argv += ["--broker", broker]
        log = self.workdir / f"{name}.log"
        self.worker_logs.append(log)
        with log.open("wb") as out:
            proc = subprocess.Popen(
                argv,
                cwd=REPO,
                env={**clean_env(), **(env or {})},
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        self.procs.started.append((proc, log))
        return proc

    def cli(self, *args: str, broker: str | None = None, check: bool = True) -> str:
        """Run `arena ARGS --db DB` and return what it printed."""
        argv = [*ARENA, *args, "--db", self.db]
        if broker:
            argv += ["--broker", broker]
        done = subprocess.run(
            argv, cwd=REPO, env=clean_env(), capture_output=True, text=True, timeout=60
        )
        if check:
            assert done.returncode == 0, f"arena {' '.join(args)}: {done.stdout}{done.stderr}"
        return done.stdout

    def logs(self) -> str:
        parts = [f"--- referee:\n{self.referee.log_tail(30)}"]
        for log in self.worker_logs:
            text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
            parts.append(f"--- {log.name}:\n" + "\n".join(text.splitlines()[-60:]))
        return "\n".join(parts)

    def wait_finished(self, tournament_id: str, timeout_s: float) -> queries.TournamentView:
        """Wait until the tournament is finished; fail with the logs otherwise."""
        try:
            wait_until(
                lambda: queries.tournament(self.store, tournament_id).status == "finished",
                timeout_s,
                f"tournament {tournament_id} to finish",
                0.25,
            )
        except AssertionError as error:
            view = queries.tournament(self.store, tournament_id)
            raise AssertionError(
                f"{error}: {view.status} {view.matches_finished}/{view.matches_total}\n{self.logs()}"
            ) from None
        return queries.tournament(self.store, tournament_id)


@pytest.fixture
def arena(tmp_path: Path) -> Iterator[Arena]:
    """A referee process on a fresh SQLite database; processes stopped at the end."""
    procs = Processes(tmp_path)
    try:
        referee = launch_referee(tmp_path, procs)
        arena = Arena(tmp_path, procs, referee)
        try:
            yield arena
        finally:
            arena.store.close()
            referee.channel.close()
    finally:
        procs.close()


@pytest.fixture
def redis_url() -> Iterator[str]:
    """A Redis database number of its own, empty, flushed before and after the test."""
    import redis

    try:
        client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2)
        client.ping()
    except redis.RedisError as error:
        service_missing(f"Redis at {REDIS_URL} is not reachable: {error}")
    numbers = list(range(1, 16))
    random.shuffle(numbers)
    chosen = None
    for number in numbers:
        candidate = redis.Redis.from_url(f"{REDIS_URL}/{number}")
        if candidate.dbsize() == 0:
            chosen = candidate, number
            break
        candidate.close()
    client.close()
    if chosen is None:
        service_missing("no empty Redis database number (1..15) to test in")
    db, number = chosen
    db.flushdb()
    try:
        yield f"{REDIS_URL}/{number}"
    finally:
        db.flushdb()
        db.close()


def scrape(port: int) -> str:
    """The text of http://127.0.0.1:PORT/metrics."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
        return str(reply.read().decode())


def metric(text: str, name: str, **labels: str) -> float:
    """The value of one sample in a Prometheus text page (0 if absent)."""
    wanted = ",".join(f'{key}="{value}"' for key, value in sorted(labels.items()))
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        key, _, value = line.rpartition(" ")
        sample, _, rest = key.partition("{")
        if sample != name:
            continue
        found = ",".join(sorted(part for part in rest.rstrip("}").split(",") if part))
        if found == wanted:
            return float(value)
    return 0.0


__all__ = ["ARENA", "Arena", "free_port", "metric", "scrape", "wait_until"]
