"""The example bot of docs/bots.md plays whole local games of every game."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import bots
import games
from bots.local import play_game

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("first_legal", EXAMPLES / "first_legal.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_example_is_at_most_15_lines() -> None:
    assert len((EXAMPLES / "first_legal.py").read_text().splitlines()) <= 15


@pytest.mark.parametrize(
    ("game", "players", "options"),
    [
        ("goodge", 4, {"max_rounds": 5}),
        ("golden10", 5, {}),
        ("goof", 3, {"rounds": 1, "goof_pile": 6}),
    ],
)
@pytest.mark.parametrize("seed", [1, 2])
def test_the_example_bot_plays_a_whole_game(
    game: str, players: int, options: dict[str, object], seed: int
) -> None:
    first_legal = load_example().FirstLegal
    assert issubclass(first_legal, bots.Bot)
    table = [
        first_legal(seed),
        *(bots.reference("random", seed * 10 + i) for i in range(1, players)),
    ]
    # play_game applies each answer through the engine: an illegal one would raise.
    state = play_game(game, table, seed, options)
    assert state.is_over()
    result = state.result()
    assert len(result.scores) == players
    replayed = games.replay(state.log())
    assert replayed.result() == result


def test_arena_play_takes_the_example_as_module_and_class() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(EXAMPLES), *sys.path])}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "arena_cli.main",
            "play",
            "golden10",
            "--bots",
            "first_legal:FirstLegal,random,rules",
            "--seed",
            "4",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["bots"] == ["first_legal:FirstLegal", "random", "rules"]
    assert len(summary["scores"]) == 3
