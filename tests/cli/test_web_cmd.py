"""`arena web`'s flags: the JSON API's bounds."""

from __future__ import annotations

import subprocess
import sys

from arena_cli import web_cmd
from ladder.web import security


def test_the_cli_defaults_are_the_webs() -> None:
    assert web_cmd.DEFAULT_API_RATE == security.API_RATE
    assert web_cmd.DEFAULT_API_BURST == security.API_BURST


def test_a_bad_bound_is_a_usage_error() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "arena_cli.main", "web", "--api-rate", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "--api-rate must be positive" in done.stderr
