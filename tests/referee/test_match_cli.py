"""`arena match run` names its bots, refuses absent ones or waits for them, and the referee
tells the store who is connected (real referee and bot processes over loopback gRPC)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Callable

from cardarena_api.v1 import arena_pb2 as pb
from ladder import queries
from ladder.store import Store
from tests.support.processes import (
    PYTHON,
    REPO,
    Processes,
    arena,
    clean_env,
    on_a_terminal,
    read_until,
    wait_until,
)
from tests.support.referee import BotHandle, RefereeProc


def _match(referee: RefereeProc, bots: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return arena(
        *("match", "run", "--game", "goof", "--bots", bots, "--referee", referee.address),
        *("--option", "rounds=1", "--option", "goof_pile=3", *extra),
        timeout_s=180,
    )


def test_match_run_takes_names_and_prints_them(
    referee: RefereeProc, bots: Callable[..., BotHandle]
) -> None:
    seated = [bots("rules") for _ in range(3)]
    referee.wait_connected(seated)
    sessions = referee.sessions()
    assert [(sessions[b.bot_id].name, sessions[b.bot_id].version) for b in seated] == [
        (b.name, "1") for b in seated
    ]
    refs = [seated[0].name, f"{seated[1].name}@1", seated[2].bot_id]
    done = _match(referee, ",".join(refs), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["status"] == "finished"
    assert summary["bots"] == [b.bot_id for b in seated]
    assert summary["names"] == [b.name for b in seated]
    text = _match(referee, ",".join(refs))
    assert text.returncode == 0, text.stderr
    assert all(bot.name in text.stdout for bot in seated) and seated[0].bot_id not in text.stdout


def test_match_run_refuses_bots_that_are_not_connected(
    referee: RefereeProc, bots: Callable[..., BotHandle]
) -> None:
    playing = [bots("rules") for _ in range(2)]
    absent = referee.register("absent")
    referee.wait_connected(playing)
    done = _match(referee, ",".join([playing[0].name, playing[1].name, absent.name]))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and f"not connected to the referee: {absent.name}" in (
        done.stderr
    )


def test_match_run_waits_for_bots_when_asked(referee: RefereeProc, procs: Processes) -> None:
    late = [referee.register("late") for _ in range(3)]
    waiting = subprocess.Popen(
        [
            *(PYTHON, "-m", "arena_cli.main", "match", "run", "--game", "goof", "--json"),
            *("--bots", ",".join(b.name for b in late), "--referee", referee.address),
            *("--option", "rounds=1", "--option", "goof_pile=3", "--wait-for-bots", "120"),
        ],
        cwd=REPO,
        env=clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for bot in late:
            referee.run_bot("rules", bot, procs=procs)
        out, err = waiting.communicate(timeout=240)
    finally:
        waiting.kill()
    assert waiting.returncode == 0, err
    assert json.loads(out)["status"] == "finished"


def test_the_store_sees_who_is_connected(referee: RefereeProc, procs: Processes) -> None:
    bot = referee.run_bot("random", referee.register("presence"), procs=procs)
    store = Store(f"sqlite:///{referee.workdir / 'arena.db'}", upgrade=False)
    try:
        wait_until(lambda: queries.bot_line(store, bot.bot_id).online, 60, "the bot online")
        assert queries.bot_line(store, bot.bot_id).last_seen_at is not None
        assert bot.proc is not None
        procs.stop(bot.proc)
        wait_until(lambda: not queries.bot_line(store, bot.bot_id).online, 60, "it offline")
    finally:
        store.close()


def test_match_run_shows_its_games_on_a_terminal_and_ctrl_c_leaves_the_match_playing(
    referee: RefereeProc, procs: Processes
) -> None:
    slow = referee.run_badbot(
        "record", referee.register("slow"), "--delay-ms", "100", "--delay-count", "1000",
        procs=procs,
    )  # fmt: skip
    others = [referee.run_bot("random", referee.register("random"), procs=procs) for _ in range(2)]
    referee.wait_connected([slow, *others])
    seats = ",".join(bot.name for bot in (slow, *others))
    process, terminal = on_a_terminal(
        *("match", "run", "--game", "goof", "--bots", seats, "--duplicate"),
        *("--option", "rounds=1", "--option", "goof_pile=3", "--referee", referee.address),
        *("--match-id", "watched-run"),
    )
    try:
        shown = read_until(terminal, b"1/3", 180)
        assert b"goof match" in shown and b"left" in shown, shown[-500:]
        process.send_signal(signal.SIGINT)
        said = read_until(terminal, b"goes on on the referee", 60)
        process.wait(60)
    finally:
        if process.poll() is None:
            process.kill()
        os.close(terminal)
    assert process.returncode == 130 and b"Traceback" not in said
    # The match is the referee's: it was still playing when the command ended, and plays on
    # to its end.
    playing = referee.matches.GetMatch(pb.GetMatchRequest(match_id="watched-run"), timeout=10)
    assert playing.status == "running", playing.status
    assert referee.wait_match("watched-run", timeout_s=300).status == "finished"
