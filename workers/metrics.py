"""The workers' Prometheus metrics, and serving them on /metrics.

Each app has its own registry (several apps may live in one test process).
A prefork worker's tasks run in child processes: then prometheus_client's
multiprocess mode is used (PROMETHEUS_MULTIPROC_DIR, set by `arena worker`),
each child writes its values to files there, and the main process serves
the sum of them.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import prometheus_client
from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client import multiprocess as prom_multiprocess
from prometheus_client import values as prom_values

log = logging.getLogger(__name__)

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"

DURATION_BUCKETS = (0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600)


def multiprocess_mode() -> bool:
    """Whether metric values go to files shared between processes."""
    return bool(os.environ.get(MULTIPROC_ENV))


def use_multiprocess_values() -> None:
    """Make metrics created from now on use the multiprocess file values.

    prometheus_client picks its value class when first imported; a worker
    that turns multiprocess mode on later (the `arena` command imports it
    before it knows the pool) must ask again.
    """
    if multiprocess_mode():
        prom_values.ValueClass = prom_values.get_value_class()  # type: ignore[no-untyped-call]


class WorkerMetrics:
    """Task counts and durations, matches recorded, rating updates."""

    def __init__(self) -> None:
        use_multiprocess_values()
        self.registry = CollectorRegistry()
        self.tasks = Counter(
            "arena_worker_tasks",
            "Celery tasks run, by task name and final state (SUCCESS, FAILURE, RETRY, ...)",
            ["task", "state"],
            registry=self.registry,
        )
        self.task_failures = Counter(
            "arena_worker_task_failures",
            "Celery tasks that raised, by task name and exception type",
            ["task", "exception"],
            registry=self.registry,
        )
        self.task_duration = Histogram(
            "arena_worker_task_duration_seconds",
            "How long a Celery task ran, by task name",
            ["task"],
            buckets=DURATION_BUCKETS,
            registry=self.registry,
        )
        self.matches_recorded = Counter(
            "arena_matches_recorded",
            "Match results recorded to the ladder (each match once), by ladder",
            ["ladder"],
            registry=self.registry,
        )
        self.rating_updates = Counter(
            "arena_rating_updates",
            "Live Elo rating changes written, by ladder",
            ["ladder"],
            registry=self.registry,
        )
        self.tournaments_finished = Counter(
            "arena_tournaments_finished",
            "Tournaments whose table was computed",
            registry=self.registry,
        )

    def serving_registry(self) -> CollectorRegistry:
        """What /metrics shows: this registry, or every process's files in multiprocess mode."""
        if multiprocess_mode():
            registry = CollectorRegistry()
            prom_multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
            return registry
        return self.registry

    def serve(self, host: str, port: int) -> Any:
        """Serve /metrics on host:port from a daemon thread; a port already taken is an
        error that names it (a second worker on one machine needs another port)."""
        try:
            server = prometheus_client.start_http_server(
                port, addr=host, registry=self.serving_registry()
            )
        except OSError as error:
            raise ValueError(
                f"cannot serve metrics on {host}:{port}: {error.strerror or error} "
                "(another worker has it? --metrics-port for another, 0 for none)"
            ) from None
        log.info("worker metrics on %s:%d/metrics", host, port)
        return server


def process_exited(pid: int) -> None:
    """Forget a finished child's live gauges (multiprocess mode only)."""
    if multiprocess_mode():
        prom_multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]
