"""Fixtures shared by every test package."""

from __future__ import annotations

import shutil
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.services import RedisServer, service_missing

# The Ctrl-C tests send SIGINT to the programs they start, as a terminal does. A test run
# started as a background job of a script starts with SIGINT ignored, and its children
# would inherit that (a program keeps an ignored SIGINT ignored): they get it handled, so
# each child starts with SIGINT's default, as from a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server of this test's own (stopped when it ends)."""
    if shutil.which("redis-server") is None:
        service_missing("redis-server is not installed")
    server = RedisServer(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()
