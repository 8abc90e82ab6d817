"""`arena compare`, run as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys

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
