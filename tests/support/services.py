"""Real services (Redis, PostgreSQL) that a test may need.

A test that needs a service it cannot reach is skipped, unless
ARENA_REQUIRE_SERVICES=1 (CI), in which case it fails: a missing service
must not pass silently where it is supposed to be there. `RedisServer` is a
redis-server of a test's own (so it can be stopped and started without
touching anyone else's).
"""

from __future__ import annotations

import os
import signal
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn
from urllib.parse import quote

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import OperationalError

from tests.support.processes import free_port, wait_until

REQUIRE_SERVICES = os.environ.get("ARENA_REQUIRE_SERVICES") == "1"

POSTGRES_URL = os.environ.get(
    "ARENA_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
REDIS_URL = os.environ.get("ARENA_TEST_REDIS_URL", "redis://127.0.0.1:6379")


def service_missing(message: str) -> NoReturn:
    """Skip the test because a service is unreachable, or fail under ARENA_REQUIRE_SERVICES=1."""
    if REQUIRE_SERVICES:
        pytest.fail(f"{message} (ARENA_REQUIRE_SERVICES=1)")
    pytest.skip(message)


@contextmanager
def postgres_schema(prefix: str = "arena_test_") -> Iterator[str]:
    """A PostgreSQL URL whose connections use a new, empty schema; dropped afterwards."""
    admin = create_engine(
        POSTGRES_URL, connect_args={"connect_timeout": 3}, isolation_level="AUTOCOMMIT"
    )
    schema = prefix + uuid.uuid4().hex[:12]
    try:
        with admin.connect() as connection:
            connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    except OperationalError as error:
        admin.dispose()
        service_missing(f"PostgreSQL at {POSTGRES_URL} is not reachable: {error.orig}")
    sep = "&" if "?" in POSTGRES_URL else "?"
    try:
        yield f"{POSTGRES_URL}{sep}options={quote(f'-csearch_path={schema}')}"
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


class RedisServer:
    """A redis-server of the test's own on a free port, without persistence."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.workdir = workdir
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        import redis

        self.starts += 1
        log = self.workdir / f"redis-{self.starts}.log"
        with log.open("wb") as out:
            self.proc = subprocess.Popen(
                [
                    "redis-server",
                    "--port",
                    str(self.port),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--dir",
                    str(self.workdir),
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        client = redis.Redis(port=self.port, socket_connect_timeout=1)

        def up() -> bool:
            assert self.proc is not None and self.proc.poll() is None, log.read_text()
            try:
                return bool(client.ping())
            except redis.RedisError:
                return False

        try:
            wait_until(up, 15, f"redis-server on port {self.port}", 0.05)
        finally:
            client.close()

    def shutdown_nosave(self) -> None:
        """`SHUTDOWN NOSAVE`: everything it held is gone."""
        import redis

        assert self.proc is not None
        client = redis.Redis(port=self.port, socket_connect_timeout=1)
        try:
            client.shutdown(nosave=True)
        except redis.ConnectionError:
            pass  # the server closes the connection as it exits
        finally:
            client.close()
        self.proc.wait(10)

    def keys(self) -> int:
        import redis

        client = redis.Redis(port=self.port, socket_connect_timeout=1)
        try:
            return int(client.dbsize())
        finally:
            client.close()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
