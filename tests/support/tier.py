"""A referee tier for process-fault tests: two replicas on one port, one database, one Redis.

Replicas A and B are separate `arena referee --relay` processes sharing the
listen port (SO_REUSEPORT), so that a bot reconnecting after its replica
died or drained reaches the other, as it would behind a load balancer. The
rest is the process-fault arena (`FaultArena`): a worker, beat, slow bots in
one process (each with a connection of its own, spread over the replicas by
the kernel) and ledgers that count what a tournament left in the store.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import grpc
import redis
from sqlalchemy import select

from ladder.models import MatchRow, TournamentMatchRow
from referee.tier.registry import REPLICAS_UNTIL
from tests.support.faults import FaultArena
from tests.support.processes import Processes, free_port, wait_until
from tests.support.referee import RefereeProc, referee_command
from tests.support.services import RedisServer

REPLICAS = ("A", "B")
LEASE_S = 3
DRAIN_S = 60
SPREAD_TRIES = 12


class TierArena(FaultArena):
    """FaultArena whose referee is a tier of two replicas on one address.

    The replicas are processes of their own (A and B), or, with `processes`, the
    two of one `arena referee --processes 2 --replica R` (R.0 and R.1).
    """

    def __init__(
        self,
        workdir: Path,
        procs: Processes,
        redis: RedisServer,
        processes: bool = False,
        relay_port: int | None = None,
    ) -> None:
        """`relay_port`: where the replicas reach the relay's Redis (a proxy to it), if
        not at its own port."""
        self.address = f"127.0.0.1:{free_port()}"
        self.relay_url = f"redis://127.0.0.1:{relay_port or redis.port}/1"
        self.replicas: dict[str, subprocess.Popen[bytes]] = {}
        self._starts: dict[str, int] = {}
        self._workdir = workdir
        self._procs = procs
        if processes:
            self.names = ("R.0", "R.1")
            self.supervisor = self._start("referee", "R", processes=len(self.names))
            referee = RefereeProc(
                self.address, self.supervisor, workdir / "referee.log", workdir, procs
            )
        else:
            self.names = REPLICAS
            for name in REPLICAS:
                self.start_replica(name)
            referee = RefereeProc(
                self.address, self.replicas["A"], workdir / "A-1.log", workdir, procs
            )
        super().__init__(workdir, procs, referee, redis)

    def start_replica(self, name: str) -> None:
        """Start replica `name` (again) and wait until it serves."""
        self._starts[name] = self._starts.get(name, 0) + 1
        self.replicas[name] = self._start(f"{name}-{self._starts[name]}", name)

    def _start(self, log_name: str, replica: str, processes: int = 1) -> subprocess.Popen[bytes]:
        """`arena referee` as `replica` (with `processes` processes); waits until each listens."""
        argv = referee_command(
            self.address,
            f"sqlite:///{self._workdir / 'arena.db'}",
            "--relay",
            self.relay_url,
            "--replica",
            replica,
            "--lease-s",
            str(LEASE_S),
            "--shutdown-grace-s",
            str(DRAIN_S),
            "--processes",
            str(processes),
        )
        proc = self._procs.start(log_name, argv)
        log = self._workdir / f"{log_name}.log"
        wait_until(
            lambda: self._serving(replica, proc, log) >= processes,
            60,
            f"replica {replica} to serve",
            0.1,
        )
        return proc

    @staticmethod
    def _serving(name: str, proc: subprocess.Popen[bytes], log: Path) -> int:
        text = log.read_text(errors="replace") if log.exists() else ""
        assert proc.poll() is None, f"replica {name} exited:\n{text}"
        # Any replica may answer on the shared port, and a killed one's registry entry
        # outlives it for a few seconds: its own log says when it listens.
        return text.count("referee listening on")

    def live_replicas(self) -> set[str]:
        """The replicas whose registry entry has not expired (by Redis's clock, as the tier's)."""
        client = redis.Redis.from_url(self.relay_url)
        try:
            seconds, micros = client.time()
            now_ms = seconds * 1000 + micros // 1000
            names = client.zrangebyscore(REPLICAS_UNTIL, now_ms, "+inf")
        except redis.RedisError:
            return set()
        finally:
            client.close()
        return {name.decode() for name in names}

    def replica_log(self, name: str) -> str:
        return self.log_text(f"{name}-{self._starts[name]}")

    def holders(self) -> dict[str, str]:
        """Bot id -> the replica holding its stream, as ListSessions says.

        Empty while the call fails UNAVAILABLE: the test's own connection may have
        been to a replica that just died, and the next call reaches a live one.
        """
        try:
            sessions = self.referee.sessions()
        except grpc.RpcError as error:
            if isinstance(error, grpc.Call) and error.code() == grpc.StatusCode.UNAVAILABLE:
                return {}
            raise
        return {bot_id: info.replica for bot_id, info in sessions.items()}

    def spread_bots(self, one_session: bool = False) -> dict[str, str]:
        """The slow bots, restarted until both replicas hold some of them (`slow_bots`)."""
        for _ in range(SPREAD_TRIES):
            self.slow_bots(one_session=one_session)
            wait_until(lambda: len(self.holders()) == len(self.handles), 30, "bots to register")
            held = self.holders()
            if set(held.values()) == set(self.names):
                return held
            assert self.bot_proc is not None
            self.bot_proc.terminate()
            self.bot_proc.wait(30)
            wait_until(lambda: not self.holders(), 30, "the bots to leave")
        raise AssertionError(f"the kernel put every bot on one replica {SPREAD_TRIES} times")

    def planned(self, tournament_id: str) -> dict[str, list[str]]:
        """The bots of each planned match of the tournament."""
        with self.store.session() as session:
            rows = session.scalars(
                select(TournamentMatchRow).where(TournamentMatchRow.tournament_id == tournament_id)
            )
            return {row.match_id: list(row.bot_ids) for row in rows}

    def owners(self, tournament_id: str) -> dict[str, str | None]:
        """The replica that played (or plays) each match of the tournament."""
        return self.per_match(tournament_id, MatchRow.owner)
