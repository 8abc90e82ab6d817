"""`arena tournament ...` and `arena ladder`: output shapes and errors (in process)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from arena_cli.main import main
from ladder import queries, recording, standings_fit, swiss_rounds, tables, tournaments
from ladder.elo import PROVISIONAL_SE
from ladder.store import Store
from tests.support.ladder import check_order, play, register


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    for name in list(os.environ):
        if name.startswith("ARENA_"):
            monkeypatch.delenv(name)
    return f"sqlite:///{tmp_path / 'arena.db'}"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as stop:
        code = int(stop.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def finished_tournament(db: str) -> tuple[str, list[str]]:
    store = Store(db)
    try:
        bots = [register(store, "cli") for _ in range(4)]
        tid = tournaments.create_tournament(store, "golden10", 3, bots, seed=8)
        for match_id in tournaments.pending_matches(store, tid):
            play(store, match_id)
            assert recording.record_match(store, match_id)
        assert tables.finish_tournament(store, tid)
        return tid, bots
    finally:
        store.close()


def test_tournament_show_json(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    tid, bots = finished_tournament(db)
    code, out, _ = run(capsys, "tournament", "show", tid, "--json", "--db", db)
    assert code == 0
    data = json.loads(out)
    assert set(data) >= {"id", "status", "matches_total", "matches_finished", "table"}
    assert (data["id"], data["status"], data["matches_total"], data["matches_finished"]) == (
        tid,
        "finished",
        4,
        4,
    )
    assert len(data["table"]) == 4
    for line in data["table"]:
        assert set(line) >= {"bot", "rating", "ci_low", "ci_high", "games", "measured", "bound"}
        assert isinstance(line["games"], int)
    store = Store(db)
    try:
        view = queries.tournament(store, tid)
    finally:
        store.close()
    check_order(view.table)
    assert [line["bot_id"] for line in data["table"]] == [line.bot_id for line in view.table]

    code, out, _ = run(capsys, "tournament", "show", tid, "--db", db)
    assert code == 0 and "finished" in out and "95% interval" in out and "4/4" in out

    code, out, _ = run(capsys, "tournament", "list", "--json", "--db", db)
    assert code == 0 and [t["id"] for t in json.loads(out)] == [tid]

    code, out, _ = run(capsys, "tournament", "los", tid, bots[0], bots[1], "--json", "--db", db)
    los = json.loads(out)
    assert code == 0 and set(los) >= {"wins", "draws", "losses", "los", "sprt"}
    assert los["wins"] + los["draws"] + los["losses"] == 2 * 3  # 2 shared matches x 3 games
    code, out, _ = run(capsys, "tournament", "los", tid, bots[0], bots[1], "--db", db)
    assert code == 0 and "likelihood of superiority" in out


def test_ladder_json(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    finished_tournament(db)
    code, out, _ = run(capsys, "ladder", "--json", "--db", db)
    assert code == 0
    lines: list[dict[str, Any]] = json.loads(out)
    assert len(lines) == 4
    for line in lines:
        assert set(line) >= {"rank", "bot", "version", "rating", "se", "elo", "games"}
        assert line["version"] == "1" and line["games"] == 3
        # Not fitted yet: the live Elo ranks, with no error, every rating provisional.
        assert (line["se"], line["rating"], line["provisional"]) == (None, line["elo"], True)
    assert [line["rank"] for line in lines] == [1, 2, 3, 4]
    code, out, _ = run(capsys, "ladder", "golden10-3p", "--json", "--db", db)
    assert code == 0 and json.loads(out) == lines
    code, out, _ = run(capsys, "ladder", "--db", db)
    assert code == 0 and out.startswith("golden10-3p:")
    assert f"provisional: an error above \u00b1 {PROVISIONAL_SE:.0f} Elo" in out

    # Fitted (as the workers do after each result): rating +- error, the live Elo beside.
    store = Store(db)
    try:
        assert standings_fit.refresh_fit(store, "golden10-3p")
    finally:
        store.close()
    code, out, _ = run(capsys, "ladder", "--json", "--db", db)
    fitted: list[dict[str, Any]] = json.loads(out)
    ratings = [line["rating"] for line in fitted]
    assert ratings == sorted(ratings, reverse=True)
    assert {line["bot_id"]: line["elo"] for line in fitted} == {
        line["bot_id"]: line["elo"] for line in lines
    }
    for line in fitted:
        assert line["se"] > 0 and line["provisional"] is (line["se"] > PROVISIONAL_SE)
    code, out, _ = run(capsys, "ladder", "--db", db)
    header, *rows = out.splitlines()[1:5]
    assert header.split() == ["#", "bot", "rating", "\u00b1", "error", "live", "Elo", "rated"]
    for row, line in zip(rows, fitted[:3], strict=True):
        assert row.split()[1:6] == [
            f"{line['bot']}@1",
            f"{line['rating']:.0f}",
            "\u00b1",
            f"{line['se']:.0f}",
            f"{line['elo']:.1f}",
        ]


def test_create_hands_the_tournament_to_the_embedded_broker(
    db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = Store(db)
    bots = [store.register_bot(f"cr{i}", "1", ["goof"])[0] for i in range(3)]
    store.close()
    refs = f"cr0,cr1@1,{bots[2].id}"
    code, out, err = run(
        capsys,
        "tournament",
        "create",
        "--game",
        "goof",
        "--players",
        "3",
        "--bots",
        refs,
        "--db",
        db,
    )
    assert code == 0, err
    tid = out.strip()
    queue = tmp_path / ".arena" / "broker" / "queue"
    assert len(list(queue.glob("*.msg"))) == 1  # create_round_robin, waiting for a worker

    code, out, err = run(
        capsys,
        "tournament",
        "create",
        "--game",
        "goof",
        "--players",
        "3",
        "--bots",
        refs,
        "--schedule",
        "0 3 * * *",
        "--option",
        "rounds=1",
        "--db",
        db,
    )
    assert code == 0, err
    assert len(list(queue.glob("*.msg"))) == 1  # a template: nothing to play now
    code, out, _ = run(capsys, "tournament", "show", out.strip(), "--json", "--db", db)
    assert json.loads(out)["status"] == "scheduled"
    code, out, _ = run(capsys, "tournament", "show", tid, "--json", "--db", db)
    assert json.loads(out)["matches_total"] == 1


def test_a_swiss_tournament_shows_its_rounds_and_standing(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Created by the command line, its first round recorded and the second planned: show
    prints each round's tables and byes and the standing so far; --json has them too; the
    schedule list says a template's format."""
    store = Store(db)
    names = [store.register_bot(f"sw{i}", "1", ["golden10"])[0].name for i in range(6)]
    store.close()
    create = ("tournament", "create", "--game", "golden10", "--players", "4")
    code, out, err = run(
        capsys, *create, "--bots", ",".join(names), "--format", "swiss", "--rounds", "2",
        "--seed", "3", "--db", db,
    )  # fmt: skip
    assert code == 0, err
    tid = out.strip()
    store = Store(db)
    try:
        (first,) = tournaments.pending_matches(store, tid)
        play(store, first)
        assert recording.record_match(store, first)
        (second,) = swiss_rounds.next_round(store, tid)
        seated = [queries.bot_line(store, bot).name for bot in store.match(first).request.bot_ids]
    finally:
        store.close()
    code, out, _ = run(capsys, "tournament", "show", tid, "--json", "--db", db)
    data = json.loads(out)
    assert (data["format"], data["rounds"], data["round"], data["first_round"]) == (
        "swiss", 2, 2, "draw",
    )  # fmt: skip
    assert [r["round"] for r in data["pairings"]] == [1, 2]
    assert data["pairings"][0]["tables"] == [
        {"match_id": first, "bots": seated, "status": "recorded"}
    ]
    assert sorted(data["pairings"][0]["byes"]) == sorted(set(names) - set(seated))
    assert data["pairings"][1]["tables"][0]["match_id"] == second
    assert len(data["pairings"][1]["byes"]) == 2
    assert sorted(line["bot"] for line in data["standings"]) == sorted(names)
    assert {line["games"] for line in data["standings"]} == {0, 4}
    code, out, _ = run(capsys, "tournament", "show", tid, "--db", db)
    assert code == 0
    assert "Swiss: round 2 of 2" in out and "round 1:" in out and "round 2:" in out
    assert f"{first}  recorded  {', '.join(seated)}" in out and "bye: " in out
    assert "standing so far" in out

    code, out, err = run(
        capsys, *create, "--bots", ",".join(names), "--format", "swiss", "--rounds", "3",
        "--schedule", "0 3 * * *", "--seeding", "rating", "--db", db,
    )  # fmt: skip
    assert code == 0, err
    code, out, _ = run(capsys, "schedule", "list", "--db", db)
    assert "Swiss, 3 rounds" in out
    code, out, _ = run(capsys, "schedule", "list", "--json", "--db", db)
    assert [(s["format"], s["rounds"]) for s in json.loads(out)] == [("swiss", 3)]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["tournament", "create", "--game", "goof", "--players", "3", "--bots", "a,b,c"], "no bot"),
        (["tournament", "create", "--game", "chess", "--players", "3", "--bots", "a"], "invalid"),
        (["tournament", "create", "--game", "goof", "--players", "9", "--bots", "a"], "played by"),
        (
            ["tournament", "create", "--game", "goof", "--players", "1", "--bots", "a,b"],
            "played by",
        ),
        (
            [
                *("tournament", "create", "--game", "goof", "--players", "3"),
                *("--bots", "a,b,c", "--schedule", "soon"),
            ],
            "cron",
        ),
        (
            [
                *("tournament", "create", "--game", "goof", "--players", "3", "--bots", "a,b,c"),
                *("--format", "swiss"),
            ],
            "needs --rounds",
        ),
        (
            [
                *("tournament", "create", "--game", "goof", "--players", "3", "--bots", "a,b,c"),
                *("--rounds", "2"),
            ],
            "for a Swiss tournament",
        ),
        (["tournament", "show", "tnope"], "no tournament"),
        (["tournament", "los", "tnope", "a", "b"], "no bot"),
        (["ladder", "goof-9p"], "no ladder"),
    ],
)
def test_errors_exit_2(
    db: str, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, *argv, "--db", db)
    assert code == 2, (out, err)
    assert message in err


def test_help(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["worker"], ["beat"], ["tournament"], ["tournament", "create"], ["ladder"]):
        code, out, _ = run(capsys, *argv, "--help")
        assert code == 0 and "usage: arena" in out
    code, out, _ = run(capsys, "worker", "--help")
    assert "--pool" in out and "threads" in out and "--metrics-port" in out
