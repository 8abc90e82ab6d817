"""`arena play` and `arena demo`, run as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.support.processes import ARENA, arena


@pytest.mark.parametrize(
    ("game", "bots"),
    [
        ("goodge", "rules,random,random"),
        ("golden10", "rules,random,random,random,random"),
        ("goof", "rules,random"),
    ],
)
def test_play_json_has_the_documented_keys(game: str, bots: str) -> None:
    done = arena("play", game, "--bots", bots, "--seed", "5", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert set(summary) >= {
        "game",
        "players",
        "seed",
        "options",
        "scores",
        "ranks",
        "rounds",
        "actions",
    }
    players = len(bots.split(","))
    assert summary["game"] == game and summary["players"] == players and summary["seed"] == 5
    assert len(summary["scores"]) == len(summary["ranks"]) == players
    assert 1 in summary["ranks"] and summary["actions"] > 0 and summary["rounds"] >= 1


def test_play_is_repeatable_and_takes_options() -> None:
    first = arena(
        "play",
        "goodge",
        "--players",
        "4",
        "--bots",
        "random",
        "--seed",
        "9",
        "--json",
        "--option",
        "one_high=false",
    )
    second = arena(
        "play",
        "goodge",
        "--players",
        "4",
        "--bots",
        "random",
        "--seed",
        "9",
        "--json",
        "--option",
        "one_high=false",
    )
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    assert json.loads(first.stdout)["options"]["one_high"] is False


def test_play_table_names_every_seat() -> None:
    done = arena("play", "golden10", "--bots", "rules,random,random", "--seed", "2")
    assert done.returncode == 0, done.stderr
    assert (
        "Golden 10" in done.stdout and done.stdout.count("random") == 2 and "rules" in done.stdout
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("play", "goodge", "--players", "5", "--bots", "random"), "3 to 4 players"),
        (("play", "goodge", "--bots", "random,random,nobody"), "no reference bot called 'nobody'"),
        (("play", "golden10", "--players", "3", "--option", "colour=red"), "no option 'colour'"),
        (("play", "golden10", "--players", "3", "--option", "rounds=zero"), "option rounds"),
        (("play", "goof", "--players", "2", "--option", "rounds"), "key=value"),
        (
            ("play", "goodge", "--players", "4", "--bots", "random,random"),
            "--bots names 2 bots for 4",
        ),
    ],
)
def test_bad_input_is_a_clear_error(args: tuple[str, ...], message: str) -> None:
    done = arena(*args)
    assert done.returncode == 2
    assert message in done.stderr


def test_a_bad_environment_value_is_a_usage_error_of_its_command_only() -> None:
    env = {**os.environ, "ARENA_DEADLINE_MS": "soon"}
    referee = subprocess.run(
        [*ARENA, "referee", "--metrics-port", "0"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert referee.returncode == 2
    assert "argument --deadline-ms: invalid int value: 'soon'" in referee.stderr
    play = subprocess.run(
        [*ARENA, "play", "golden10", "--players", "3", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert play.returncode == 0, play.stderr


@pytest.mark.parametrize("game", ["goodge", "golden10", "goof"])
def test_play_with_only_the_game_fills_a_table_of_rules_bots(game: str) -> None:
    done = arena(
        "play", game, "--json", "--option", "rounds=1" if game != "goodge" else "max_rounds=1"
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["bots"] == ["rules"] * 4


def test_play_table_fits_long_bot_names() -> None:
    done = arena("play", "goodge", "--players", "3", "--bots", "bots.random_bot:RandomBot")
    assert done.returncode == 0, done.stderr
    header, *seats = done.stdout.splitlines()[1:]
    score_end = header.index("score") + len("score")
    assert all(row[score_end - 1].isdigit() for row in seats), done.stdout
