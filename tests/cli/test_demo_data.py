"""`arena demo --data DIR`: it deletes only what an earlier demo made, and draws secret seeds."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena_cli import demo, demo_run
from arena_cli.main import build_parser
from ladder import tournaments

ARENA = [sys.executable, "-m", "arena_cli.main"]


def test_a_missing_folder_is_made_and_marked(tmp_path: Path) -> None:
    data = tmp_path / "new" / "demo"
    demo.prepare_data(data)
    assert sorted(path.name for path in data.iterdir()) == [demo.MARKER, "logs"]


def test_an_empty_folder_is_used(tmp_path: Path) -> None:
    demo.prepare_data(tmp_path)
    assert (tmp_path / demo.MARKER).is_file() and (tmp_path / "logs").is_dir()


def test_an_earlier_demos_folder_loses_the_demos_things_only(tmp_path: Path) -> None:
    data = tmp_path / "demo"
    demo.prepare_data(data)
    for name in ("arena.db", "arena.db-wal", "arena.db-shm", "logs/referee.log"):
        (data / name).write_text("old run")
    (data / ".arena" / "broker").mkdir(parents=True)
    (data / ".arena" / "results.db").write_text("old run")
    (data / "notes.txt").write_text("mine")
    demo.prepare_data(data)
    assert sorted(path.name for path in data.iterdir()) == [demo.MARKER, "logs", "notes.txt"]
    assert list((data / "logs").iterdir()) == []
    assert (data / "notes.txt").read_text() == "mine"


def test_a_link_in_an_earlier_demos_folder_is_removed_not_followed(tmp_path: Path) -> None:
    data, elsewhere = tmp_path / "demo", tmp_path / "elsewhere"
    demo.prepare_data(data)
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("mine")
    (data / "logs").rmdir()
    (data / "logs").symlink_to(elsewhere)
    demo.prepare_data(data)
    assert (data / "logs").is_dir() and not (data / "logs").is_symlink()
    assert (elsewhere / "keep.txt").read_text() == "mine"


@pytest.mark.parametrize("kind", ["folder", "file"])
def test_anything_else_is_refused_untouched(tmp_path: Path, kind: str) -> None:
    data = tmp_path / "mine"
    if kind == "folder":
        data.mkdir()
        (data / "arena.db").write_text("my referee's store")
        before = {"arena.db"}
    else:
        data.write_text("a file, not a folder")
        before = set()
    with pytest.raises(ValueError, match="not an earlier demo's folder"):
        demo.prepare_data(data)
    if kind == "folder":
        assert {path.name for path in data.iterdir()} == before
        assert (data / "arena.db").read_text() == "my referee's store"
    else:
        assert data.read_text() == "a file, not a folder"


def test_the_command_refuses_a_users_folder_with_one_line_and_status_2(tmp_path: Path) -> None:
    data = tmp_path / "mine"
    (data / "photos").mkdir(parents=True)
    (data / "photos" / "cat.jpg").write_bytes(b"\xff\xd8 not really")
    (data / "todo.txt").write_text("buy milk")
    env = {name: value for name, value in os.environ.items() if not name.startswith("ARENA_")}
    done = subprocess.run(
        [*ARENA, "demo", "--data", str(data), "--matches", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("arena demo: error: --data ") and "refusing" in line
    assert sorted(str(path.relative_to(data)) for path in data.rglob("*")) == [
        "photos",
        "photos/cat.jpg",
        "todo.txt",
    ]
    assert (data / "todo.txt").read_text() == "buy milk"
    assert (data / "photos" / "cat.jpg").read_bytes() == b"\xff\xd8 not really"


class FakeApp:
    """Stands in for the Celery app: the tournaments are only created."""

    def enqueue(self, task: str, *args: object) -> None:
        pass

    def close(self) -> None:
        pass


def demo_seeds(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> list[int | None]:
    """The seeds `arena demo ARGV` would create its tournaments with."""
    seeds: list[int | None] = []

    def create_tournament(*args: Any, seed: int | None, **kwargs: Any) -> str:
        seeds.append(seed)
        return f"t{len(seeds)}"

    monkeypatch.setattr(tournaments, "create_tournament", create_tournament)
    monkeypatch.setattr(demo_run, "make_app", lambda settings: FakeApp())
    args: argparse.Namespace = build_parser().parse_args(["demo", *argv])
    ids = demo_run._create_tournaments(None, ["b1", "b2"], args, "sqlite://", None)  # type: ignore[arg-type]
    assert ids == ["t1", "t2", "t3"]
    return seeds


def test_the_demo_draws_secret_seeds_unless_given_one(monkeypatch: pytest.MonkeyPatch) -> None:
    assert demo_seeds(monkeypatch, []) == [None, None, None]
    assert demo_seeds(monkeypatch, ["--seed", "7"]) == [700, 701, 702]
