"""bench.relay_cost relays requests between two replicas of a tier and prints its figure."""

from __future__ import annotations

import json

import pytest

from bench import relay_cost
from tests.support.services import RedisServer


def test_the_relay_cost_line_counts_the_requests_it_measured(
    redis_server: RedisServer, capsys: pytest.CaptureFixture[str]
) -> None:
    relay_cost.main(["--redis", redis_server.url, "--in-flight", "4", "--requests", "42"])
    line = json.loads(capsys.readouterr().out)
    assert line["requests"] == 40  # whole rounds of 4 at once
    assert line["in_flight"] == 4
    assert line["relay_cpu_us_per_move"] > 0
