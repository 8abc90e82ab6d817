"""`arena compare`, run as a user runs it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

from tests.support.processes import arena as run_arena
from tests.support.processes import on_a_terminal, read_until


def arena(*args: str) -> subprocess.CompletedProcess[str]:
    return run_arena("compare", *args, timeout_s=300)


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
    assert all(row["games"] == 18 for row in table)
    # Two copies of one bot overlap; random, last in every game, has no
    # rating, only a bound below both.
    rules, rules2, random = (
        next(r for r in table if r["bot"] == b) for b in ("rules", "rules#2", "random")
    )
    for row in (rules, rules2):
        assert row["measured"] and row["ci_low"] < row["rating"] < row["ci_high"]
    assert rules["ci_low"] < rules2["ci_high"] and rules2["ci_low"] < rules["ci_high"]
    assert (random["measured"], random["bound"], random["ci_low"]) == (False, "below", None)
    assert random["ci_high"] == random["rating"] < min(rules["rating"], rules2["rating"])
    # Per pair, what duplicate play saved on the variance of their difference.
    pairs = {(pair["a"], pair["b"]): pair["duplicate_variance_ratio"] for pair in report["pairs"]}
    assert set(pairs) == {("rules", "rules#2")}  # random is not measured
    assert all(ratio > 0 for ratio in pairs.values())


def test_an_entrant_always_last_is_shown_unmeasured_with_its_reason() -> None:
    done = arena("goodge", "--bots", "random,rules,rules,rules", "--deals", "6", "--jobs", "2")
    assert done.returncode == 0, done.stderr
    last = done.stdout.splitlines()[-1]
    bound = last.split(" | ")[1]
    assert last.startswith("| random | below ") and int(bound.removeprefix("below ")) < 1500
    assert "not measured: behind every measured entrant in all 24 of its games" in last


def test_search_playouts_reproduce_byte_for_byte() -> None:
    args = ("golden10", "--bots", "search,rules,random", "--deals", "2", "--jobs", "2")
    args += ("--option", "rounds=1", "--search-playouts", "3", "--json")
    first, second = arena(*args), arena(*args)
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    report = json.loads(first.stdout)
    assert (report["search_playouts"], report["search_budget_s"]) == (3, None)


def test_markdown_table_says_what_was_played() -> None:
    done = arena("golden10", "--bots", "rules,random,random", "--deals", "1", "--first-seed", "7")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "golden10, 3 players: 1 deal from seed 7, 3 games"
    assert done.stderr.strip().startswith("3 games in")
    assert lines[2:4] == ["| bot | rating | 95% interval | games |", "| --- | --- | --- | --- |"]
    assert {line.split(" | ")[0] for line in lines[4:]} == {"| rules", "| random", "| random#2"}


def test_bad_input_is_a_usage_error() -> None:
    for args, message in (
        (("golden10", "--bots", "rules,rules"), "3 to 7 players, not 2"),
        (("golden10", "--bots", "rules,nope,rules"), "no reference bot called 'nope'"),
        (("golden10", "--bots", "rules,rules,rules", "--deals", "0"), "at least 1"),
        (("goodge", "--bots", "rules,rules,rules", "--option", "nope=1"), "nope"),
        (("goodge", "--bots", "rules,rules,rules", "--search-budget", "-1"), "positive"),
        (("goodge", "--bots", "rules,rules,rules", "--search-playouts", "0"), "at least 1"),
    ):
        done = arena(*args)
        assert done.returncode == 2, (args, done.stdout)
        assert message in done.stderr, (args, done.stderr)


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
