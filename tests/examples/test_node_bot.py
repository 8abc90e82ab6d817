"""examples/node: the Node.js starter bot plays every game on a real referee (npm, node)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None, reason="needs Node.js and npm"
)

TABLES = [
    ("goodge", 4, []),  # what `make example-node` plays
    ("golden10", 3, ["rounds=1"]),
    ("goof", 2, ["rounds=1", "goof_pile=4"]),  # ticks: every seat answers at once
]


@pytest.mark.parametrize(("game", "players", "options"), TABLES, ids=[t[0] for t in TABLES])
def test_the_node_bot_finishes_a_match_without_a_strike(
    game: str, players: int, options: list[str]
) -> None:
    command = [sys.executable, "-m", "tools.example_node", "--game", game]
    command += ["--players", str(players)]
    for option in options:
        command += ["--option", option]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    match = json.loads(done.stdout)
    assert match["status"] == "finished" and match["forfeits"] == []
    assert len(match["bots"]) == players
    # The bot logs each match end, read from the typed result.
    assert f"match {match['match_id']} ended" in done.stderr
    assert "strike in match" not in done.stderr, done.stderr[-2000:]
