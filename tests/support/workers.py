"""An arena of processes for the workers' tests: a referee with its database, bots,
and the `arena worker` processes a test starts (the fault tests build on it).

Everything runs as real processes over loopback; every process is stopped
when its test ends and every wait is bounded.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

from ladder import queries
from ladder.store import Store
from tests.support.processes import ARENA, REPO, Processes, clean_env, wait_until
from tests.support.referee import BotHandle, RefereeProc


class Arena:
    """A referee with its database, bot processes, and the workers a test starts."""

    def __init__(self, workdir: Path, procs: Processes, referee: RefereeProc) -> None:
        self.workdir = workdir
        self.procs = procs
        self.referee = referee
        self.db = f"sqlite:///{workdir / 'arena.db'}"
        self.store = Store(self.db, upgrade=False)
        self.worker_logs: list[Path] = []

    def bots(
        self, kinds: Sequence[str], games: Sequence[str], *, operator: bool = False
    ) -> list[BotHandle]:
        """Register one bot per kind (by the test author, or the operator) and run
        `arena bot run KIND` for it; wait until connected."""
        handles = [
            self.referee.run_bot(kind, self.referee.register(kind, games, operator=operator))
            for kind in kinds
        ]
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
        return self.spawn(name, argv, env)

    def spawn(
        self, name: str, argv: Sequence[str], env: dict[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        """Start a process (output to NAME.log); stopped when the test ends."""
        log = self.workdir / f"{name}.log"
        if log not in self.worker_logs:
            self.worker_logs.append(log)
        with log.open("wb") as out:
            proc = subprocess.Popen(
                list(argv),
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
