"""The README's walk-through as a new user types it, against real processes: named bots,
a tournament followed to its end, one of its matches watched over the public live stream,
a schedule made and cancelled, a bot retired. No command may print a traceback."""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
from typing import Any

from tests.support.processes import ARENA, free_port, wait_until
from tests.support.processes import arena as run_arena
from tests.support.workers import Arena

GOOF = ("--option", "rounds=1", "--option", "goof_pile=3")


def _cli(arena: Arena, *args: str) -> subprocess.CompletedProcess[str]:
    done = run_arena(*args, "--db", arena.db, timeout_s=300)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, f"arena {' '.join(args)}: {done.stdout}{done.stderr}"
    return done


def _live_events(url: str) -> list[dict[str, Any]] | None:
    """Every event of a match's public stream, or None while the web does not know it yet."""
    try:
        with urllib.request.urlopen(url, timeout=120) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            lines = response.read().decode().splitlines()
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return None
        raise
    return [json.loads(line.removeprefix("data: ")) for line in lines if line.startswith("data: ")]


def test_the_readme_walkthrough(arena: Arena) -> None:
    names = [bot.name for bot in arena.bots(["rules"] * 4, ["goof"])]
    listed = json.loads(_cli(arena, "bot", "list", "--json").stdout)
    assert sorted(bot["name"] for bot in listed if bot["online"]) == sorted(names)

    web_port, referee = free_port(), arena.referee.address
    arena.spawn(
        "web",
        [*ARENA, "web", "--port", str(web_port), "--db", arena.db, "--referee", referee],
    )
    base = f"http://127.0.0.1:{web_port}"

    def web_up() -> bool:
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=5) as response:
                return bool(response.status == 200)
        except OSError:
            return False

    wait_until(web_up, 60, "the web to serve")
    arena.worker("--metrics-port", "0")

    create = ("tournament", "create", "--game", "goof", "--players", "3", "--bots")
    tournament = _cli(arena, *create, ",".join(names), "--deadline-ms", "1000", *GOOF)
    tid = tournament.stdout.strip()
    first = f"{tid}-m0001"
    events = wait_until(lambda: _live_events(f"{base}/api/matches/{first}/live"), 180, "live")
    kinds = [event["type"] for event in events]
    assert kinds[0] == "game_start" and kinds[-1] == "match_end" and "view" in kinds
    assert not {"action", "tick"} & set(kinds)  # moves are seen as public views only

    shown = json.loads(_cli(arena, "tournament", "show", tid, "--watch", "--json").stdout)
    assert (shown["status"], shown["matches_finished"]) == ("finished", 4)
    assert sorted(line["bot"] for line in shown["table"]) == sorted(names)

    template = _cli(arena, *create, ",".join(names), "--schedule", "0 3 * * *", *GOOF)
    template_id = template.stdout.strip()
    schedules = json.loads(_cli(arena, "schedule", "list", "--json").stdout)
    assert [schedule["id"] for schedule in schedules] == [template_id]
    _cli(arena, "schedule", "cancel", template_id)
    assert json.loads(_cli(arena, "schedule", "list", "--json").stdout) == []

    _cli(arena, "bot", "retire", names[0])
    standings = json.loads(_cli(arena, "ladder", "goof-3p", "--json").stdout)
    assert names[0] not in {line["bot"] for line in standings}
    assert len(standings) == 3
