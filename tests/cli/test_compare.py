"""`arena compare`, run as a user runs it."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
import time

ARENA = [sys.executable, "-m", "arena_cli.main"]


def arena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ARENA, "compare", *args], capture_output=True, text=True, timeout=300)


def test_json_table_rates_every_entrant_over_every_rotation() -> None:
    done = arena(
        "goof", "--bots", "random,rules,rules", "--deals", "6", "--jobs", "2", "--json", "--verbose"
    )
    assert done.returncode == 0, done.stderr
    *games_, last = done.stdout.splitlines()
    report = json.loads(last)
    assert (report["game"], report["players"], report["deals"], report["games"]) == (
        "goof",
        3,
        6,
        18,
    )
    # One line per game: every deal once per rotation of the seats.
    deals = [json.loads(line)["deal"] for line in games_]
    assert sorted(deals) == sorted(list(range(1, 7)) * 3)
    table = report["table"]
    assert [row["bot"] for row in table][-1] == "random"
    assert {row["bot"] for row in table} == {"random", "rules", "rules#2"}
    for row in table:
        assert row["ci_low"] < row["rating"] < row["ci_high"]
        assert row["games"] == 18
    # Two copies of one bot overlap; random is far below both.
    rules, rules2, random = (
        next(r for r in table if r["bot"] == b) for b in ("rules", "rules#2", "random")
    )
    assert rules["ci_low"] < rules2["ci_high"] and rules2["ci_low"] < rules["ci_high"]
    assert random["ci_high"] < min(rules["ci_low"], rules2["ci_low"])


def test_markdown_table_says_what_was_played() -> None:
    done = arena("golden10", "--bots", "rules,random,random", "--deals", "1", "--first-seed", "7")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("golden10, 3 players: 1 deals from seed 7, 3 games in")
    assert lines[2:4] == ["| bot | rating | 95% interval | games |", "| --- | --- | --- | --- |"]
    assert {line.split(" | ")[0] for line in lines[4:]} == {"| rules", "| random", "| random#2"}


def test_bad_input_is_a_usage_error() -> None:
    for args, message in (
        (("golden10", "--bots", "rules,rules"), "3 to 7 players, not 2"),
        (("golden10", "--bots", "rules,nope,rules"), "no reference bot called 'nope'"),
        (("golden10", "--bots", "rules,rules,rules", "--deals", "0"), "at least 1"),
        (("goodge", "--bots", "rules,rules,rules", "--option", "nope=1"), "nope"),
        (("goodge", "--bots", "rules,rules,rules", "--search-budget", "-1"), "positive"),
    ):
        done = arena(*args)
        assert done.returncode == 2, (args, done.stdout)
        assert message in done.stderr, (args, done.stderr)


def on_a_terminal(*args: str) -> tuple[subprocess.Popen[bytes], int]:
    """`arena ARGS...` with stderr on a pseudo-terminal (as a user runs it); its fd to read."""
    reader, writer = pty.openpty()
    process = subprocess.Popen(
        [*ARENA, *args], stdout=subprocess.PIPE, stderr=writer, stdin=subprocess.DEVNULL
    )
    os.close(writer)
    return process, reader


def read_until(fd: int, wanted: bytes, timeout_s: float) -> bytes:
    """What the terminal showed until `wanted` appeared (or the time ran out)."""
    seen = b""
    deadline = time.monotonic() + timeout_s
    while wanted not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                seen += os.read(fd, 4096)
            except OSError:  # the process closed the terminal
                break
    return seen


def test_progress_shows_on_a_terminal_and_ctrl_c_prints_what_finished() -> None:
    # Slow deals (the search bot thinks 0.05 s a move), far more than can finish.
    process, terminal = on_a_terminal(
        *("compare", "golden10", "--bots", "search,rules,random", "--deals", "400"),
        *("--search-budget", "0.05", "--option", "rounds=1", "--jobs", "2"),
    )
    try:
        shown = read_until(terminal, b"2/400", 120)
        assert b"golden10 deals" in shown and b"left" in shown, shown[-500:]
        process.send_signal(signal.SIGINT)
        stopped = time.monotonic()
        out, _ = process.communicate(timeout=60)
        # Within a second or so on a quiet machine: the deals being played are terminated.
        assert time.monotonic() - stopped < 15
    finally:
        if process.poll() is None:
            process.kill()
        os.close(terminal)
    assert process.returncode == 130
    text = out.decode()
    assert "(interrupted: the deals that finished)" in text
    assert "| search |" in text and "| rules |" in text, text


def test_no_progress_with_json_even_on_a_terminal() -> None:
    process, terminal = on_a_terminal(
        "compare", "golden10", "--bots", "rules,random,random", "--deals", "3", "--json"
    )
    try:
        out, _ = process.communicate(timeout=120)
        shown = read_until(terminal, b"deals", 1)
    finally:
        os.close(terminal)
    assert process.returncode == 0
    assert b"golden10 deals" not in shown
    assert json.loads(out)["deals"] == 3
