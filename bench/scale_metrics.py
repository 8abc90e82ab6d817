"""What bench.scale reads of a referee tier: Prometheus metrics and CPU counters.

`scrape` reads one referee process's /metrics into samples by name and
labels; `total`, `buckets` and `quantile` read counters and histograms off
them. A `Mark` is every counter at one end of a timed window (each referee
process's metrics, then the CPU of the referee, bot, Redis and bench
processes and of the whole machine, from /proc), and a `Window` what the
counters gained between two marks.
"""

from __future__ import annotations

import math
import os
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from arena_cli.processes import CLOCK_TICKS, cpu_seconds

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]
"""Prometheus samples summed over processes, by name and sorted labels."""


def scrape(port: int) -> Samples:
    """One process's metrics, by sample name and labels."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
        text = reply.read().decode("utf-8")
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            key = (sample.name, tuple(sorted(sample.labels.items())))
            samples[key] = samples.get(key, 0.0) + sample.value
    return samples


def scrape_all(ports: list[int]) -> Samples:
    """Every process's metrics, summed."""
    summed: Samples = {}
    for port in ports:
        for key, value in scrape(port).items():
            summed[key] = summed.get(key, 0.0) + value
    return summed


def delta(end: Samples, start: Samples) -> Samples:
    """What the counters and histograms gained between two scrapes (negatives kept)."""
    return {key: end.get(key, 0.0) - start.get(key, 0.0) for key in set(end) | set(start)}


def total(samples: Samples, name: str, **labels: str) -> float:
    """The sum of the samples named `name` whose labels include `labels`."""
    return sum(
        value
        for (sample, have), value in samples.items()
        if sample == name and labels.items() <= dict(have).items()
    )


def buckets(samples: Samples, histogram: str, **labels: str) -> list[tuple[float, float]]:
    """A histogram's cumulative buckets (upper bound, count), summed over other labels."""
    counts: dict[float, float] = {}
    for (sample, have), value in samples.items():
        named = dict(have)
        if sample == f"{histogram}_bucket" and labels.items() <= named.items():
            bound = float(named["le"])
            counts[bound] = counts.get(bound, 0.0) + value
    return sorted(counts.items())


def quantile(cumulative: list[tuple[float, float]], q: float) -> float | None:
    """The q-quantile, interpolated linearly within its bucket (as Prometheus does); None if empty.

    In the +Inf bucket it is the highest finite bound: all the histogram knows.
    """
    if not cumulative or cumulative[-1][1] <= 0:
        return None
    rank = q * cumulative[-1][1]
    lower, below = 0.0, 0.0
    for upper, count in cumulative:
        if count >= rank:
            if math.isinf(upper):
                return lower
            inside = count - below
            return lower + (upper - lower) * ((rank - below) / inside if inside > 0 else 1.0)
        lower, below = upper, count
    return lower


def ms(seconds: float | None) -> float | None:
    """Seconds to milliseconds, rounded; None stays None."""
    return None if seconds is None else round(seconds * 1000, 3)


def machine_busy_seconds() -> tuple[float, float]:
    """CPU seconds the machine was busy and in all, over every core (first line of /proc/stat)."""
    fields = [int(word) for word in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    every = sum(fields[:8])  # guest time is already inside user and nice
    idle = fields[3] + fields[4]  # idle and iowait
    return (every - idle) / CLOCK_TICKS, every / CLOCK_TICKS


@dataclass(frozen=True)
class Mark:
    """The counters at one end of the window."""

    at: float
    metrics: list[Samples]
    """Per referee process, in port order."""
    referee_cpu_s: float
    bots_cpu_s: float
    redis_cpu_s: float
    client_cpu_s: float
    machine: tuple[float, float]
    """Busy and all CPU seconds of the machine."""

    @classmethod
    def take(cls, ports: list[int], referee: list[int], bots: list[int], redis: int) -> Mark:
        """Scrape every process's metrics, then read the CPU counters."""
        # Metrics first, CPU right after: a few ms apart, against a window of seconds.
        return cls(
            at=time.monotonic(),
            metrics=[scrape(port) for port in ports],
            referee_cpu_s=sum(cpu_seconds(pid) for pid in referee),
            bots_cpu_s=sum(cpu_seconds(pid) for pid in bots),
            redis_cpu_s=cpu_seconds(redis),
            client_cpu_s=cpu_seconds(os.getpid()),
            machine=machine_busy_seconds(),
        )


@dataclass
class Window:
    """What one timed window measured."""

    replicas: int
    elapsed_s: float
    moves: float
    moves_by_process: list[float]
    referee_cpu_s: float
    bots_cpu_s: float
    redis_cpu_s: float
    client_cpu_s: float
    machine_busy_s: float
    machine_total_s: float
    mean_running: float
    finished: int
    metrics: Samples
    """All processes' gains over the window, summed."""

    @classmethod
    def between(
        cls, replicas: int, game: str, start: Mark, end: Mark, finished: int, running: float
    ) -> Window:
        """The gains from `start` to `end`."""
        gains = [
            delta(after, before) for after, before in zip(end.metrics, start.metrics, strict=True)
        ]
        summed: Samples = {}
        for gained in gains:
            for key, value in gained.items():
                summed[key] = summed.get(key, 0.0) + value
        return cls(
            replicas=replicas,
            elapsed_s=end.at - start.at,
            moves=total(summed, "arena_moves_total", game=game),
            moves_by_process=[total(gained, "arena_moves_total", game=game) for gained in gains],
            referee_cpu_s=end.referee_cpu_s - start.referee_cpu_s,
            bots_cpu_s=end.bots_cpu_s - start.bots_cpu_s,
            redis_cpu_s=end.redis_cpu_s - start.redis_cpu_s,
            client_cpu_s=end.client_cpu_s - start.client_cpu_s,
            machine_busy_s=end.machine[0] - start.machine[0],
            machine_total_s=end.machine[1] - start.machine[1],
            mean_running=running,
            finished=finished,
            metrics=summed,
        )
