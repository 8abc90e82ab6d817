"""`arena bot list|retire`, `arena tournament cancel|list|show --watch`, `arena schedule
list|cancel` and `arena ladder` in a subprocess, on a SQLite file, as an organiser types them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

from ladder import recording, tables, tournaments
from ladder.store import Seen, Store
from tests.support.ladder import play
from tests.support.processes import PYTHON, REPO, arena, clean_env, wait_until

WATCH = ("--interval", "0.2")


def _opened_database(proc: subprocess.Popen[str]) -> bool:
    """Whether the process holds the SQLite file open: its store is made, it is watching."""
    assert proc.poll() is None, "the watcher ended early"
    for fd in Path(f"/proc/{proc.pid}/fd").iterdir():
        try:
            if os.readlink(fd).endswith("arena.db"):
                return True
        except FileNotFoundError:
            continue  # closed between the listing and the look: the process is starting up
    return False


def _db(tmp_path: Path) -> tuple[str, Store]:
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    return url, Store(url)


def test_bot_list_and_retire_by_name(tmp_path: Path) -> None:
    url, store = _db(tmp_path)
    first, _ = store.register_bot("alice", "1", ["goodge"])
    second, _ = store.register_bot("alice", "2", ["goodge", "goof"])
    store.register_bot("a-very-long-bot-name-indeed", "1", ["goof"])
    store.mark_seen({second.id: "s1"}, Seen.OPENED)
    listed = json.loads(arena("bot", "list", "--json", "--db", url).stdout)
    assert [(bot["name"], bot["version"], bot["online"]) for bot in listed] == [
        ("a-very-long-bot-name-indeed", "1", False),
        ("alice", "2", True),
        ("alice", "1", False),
    ]
    text = arena("bot", "list", "--db", url).stdout.splitlines()
    assert text[0].split() == ["name", "version", "games", "state", "last", "seen", "id"]
    # Aligned: every row's id starts in the header's id column.
    column = text[0].index("id")
    assert [line[column:].split()[0] for line in text[1:]] == [b["id"] for b in listed]
    assert "online" in text[2] and "s ago" in text[2] and "never" in text[3]

    done = arena("bot", "retire", "alice", "--db", url)
    assert done.returncode == 0 and f"alice@2 ({second.id})" in done.stdout
    assert [bot["id"] for bot in json.loads(arena("bot", "list", "--json", "--db", url).stdout)][
        1:
    ] == [first.id]
    everything = json.loads(arena("bot", "list", "--all", "--json", "--db", url).stdout)
    assert {bot["id"]: bot["retired"] for bot in everything}[second.id] is True
    assert arena("bot", "retire", "alice@2", "--undo", "--db", url).returncode == 0
    assert len(json.loads(arena("bot", "list", "--json", "--db", url).stdout)) == 3
    unknown = arena("bot", "retire", "nobody", "--db", url)
    assert unknown.returncode == 2 and unknown.stderr.count("\n") == 1
    assert "no bot 'nobody'" in unknown.stderr
    store.close()


def test_tournament_and_schedule_cancel(tmp_path: Path) -> None:
    url, store = _db(tmp_path)
    bots = [store.register_bot(f"p{n}", "1", ["golden10"])[0].id for n in range(4)]
    tid = tournaments.create_tournament(store, "golden10", 3, bots, seed=4, duplicate=False)
    template = tournaments.create_tournament(
        store, "golden10", 3, bots, schedule="0 3 * * *", name="nightly"
    )
    schedules = json.loads(arena("schedule", "list", "--json", "--db", url).stdout)
    assert [(s["id"], s["schedule"]) for s in schedules] == [(template, "0 3 * * *")]
    assert schedules[0]["next_run"].endswith("03:00:00+00:00")
    assert "0 3 * * *" in arena("schedule", "list", "--db", url).stdout

    refused = arena("schedule", "cancel", tid, "--db", url)
    assert refused.returncode == 2 and "is not a schedule" in refused.stderr
    done = arena("schedule", "cancel", template, "--db", url)
    assert done.returncode == 0 and "starts no more runs" in done.stdout
    assert json.loads(arena("schedule", "list", "--json", "--db", url).stdout) == []
    assert len(json.loads(arena("schedule", "list", "--all", "--json", "--db", url).stdout)) == 1

    done = arena("tournament", "cancel", tid, "--json", "--db", url)
    assert done.returncode == 0 and len(json.loads(done.stdout)["cancelled_matches"]) == 4
    again = arena("tournament", "cancel", tid, "--db", url)
    assert again.returncode == 2 and "cancelled already" in again.stderr
    listing = arena("tournament", "list", "--db", url).stdout.splitlines()
    assert listing[0].split() == ["id", "ladder", "status", "matches", "name"]
    assert all("cancelled" in line for line in listing[1:])
    store.close()


def test_tournament_show_watch_follows_until_the_end(tmp_path: Path) -> None:
    url, store = _db(tmp_path)
    bots = [store.register_bot(f"w{n}", "1", ["golden10"])[0].id for n in range(3)]
    tid = tournaments.create_tournament(store, "golden10", 3, bots, seed=8, duplicate=False)
    watching = subprocess.Popen(
        [
            PYTHON,
            "-m",
            "arena_cli.main",
            "tournament",
            "show",
            tid,
            "--watch",
            "--json",
            *WATCH,
            "--db",
            url,
        ],
        cwd=REPO,
        env=clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until(lambda: _opened_database(watching), 60, "the watcher to open the database")
        (match_id,) = tournaments.pending_matches(store, tid)
        play(store, match_id)
        assert recording.record_match(store, match_id)
        assert tables.finish_tournament(store, tid)
        out, err = watching.communicate(timeout=120)
    finally:
        watching.kill()
    assert watching.returncode == 0, err
    shown = json.loads(out)
    assert (shown["status"], shown["matches_finished"]) == ("finished", 1)
    store.close()


def test_ctrl_c_stops_watching_at_once_and_shows_the_tournament(tmp_path: Path) -> None:
    url, store = _db(tmp_path)
    bots = [store.register_bot(f"c{n}", "1", ["golden10"])[0].id for n in range(3)]
    tid = tournaments.create_tournament(store, "golden10", 3, bots, seed=8, duplicate=False)
    store.close()
    log = tmp_path / "watch.err"
    with log.open("w") as err:
        watching = subprocess.Popen(
            [PYTHON, "-m", "arena_cli.main", "tournament", "show", tid, "--watch", "--db", url],
            cwd=REPO,
            env=clean_env(),
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
        try:
            wait_until(lambda: "Ctrl-C stops watching" in log.read_text(), 60, "watching")
            watching.send_signal(signal.SIGINT)
            out, _ = watching.communicate(timeout=30)
        finally:
            watching.kill()
    assert watching.returncode == 0
    assert f"tournament {tid}" in out and "matches: 0/1 recorded" in out
    assert "stopped watching" in log.read_text()
