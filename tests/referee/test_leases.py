"""Match ownership across referee replicas sharing one database: claims with leases.

Two referee processes, A and B, on one SQLite database. B starting, and B's
sweeps while A plays, leave A's running match alone: A renews its lease. A
killed with SIGKILL stops renewing; once its lease has expired B marks A's
match aborted, and StartMatch on B plays it again.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from cardarena_api.v1 import arena_pb2 as pb
from tests.support.processes import Processes, wait_until
from tests.support.referee import BotHandle, RefereeProc, launch_referee, result_of

LEASE_S = "2"
GAME = "golden10"
OPTIONS = {"rounds": "2"}


@pytest.fixture
def replicas(tmp_path: Path) -> Iterator[tuple[RefereeProc, RefereeProc]]:
    """Referees A and B (their own logs) on A's database, leases of 2 s."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    procs_a, procs_b = Processes(tmp_path / "a"), Processes(tmp_path / "b")
    try:
        a = launch_referee(tmp_path / "a", procs_a, "--replica", "A", "--lease-s", LEASE_S)
        shared = f"sqlite:///{tmp_path / 'a' / 'arena.db'}"
        b = launch_referee(
            tmp_path / "b", procs_b, "--replica", "B", "--lease-s", LEASE_S, "--db", shared
        )
        yield a, b
        a.channel.close()
        b.channel.close()
    finally:
        procs_b.close()
        procs_a.close()


def status_on(referee: RefereeProc, match_id: str) -> str:
    return str(referee.matches.GetMatch(pb.GetMatchRequest(match_id=match_id), timeout=10).status)


def slow_bots(referee: RefereeProc) -> list[BotHandle]:
    """Three recording bots; the first answers its first 40 requests 150 ms late."""
    return [
        referee.run_badbot(
            "record", referee.register("lease"), "--delay-ms", "150", "--delay-count", "40"
        ),
        *(referee.run_badbot("record", referee.register("lease")) for _ in range(2)),
    ]


def test_a_live_replicas_match_is_left_alone_and_a_dead_ones_is_played_again(
    replicas: tuple[RefereeProc, RefereeProc],
) -> None:
    a, b = replicas
    bots = slow_bots(a)
    first = "lease-" + uuid.uuid4().hex[:8]
    a.start_match(first, GAME, bots, seed=None, options=OPTIONS)
    seen_on_b: set[str] = set()

    def over() -> bool:
        seen_on_b.add(status_on(b, first))
        return status_on(a, first) != "running"

    # The slow seat keeps the match going for several of B's sweeps (one every lease / 3).
    wait_until(over, 120, "A to finish its match", 0.2)
    assert status_on(a, first) == "finished"
    assert "aborted" not in seen_on_b and "running" in seen_on_b

    second = "lease-" + uuid.uuid4().hex[:8]
    bots = slow_bots(a)  # new ones: the first slow bot has used up its delays
    a.start_match(second, GAME, bots, seed=None, options=OPTIONS)
    wait_until(lambda: status_on(b, second) == "running", 30, "the second match to run")
    a.proc.kill()
    a.proc.wait(10)
    wait_until(lambda: status_on(b, second) == "aborted", 60, "B to abort A's match", 0.2)
    reason = b.matches.GetMatch(pb.GetMatchRequest(match_id=second), timeout=10).reason
    assert "lease" in reason

    # The same bots connect to B, which plays the match again when asked.
    for bot in bots:
        b.run_bot("random", bot)
    b.wait_connected(bots)
    b.start_match(second, GAME, bots, seed=None, options=OPTIONS)
    result_of(b.wait_match(second, 120))
