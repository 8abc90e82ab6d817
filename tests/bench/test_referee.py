"""bench.referee's baseline: the bare ping-pong in the bots' shape, one window for all."""

from __future__ import annotations

from pathlib import Path

from bench import referee


def test_the_baseline_spreads_its_streams_over_client_processes_measured_together(
    tmp_path: Path,
) -> None:
    figures = referee.baseline(streams=3, clients=2, size=200, seconds=0.5, workdir=tmp_path)
    # A client that never got its go would hang past the bench's timeout and fail it.
    assert figures["roundtrips_per_s"] > 100
    assert figures["server_cpu_us"] > 0
    assert figures["client_cpu_us"] > 0
    # Two client processes (two streams and one), each with its own log.
    assert sorted(log.name for log in tmp_path.glob("pingpong-client-*.log")) == [
        "pingpong-client-0.log",
        "pingpong-client-1.log",
    ]
