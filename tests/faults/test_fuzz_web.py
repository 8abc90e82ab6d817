"""Fuzzing the web's JSON API with schemathesis: no operation answers 5xx.

`arena web` runs as a process on a free port over a SQLite database filled
by really playing (tests/web/conftest.py's `fill`: bots, ladder matches,
tournaments, a running and an aborted match). schemathesis reads the app's
/openapi.json and sends each operation bounded numbers of generated
requests, path parameters drawn either at random or from the real ids, with
the "not a server error" check; then requests that break the schema
(negative mode), which must be refused with 4xx, not 5xx. The web's /healthz answers 503 only when its
database is down, which it is not here.
"""

from __future__ import annotations

import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error

from tests.support.arena import Arena, fill
from tests.support.processes import PYTHON, Processes, free_port, wait_until
from tests.support.referee import launch_referee

MAX_EXAMPLES = 50  # per operation, requests that fit the schema
NEGATIVE_EXAMPLES = 25  # per operation, requests that do not (e.g. game=-1)


def _up(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as reply:
            return bool(reply.status == 200)
    except OSError:
        return False


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Arena]]:
    """`arena web` over a filled database: its base URL and what the database holds."""
    workdir: Path = tmp_path_factory.mktemp("fuzz-web")
    arena = fill(f"sqlite:///{workdir / 'arena.db'}")
    procs = Processes(workdir)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    try:
        # A referee of its own database for the live views: it knows none of these
        # matches (404), where a referee that cannot be reached would answer 503.
        (workdir / "referee").mkdir()
        referee = launch_referee(workdir / "referee", procs)
        proc = procs.start(
            "web",
            # A bound far over the fuzzer's pace: every request reaches the handlers.
            [
                PYTHON,
                "-m",
                "arena_cli.main",
                "web",
                "--port",
                str(port),
                "--db",
                arena.url,
                "--api-rate",
                "100000",
                "--api-burst",
                "100000",
                "--referee",
                referee.address,
            ],
        )

        def serving() -> bool:
            assert proc.poll() is None, (workdir / "web.log").read_text(errors="replace")
            return _up(f"{base}/healthz")

        wait_until(serving, 30, "arena web to serve", 0.1)
        yield base, arena
        referee.channel.close()
        Processes.stop(proc)
        log = (workdir / "web.log").read_text(errors="replace")
        assert proc.returncode == 0, log
        assert "Traceback" not in log, log
    finally:
        procs.close()


@pytest.fixture(scope="module")
def web_schema(web: tuple[str, Arena]) -> Any:
    base, arena = web
    schema = schemathesis.openapi.from_url(f"{base}/openapi.json")
    ids = {
        "bot_id": [*arena.bots.values(), *(f"{name}@1" for name in arena.bots)],
        "match_id": [
            *arena.goodge_matches,
            arena.golden10_match,
            arena.goof_match,
            arena.running_match,
            arena.aborted_match,
        ],
        "tournament_id": [arena.tournament, arena.open_tournament],
        "ladder_id": ["goodge-4p", "golden10-4p", "golden10-3p", "goof-3p"],
        "name": ["operator", "OPERATOR", "a-operator"],  # the author of every bot there
    }

    @schema.hook  # type: ignore[untyped-decorator]
    def flatmap_path_parameters(context: Any, path_parameters: dict[str, Any]) -> Any:
        """Half of the time, the path names something that exists."""
        real = {name: st.sampled_from(ids[name]) for name in path_parameters or () if name in ids}
        if not real:
            return st.just(path_parameters)
        return st.one_of(
            st.just(path_parameters), st.fixed_dictionaries(real).map(path_parameters.__or__)
        )

    return schema


def test_no_server_error(web_schema: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """Every generated request to every operation is answered below 500.

    (One test walking the operations: schemathesis' lazy `from_fixture`
    parametrization does not run under pytest 9.)
    """
    failures: dict[str, str] = {}
    statuses: dict[str, Counter[int]] = {}
    operations = [result.ok() for result in web_schema.get_all_operations()]
    assert len(operations) >= 7, [op.label for op in operations]
    for operation, mode, examples in (
        (operation, mode, examples)
        for operation in operations
        for mode, examples in (
            (GenerationMode.POSITIVE, MAX_EXAMPLES),
            (GenerationMode.NEGATIVE, NEGATIVE_EXAMPLES),
        )
    ):

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(
            max_examples=examples,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
        def fuzz(case: Any) -> None:
            response = case.call_and_validate(checks=[not_a_server_error], timeout=30)
            statuses.setdefault(case.operation.label, Counter())[response.status_code] += 1

        try:
            fuzz()
        except Unsatisfiable:
            # No way to break the schema of an operation with no parameter
            # but its path (every string is a valid path segment).
            assert mode is GenerationMode.NEGATIVE, operation.label
        except Exception as error:
            failures[f"{operation.label} ({mode.value})"] = str(error)[:2000]
    with capsys.disabled():
        for label, counts in statuses.items():
            print(
                f"\n{label}: {sum(counts.values())} requests, statuses {dict(sorted(counts.items()))}"
            )
    assert not failures, "\n\n".join(f"{label}:\n{text}" for label, text in failures.items())
