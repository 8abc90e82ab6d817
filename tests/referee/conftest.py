"""Fixtures for the referee's end-to-end tests.

Everything runs as separate processes over real gRPC on loopback: the
referee (`arena referee`, temp SQLite db, free port), the bots (`arena bot
run random|rules`, or `badbot.py` for misbehaving and recording bots) and
matches started with `arena match run` or the RefereeService stub. Every
process is stopped in a finalizer, every wait is bounded. The helpers are
in tests/support (`processes`, `referee`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import pytest

from tests.support.processes import Processes
from tests.support.referee import ALL_GAMES, BotHandle, RefereeProc, running_referee


@pytest.fixture(scope="module")
def referee(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RefereeProc]:
    """One referee process for a test module (bots and matches come and go)."""
    with running_referee(tmp_path_factory.mktemp("referee")) as ref:
        yield ref


@pytest.fixture
def procs(referee: RefereeProc) -> Iterator[Processes]:
    """Processes started by one test (stopped when it ends)."""
    group = Processes(referee.workdir)
    try:
        yield group
    finally:
        group.close()


@pytest.fixture
def bots(referee: RefereeProc, procs: Processes) -> Callable[..., BotHandle]:
    """`bots(kind)` registers a bot and starts `arena bot run KIND` for this test."""

    def make(kind: str = "random", games: Sequence[str] = ALL_GAMES) -> BotHandle:
        return referee.run_bot(kind, referee.register(kind, games), procs=procs)

    return make


@pytest.fixture
def badbot(referee: RefereeProc, procs: Processes) -> Callable[..., BotHandle]:
    """`badbot(mode, *flags)` registers a bot and starts badbot.py for this test."""

    def make(mode: str, *extra: str, wait: bool = True) -> BotHandle:
        return referee.run_badbot(mode, referee.register(mode), *extra, wait=wait, procs=procs)

    return make
