"""A whole arena for process-fault tests: referee, workers, beat, web, bots, and a Redis
server of the test's own (so it can be stopped and started without touching anyone else's).

Builds on the workers' `Arena` (tests/support/workers.py) and the referee's
process helpers (tests/support/referee.py). The bots are slow on purpose
(`bench.multibot --delay-ms`, all of them in one process) so that a fault
lands in the middle of a match. `Ledger` counts what a tournament left in
the store: planned against recorded matches, results, rating-history,
game and replay rows per match, and each bot's rating games before and
after; `Ledger.problems()` says what was lost or counted twice.
"""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from ladder import tournaments
from ladder.models import (
    GameRow,
    MatchRow,
    RatingHistoryRow,
    RatingRow,
    ReplayRow,
    ResultRow,
    TournamentMatchRow,
)
from tests.support.processes import ARENA, PYTHON, Processes, wait_until
from tests.support.referee import BotHandle, RefereeProc, referee_command
from tests.support.services import RedisServer
from tests.support.workers import Arena
from workers import WorkerSettings, make_app
from workers.celery_app import ArenaCelery
from workers.tasks import CREATE_ROUND_ROBIN

GAME = "golden10"
PLAYERS = 3
BOTS = 4  # C(4, 3) = 4 duplicate matches per tournament
ROTATIONS = PLAYERS  # duplicate: one game per seat rotation
MOVE_DELAY_MS = 3  # the bots' thinking time: a match lasts about a second
TOURNAMENT_DEADLINE_MS = 400
FAST = {
    "ARENA_VISIBILITY_TIMEOUT_S": "2",  # a dead worker's tasks come back after 2 s
    "ARENA_SWEEP_INTERVAL_S": "1",
    "ARENA_SWEEP_AGE_S": "2",
    "ARENA_LADDER_INTERVAL_S": "0",
}


@dataclass
class Ledger:
    """What one tournament left in the store."""

    tournament_id: str
    planned: int
    recorded: int
    results_per_match: dict[str, int]
    history_per_match: dict[str, int]
    games_per_match: dict[str, int]
    replays_per_match: dict[str, int]
    rating_games_added: dict[str, int]
    rating_games_expected: dict[str, int]
    match_status: dict[str, str]
    notes: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        """Everything lost or counted twice (empty when each match counted exactly once)."""
        found = []
        if self.recorded != self.planned:
            found.append(f"recorded {self.recorded} of {self.planned} planned matches")
        for name, counts, each in (
            ("results rows", self.results_per_match, PLAYERS),
            ("rating_history rows", self.history_per_match, PLAYERS),
            ("game rows", self.games_per_match, ROTATIONS),
            ("replays", self.replays_per_match, ROTATIONS),
        ):
            wrong = {m: n for m, n in counts.items() if n != each}
            missing = self.planned - len(counts)
            if wrong or missing:
                found.append(f"{name}: want {each} per match; wrong {wrong}, missing {missing}")
        if self.rating_games_added != self.rating_games_expected:
            found.append(
                f"rating games added {self.rating_games_added}, "
                f"expected {self.rating_games_expected} (each match rates its bots once)"
            )
        return found

    def summary(self) -> str:
        counts = {
            "planned": self.planned,
            "recorded": self.recorded,
            "results/match": sorted(Counter(self.results_per_match.values()).items()),
            "history/match": sorted(Counter(self.history_per_match.values()).items()),
            "replays/match": sorted(Counter(self.replays_per_match.values()).items()),
            "rating games added": sum(self.rating_games_added.values()),
            "status": sorted(Counter(self.match_status.values()).items()),
        }
        notes = f"; {'; '.join(self.notes)}" if self.notes else ""
        return f"{self.tournament_id}: {counts}{notes}"


class FaultArena(Arena):
    """The workers' Arena plus slow bots, beat, web, our own Redis and tournaments."""

    def __init__(
        self, workdir: Path, procs: Processes, referee: RefereeProc, redis: RedisServer
    ) -> None:
        super().__init__(workdir, procs, referee)
        self.redis = redis
        self.handles: list[BotHandle] = []
        self.bot_proc: subprocess.Popen[bytes] | None = None
        self.referee_starts = 1
        self._app: ArenaCelery | None = None

    @property
    def bot_ids(self) -> list[str]:
        return [bot.bot_id for bot in self.handles]

    def log_text(self, name: str) -> str:
        path = self.workdir / f"{name}.log"
        return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""

    # processes

    def slow_bots(
        self, count: int = BOTS, delay_ms: int = MOVE_DELAY_MS, one_session: bool = False
    ) -> list[BotHandle]:
        """Register `count` bots and run them all in one `bench.multibot` process (in a
        tier, each with a session on every replica, or with `one_session` on one only:
        matches elsewhere relay its moves)."""
        if not self.handles:
            self.handles = [self.referee.register("slow", [GAME]) for _ in range(count)]
            tokens = self.workdir / "tokens.json"
            tokens.write_text(json.dumps([bot.token for bot in self.handles]), encoding="utf-8")
        self.bot_proc = self.spawn(
            "bots",
            [
                PYTHON,
                "-m",
                "bench.multibot",
                "--referee",
                self.referee.address,
                "--tokens",
                str(self.workdir / "tokens.json"),
                "--delay-ms",
                str(delay_ms),
                "--capacity",
                "4",
                *(["--one-session"] if one_session else []),
            ],
        )
        for bot in self.handles:
            bot.proc = self.bot_proc
        self.referee.wait_connected(self.handles)
        return self.handles

    def fault_worker(
        self, name: str, *extra: str, env: dict[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        """`arena worker` on our Redis, with fast redelivery."""
        return self.worker(
            "--metrics-port",
            "0",
            *extra,
            broker=self.redis.url,
            name=name,
            env={**FAST, **(env or {})},
        )

    def beat(self, name: str = "beat") -> subprocess.Popen[bytes]:
        """`arena beat` on our Redis: no ladder, a sweep every second."""
        return self.spawn(
            name,
            [
                *ARENA,
                "beat",
                "--db",
                self.db,
                "--broker",
                self.redis.url,
                "--referee",
                self.referee.address,
                "--ladder-interval-s",
                "0",
                "--schedule-file",
                str(self.workdir / "beat-schedule"),
            ],
            env=FAST,
        )

    def web(self, port: int, name: str = "web") -> subprocess.Popen[bytes]:
        return self.spawn(name, [*ARENA, "web", "--db", self.db, "--port", str(port)])

    def restart_referee(self) -> None:
        """A referee again on the same address and database (after the old one ended)."""
        self.referee_starts += 1
        name = f"referee-{self.referee_starts}"
        proc = self.spawn(name, referee_command(self.referee.address, self.db))
        self.referee.proc = proc
        self.referee.log = self.workdir / f"{name}.log"
        from grpc_health.v1 import health_pb2

        def serving() -> bool:
            assert proc.poll() is None, f"{name} exited:\n{self.log_text(name)}"
            try:
                reply = self.referee.health.Check(health_pb2.HealthCheckRequest(), timeout=1)
            except Exception:
                return False
            return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)

        wait_until(serving, 30, f"{name} to serve", 0.1)

    # tournaments

    @property
    def app(self) -> ArenaCelery:
        """A Celery app on our Redis, to send tasks from the test."""
        if self._app is None:
            self._app = make_app(
                settings=WorkerSettings(
                    database_url=self.db,
                    broker_url=self.redis.url,
                    referee=self.referee.address,
                    metrics_port=0,
                )
            )
        return self._app

    def rating_games(self) -> dict[str, int]:
        with self.store.session() as session:
            rows = session.scalars(select(RatingRow).where(RatingRow.bot_id.in_(self.bot_ids)))
            found = {row.bot_id: row.games for row in rows}
        return {bot: found.get(bot, 0) for bot in self.bot_ids}

    def tournament(self, seed: int) -> tuple[str, dict[str, int]]:
        """Create a tiny round robin and hand it to the workers; its id and the rating games
        before it."""
        before = self.rating_games()
        tournament_id = tournaments.create_tournament(
            self.store,
            GAME,
            PLAYERS,
            self.bot_ids,
            duplicate=True,
            deadline_ms=TOURNAMENT_DEADLINE_MS,
            options={"rounds": 1},
            seed=seed,
            name=f"faults-{seed}",
        )
        self.app.enqueue(CREATE_ROUND_ROBIN, tournament_id)
        return tournament_id, before

    def statuses(self, tournament_id: str) -> dict[str, str]:
        """The referee's status of each of the tournament's matches it has started."""
        return self.per_match(tournament_id, MatchRow.status)

    def per_match(self, tournament_id: str, column: Any) -> dict[str, Any]:
        """`column` of the matches table for each of the tournament's started matches."""
        with self.store.session() as session:
            rows = session.execute(
                select(MatchRow.id, column)
                .join(TournamentMatchRow, TournamentMatchRow.match_id == MatchRow.id)
                .where(TournamentMatchRow.tournament_id == tournament_id)
            ).all()
        return {match_id: value for match_id, value in rows}

    def wait_playing(self, tournament_id: str, timeout_s: float = 120) -> list[str]:
        """Wait until at least one match of the tournament is being played; those playing.

        The first match waits on a worker's and a beat's start (a Celery import, a broker
        connection, the tournament task): on a loaded machine 30 s were seen not to be enough.
        """

        def playing() -> list[str]:
            return [m for m, s in self.statuses(tournament_id).items() if s == "running"]

        return list(wait_until(playing, timeout_s, f"a match of {tournament_id} to play", 0.02))

    def recorded(self, match_ids: Sequence[str]) -> set[str]:
        with self.store.session() as session:
            return set(
                session.scalars(
                    select(ResultRow.match_id).where(ResultRow.match_id.in_(list(match_ids)))
                )
            )

    def ledger(self, tournament_id: str, before: dict[str, int]) -> Ledger:
        """Count what the tournament left in the store."""

        def per_match(column: object) -> dict[str, int]:
            with self.store.session() as session:
                rows = session.execute(
                    select(column, func.count())  # type: ignore[call-overload]
                    .join(TournamentMatchRow, TournamentMatchRow.match_id == column)
                    .where(TournamentMatchRow.tournament_id == tournament_id)
                    .group_by(column)
                ).all()
            return {str(match_id): int(count) for match_id, count in rows}

        with self.store.session() as session:
            plan = list(
                session.scalars(
                    select(TournamentMatchRow).where(
                        TournamentMatchRow.tournament_id == tournament_id
                    )
                )
            )
            expected = {bot: 0 for bot in self.bot_ids}
            for planned in plan:
                for bot in planned.bot_ids:
                    expected[bot] += 1
        results = per_match(ResultRow.match_id)
        after = self.rating_games()
        return Ledger(
            tournament_id=tournament_id,
            planned=len(plan),
            recorded=len(results),
            results_per_match=results,
            history_per_match=per_match(RatingHistoryRow.match_id),
            games_per_match=per_match(GameRow.match_id),
            replays_per_match=per_match(ReplayRow.match_id),
            rating_games_added={bot: after[bot] - before.get(bot, 0) for bot in self.bot_ids},
            rating_games_expected=expected,
            match_status=self.statuses(tournament_id),
        )

    def close(self) -> None:
        if self._app is not None:
            self._app.close()
        self.store.close()
        self.referee.channel.close()


def check_exact(reports: list[Ledger]) -> None:
    """Fail, with every repetition's counts, unless each match counted exactly once."""
    lines = [report.summary() for report in reports]
    problems = [f"{r.tournament_id}: {p}" for r in reports for p in r.problems()]
    text = "\n".join(lines)
    print(text)
    assert not problems, "lost or double-counted:\n" + "\n".join(problems) + "\n" + text
