"""A database that goes away is the arena's fault, never a bot's.

The referee runs on PostgreSQL through a TCP proxy the test cuts (every
connection reset, new ones refused), as a database that fails over, or
freezes (nothing passes, nothing ends), as a network that drops packets
silently. A bot that restarts meanwhile cannot open a session: the referee
cannot read its token (at once, or within `TOKEN_READ_S`). Which bot it was is not known, but its
seat in a match is not struck for the absence: the match is aborted, to be
played again. The bot is told UNAVAILABLE in one line, and no caller ever
reads the database's address in an error.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from cardarena_api.metadata import TRY_AGAIN, trailing_value
from cardarena_api.v1 import arena_pb2 as pb
from referee.database_errors import DATABASE_UNAVAILABLE
from tests.support.processes import Processes, arena, wait_until
from tests.support.referee import BotHandle, RefereeProc, launch_referee, result_of
from tests.support.services import postgres_schema
from tests.support.tcp_proxy import TcpProxy

GAME = "golden10"
PLAYERS = 3


@pytest.fixture
def outage(tmp_path: Path) -> Iterator[tuple[RefereeProc, list[BotHandle], TcpProxy]]:
    """A referee on PostgreSQL through a proxy, with three `arena bot run random` bots."""
    with postgres_schema() as url:
        proxy, through = TcpProxy.before(url)
        with proxy:
            procs = Processes(tmp_path)
            try:
                referee = launch_referee(tmp_path, procs, db=through)
                bots = [
                    referee.run_bot("random", referee.register("random")) for _ in range(PLAYERS)
                ]
                referee.wait_connected(bots)
                yield referee, bots, proxy
                referee.channel.close()
            finally:
                procs.close()


@pytest.mark.parametrize("fault", ["cut", "freeze"])
def test_a_bot_kept_out_by_the_database_is_not_struck(
    outage: tuple[RefereeProc, list[BotHandle], TcpProxy], fault: str
) -> None:
    referee, bots, proxy = outage
    match_id = "outage-" + uuid.uuid4().hex[:10]
    referee.start_match(match_id, GAME, bots, options={"rounds": "100"})
    wait_until(lambda: referee.match(match_id).status == "running", 30, "the match to start")

    if fault == "cut":
        proxy.cut()
        # Any call the database fails is UNAVAILABLE in one line, without its address.
        with pytest.raises(grpc.RpcError) as refused:
            referee.match(match_id)
        assert refused.value.code() == grpc.StatusCode.UNAVAILABLE, refused.value
        assert refused.value.details() == DATABASE_UNAVAILABLE
    else:
        proxy.freeze()
    # The first bot restarts: the referee cannot read its token, and its seat waits for it.
    kept_out = bots[0]
    assert kept_out.proc is not None
    referee.procs.stop(kept_out.proc)
    referee.run_bot("random", kept_out)
    bot_log = referee.workdir / f"bot-{kept_out.name}.log"
    wait_until(
        lambda: f"ended: UNAVAILABLE {DATABASE_UNAVAILABLE}" in bot_log.read_text(),
        30,
        "the restarted bot to be refused",
    )
    # Its absence comes to a move's deadline while sessions are refused: the match is
    # aborted then (on the code before, the bot was struck, and forfeited by the grace).
    referee_log = referee.log
    wait_until(
        lambda: f"match {match_id} aborted: the bot was away" in referee_log.read_text(),
        30,
        "the match to be aborted",
    )
    if fault == "cut":
        proxy.restore()
    else:
        proxy.thaw()

    match = referee.wait_match(match_id)
    assert match.status == "aborted", (match.status, match.reason, referee.log_tail())
    assert match.reason.startswith("sessions refused: "), match.reason
    text = bot_log.read_text()
    assert str(proxy.port) not in text and "psycopg" not in text, text

    # The database back, the bot is let in again and plays, struck for nothing.
    referee.wait_connected([kept_out])
    again = referee.play("outage-again-" + uuid.uuid4().hex[:8], GAME, bots)
    result = result_of(again)
    assert all(count == 0 for count in result["strikes"].values()), result["strikes"]


def test_a_register_while_the_database_is_away_is_unavailable_in_one_line(
    outage: tuple[RefereeProc, list[BotHandle], TcpProxy],
) -> None:
    referee, _, proxy = outage
    referee.author()  # signed up while the database answers
    proxy.cut()
    with pytest.raises(grpc.RpcError) as refused:
        referee.bots.Register(
            pb.RegisterRequest(name="late", version="1", games=[GAME]),
            metadata=referee.author(),
            timeout=10,
        )
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE, refused.value
    assert refused.value.details() == DATABASE_UNAVAILABLE
    # Marked as the referee's own: the command line does not ask whether it runs.
    assert trailing_value(refused.value, TRY_AGAIN) == "1"
    said = arena(
        "bot",
        "register",
        "late",
        "--referee",
        referee.address,
        env={"ARENA_AUTHOR_TOKEN": referee.author_token or ""},
    )
    assert (said.returncode, said.stderr) == (
        1,
        f"arena bot: UNAVAILABLE: {DATABASE_UNAVAILABLE}\n",
    ), said
    proxy.restore()
    assert referee.register("late").bot_id
