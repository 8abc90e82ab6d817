"""A user's mistake is one line on stderr, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.processes import Processes, arena, clean_env
from tests.support.referee import launch_referee
from tests.support.services import postgres_schema

ARENA_PLAY = [sys.executable, "-m", "arena_cli.main", "play", "goof", "--players", "8"]


def test_a_url_the_store_cannot_open_is_a_usage_error(tmp_path: Path) -> None:
    done = arena("migrate", "--db", "mysql://root@localhost/arena", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "arena migrate: error: argument --db: 'mysql://root@localhost/arena' is not a database "
        "URL the store opens: sqlite:///FILE or postgresql://USER@HOST[:PORT]/DATABASE"
    )


def test_a_database_that_does_not_exist_is_one_line(tmp_path: Path) -> None:
    done = arena("migrate", "--db", "postgresql://postgres@127.0.0.1:5432/no_such_db", cwd=tmp_path)
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith("arena migrate: cannot use the database: ")
    assert line.endswith("(see --db)")


def test_a_postgres_url_as_libpq_writes_it_is_accepted(tmp_path: Path) -> None:
    with postgres_schema() as url:
        # The tests' URL names the driver; a user's often does not, or says postgres://.
        plain = url.replace("postgresql+psycopg://", "postgres://")
        done = arena("migrate", "--db", plain, cwd=tmp_path)
        assert done.returncode == 0, done.stderr


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    # The reader is gone before the game is played: the write of its result fails.
    reader = subprocess.Popen(["true"], stdin=subprocess.PIPE)
    reader.wait(timeout=60)
    assert reader.stdin is not None
    writer = subprocess.run(
        [*ARENA_PLAY, "--json"],
        stdout=reader.stdin,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        env=clean_env(),
        cwd=tmp_path,
    )
    reader.stdin.close()
    assert writer.returncode == 0, writer.stderr
    assert writer.stderr == ""


def test_tokens_the_referee_does_not_take_are_one_line_that_says_which(tmp_path: Path) -> None:
    procs = Processes(tmp_path)
    try:
        referee = launch_referee(tmp_path, procs, "--admin-token", "the-admin-token")
        address = ("--referee", referee.address)
        unknown = arena("bot", "run", "rules", "--token", "arena_" + "x" * 43, *address)
        assert unknown.returncode == 2 and unknown.stderr.count("\n") == 1, unknown.stderr
        assert "this referee does not know this token" in unknown.stderr
        for token in ((), ("--admin-token", "a-wrong-token")):
            refused = arena("match", "run", "--game", "goof", "--bots", "a,b", *address, *token)
            assert refused.returncode == 1 and refused.stderr.count("\n") == 1, refused.stderr
            assert "PERMISSION_DENIED" in refused.stderr and "--admin-token" in refused.stderr
            said = "this is not the admin token" if token else "no token was given"
            assert said in refused.stderr
        referee.channel.close()
    finally:
        procs.close()
