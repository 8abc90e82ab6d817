"""A referee process that stops running for a moment is no bot's fault.

The referee is paused (SIGSTOP, then SIGCONT) several times while it plays
a match of bots that answer at once: as a host that starves it of CPU, a
long collection or a paused VM would. An answer that came while it was
stopped reaches it after its move's deadline has passed by the referee's
clock, and the timer of that deadline is due in the same turn of the event
loop as the read: the time it did not run is not the bot's, so no strike.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.processes import Processes, pause
from tests.support.referee import BotHandle, RefereeProc, launch_referee, result_of

GAME = "golden10"
PLAYERS = 3
DEADLINE_MS = 200
STOPS = 5
STOPPED_S = 0.6
"""Three deadlines: every request pending at a stop is past its deadline when it ends."""
RUNNING_S = 0.2


@pytest.fixture
def stalled(tmp_path: Path) -> Iterator[tuple[RefereeProc, list[BotHandle]]]:
    """A referee with three `arena bot run random` bots connected."""
    procs = Processes(tmp_path)
    try:
        referee = launch_referee(tmp_path, procs)
        bots = [referee.run_bot("random", referee.register("random")) for _ in range(PLAYERS)]
        referee.wait_connected(bots)
        yield referee, bots
        referee.channel.close()
    finally:
        procs.close()


def test_a_referee_paused_mid_match_strikes_no_bot(
    stalled: tuple[RefereeProc, list[BotHandle]],
) -> None:
    referee, bots = stalled
    match_id = "stall-" + uuid.uuid4().hex[:10]
    # Long enough to outlast the stops: a few seconds of moves answered at once.
    referee.start_match(match_id, GAME, bots, deadline_ms=DEADLINE_MS, options={"rounds": "100"})
    for _ in range(STOPS):
        pause(referee.proc, STOPPED_S)
        time.sleep(RUNNING_S)  # running between the pauses
        assert referee.match(match_id).status == "running", "the match ended before the last stop"
    result = result_of(referee.wait_match(match_id))
    assert result["forfeits"] == [], result["forfeits"]
    assert all(count == 0 for count in result["strikes"].values()), (
        result["strikes"],
        referee.log_tail(),
    )
