"""`arena web`'s flags: the JSON API's bounds."""

from __future__ import annotations

import subprocess
import sys


def test_a_bad_bound_is_a_usage_error() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "arena_cli.main", "web", "--api-rate", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "--api-rate must be positive" in done.stderr
