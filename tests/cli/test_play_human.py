"""`arena play --human`: a person's seat, played from piped input and from a terminal."""

from __future__ import annotations

import json
import os
import pty
import shlex
import signal
import subprocess

import pytest

from tests.support.processes import ARENA, REPO, arena, clean_env, read_until, wait_exit

BAD_LINES = "99\nnonsense\n?\n"
"""A number out of range, text that is no action, and a request for the list."""

SHORT_GAMES = {
    "goodge": ("--players", "3", "--option", "max_rounds=1"),
    "golden10": ("--players", "3", "--option", "rounds=1"),
    "goof": ("--players", "2", "--option", "rounds=1"),
}
"""One round of each game, the person at seat 0."""


def play_piped(*args: str, lines: str) -> subprocess.CompletedProcess[str]:
    """`arena play ARGS...` with `lines` as its standard input."""
    return subprocess.run(
        [*ARENA, "play", *args],
        input=lines,
        capture_output=True,
        text=True,
        timeout=120,
        env=clean_env(),
        cwd=REPO,
    )


@pytest.mark.parametrize("game", sorted(SHORT_GAMES))
def test_a_whole_game_from_piped_input_refuses_bad_lines_and_says_why(game: str) -> None:
    # Far more lines than a round takes: the game ends before the input does.
    done = play_piped(
        game, "--human", "--seed", "4", "--json", *SHORT_GAMES[game], lines=BAD_LINES + "1\n" * 3000
    )
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout)
    assert summary["game"] == game and summary["human_seat"] == 0
    assert summary["bots"] == ["human"] + ["rules"] * (summary["players"] - 1)
    shown = done.stderr
    # The bad lines are refused, each in one line with its reason; every "1" is taken.
    refusals = [line for line in shown.splitlines() if line.startswith("not taken: ")]
    assert len(refusals) == 2, refusals
    assert refusals[0].startswith("not taken: there is no action 99: they are numbered 1 to ")
    assert refusals[1] == (
        "not taken: 'nonsense' is neither an action's number nor its text; ? lists them"
    )
    listed = shown.split("your move> ?\n", 1)[1].splitlines()[0]
    assert listed.startswith("  1) "), listed
    assert "Your hand (" in shown or "You: goof pile" in shown
    assert "Game over." in shown


def test_yes_1_plays_seat_0_of_golden10_and_prints_one_json_object() -> None:
    command = (
        f"yes 1 | {shlex.join([*ARENA, 'play', 'golden10', '--human', '--seed', '3', '--json'])}"
    )
    done = subprocess.run(
        command, shell=True, capture_output=True, text=True, timeout=120, env=clean_env(), cwd=REPO
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (line,) = done.stdout.splitlines()
    summary = json.loads(line)
    assert summary["bots"] == ["human", "rules", "rules", "rules"]
    assert (summary["human_seat"], summary["players"], summary["rounds"]) == (0, 4, 6)
    assert sorted(summary["ranks"])[0] == 1 and summary["actions"] == 4 * 14 * 6
    assert done.stderr.count("your move> 1\n") == 14 * 6


def test_the_person_sits_where_seat_says_and_the_table_names_them() -> None:
    done = play_piped(
        "golden10", "--human", "--seat", "2", "--bots", "random,rules", "--option", "rounds=1",
        lines="1\n" * 100,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "you are seat 2; seat 0 random, seat 1 rules" in done.stdout
    assert "seat 0 (random) plays" in done.stdout and "seat 1 (rules) plays" in done.stdout
    result = done.stdout.split("Game over.\n", 1)[1]
    assert "Golden 10 — 3 players" in result and "     2  human" in result, result


def test_end_of_input_mid_game_stops_in_one_line_with_status_3() -> None:
    done = play_piped("golden10", "--human", "--players", "3", "--json", lines="1\n1\n")
    assert done.returncode == 3
    assert done.stdout == ""
    assert done.stderr.endswith(
        "your move> \narena play: stopped by end of input in round 1; the game is left unfinished\n"
    )
    assert "Traceback" not in done.stderr


def test_ctrl_c_while_the_person_thinks_stops_in_one_line_with_status_130() -> None:
    process = subprocess.Popen(
        [*ARENA, "play", "goodge", "--human", "--players", "3"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=clean_env(),
        cwd=REPO,
    )
    assert process.stdin and process.stdout and process.stderr
    try:
        shown = read_until(process.stdout.fileno(), b"your move> ", 60)
        assert shown.endswith(b"your move> "), shown[-500:]
        process.send_signal(signal.SIGINT)
        assert wait_exit(process) == 130
    finally:
        if process.poll() is None:
            process.kill()
        process.stdin.close()
    errors = process.stderr.read().decode()
    process.stdout.close()
    process.stderr.close()
    assert errors == "arena play: stopped by Ctrl-C in round 1; the game is left unfinished\n"


def test_goof_at_a_terminal_waits_when_the_tick_runs_out_and_takes_a_typed_move() -> None:
    terminal, seat = pty.openpty()
    process = subprocess.Popen(
        [*ARENA, "play", "goof", "--human", "--players", "2", "--tick-s", "0.2"],
        stdin=seat,
        stdout=seat,
        stderr=seat,
        env=clean_env(),
        cwd=REPO,
    )
    os.close(seat)
    try:
        shown = read_until(terminal, b"(no move in 0.2 s: wait)", 60)
        assert b"(no move in 0.2 s: wait)" in shown, shown[-500:]
        # The prompt's line is closed before the notice.
        assert b"your move> \r\n(no move in 0.2 s: wait)" in shown
        os.write(terminal, b"turn\n")
        shown = read_until(terminal, b"you: turn", 30)
        assert b"you: turn" in shown, shown[-800:]
        process.send_signal(signal.SIGINT)
        shown = read_until(terminal, b"unfinished", 30)
        assert wait_exit(process) == 130
    finally:
        if process.poll() is None:
            process.kill()
        os.close(terminal)
    assert b"arena play: stopped by Ctrl-C in round 1; the game is left unfinished" in shown


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("golden10", "--seat", "1"), "--seat and --tick-s are for --human"),
        (("golden10", "--human", "--players", "4", "--seat", "4"), "--seat 4 is not a seat of 4"),
        (
            ("golden10", "--human", "--players", "4", "--bots", "rules,random"),
            "--bots names 2 bots for the 3 seats beside yours of 4 players",
        ),
        (("goof", "--human", "--tick-s", "0"), "--tick-s must be above 0"),
        (("goodge", "--human", "--players", "5"), "3 to 4 players"),
    ],
)
def test_bad_flags_are_one_line_errors(args: tuple[str, ...], message: str) -> None:
    done = arena("play", *args)
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.splitlines()) == 1, done.stderr
