"""The Celery app: configuration, per-process resources and signals.

`new_app()` builds a new app each time; nothing is created at import. The
app carries its settings; each process (each prefork child) opens its own
database engine and referee channel the first time a task needs them. The
tasks (`workers.tasks`) import this module, never the other way round:
`workers.make_app()` puts the two together.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from celery import Celery, Task
from celery.signals import (
    beat_init,
    task_failure,
    task_postrun,
    task_prerun,
    worker_init,
    worker_process_init,
    worker_process_shutdown,
)

from ladder.store import Store, migrate
from workers import embedded_broker, redis_broker
from workers.metrics import WorkerMetrics, process_exited
from workers.referee_client import RefereeClient
from workers.settings import WorkerSettings

log = logging.getLogger(__name__)

QUEUE = "arena"


@dataclass
class Resources:
    """What tasks of one process share: the store and the referee channel."""

    pid: int
    store: Store
    referee: RefereeClient

    def close(self) -> None:
        self.referee.close()
        self.store.close()


class ArenaCelery(Celery):
    """A Celery app with the arena's settings, resources and metrics."""

    def __init__(self, settings: WorkerSettings) -> None:
        super().__init__("arena", set_as_current=False)
        self.settings = settings
        self._resources: Resources | None = None
        self._metrics: WorkerMetrics | None = None
        self._lock = threading.Lock()
        self._started: dict[str, float] = {}

    def resources(self) -> Resources:
        """This process's store and referee client (opened on first use, again after a fork)."""
        with self._lock:
            current = self._resources
            if current is None or current.pid != os.getpid():
                current = Resources(
                    pid=os.getpid(),
                    store=Store(self.settings.database_url, upgrade=False),
                    referee=RefereeClient(self.settings.referee, self.settings.admin_token),
                )
                self._resources = current
            return current

    def close_resources(self) -> None:
        """Close this process's store and channel (they are reopened when needed)."""
        with self._lock:
            current, self._resources = self._resources, None
        if current is not None and current.pid == os.getpid():
            current.close()

    @property
    def metrics(self) -> WorkerMetrics:
        """The app's Prometheus metrics (created on first use)."""
        with self._lock:
            if self._metrics is None:
                self._metrics = WorkerMetrics()
            return self._metrics

    def enqueue(self, task: str, *args: Any) -> None:
        """Send a task by name (call only after the transaction it depends on committed)."""
        self.send_task(task, args=list(args), queue=QUEUE)


def broker_transport(settings: WorkerSettings) -> str | None:
    """The kombu transport of the broker (None: kombu's own for the URL's scheme)."""
    if settings.embedded:
        return embedded_broker.TRANSPORT
    url = urlsplit(settings.broker_url)
    # kombu gives a rediss:// URL without TLS settings (ssl_cert_reqs=...) its default
    # ones under its own transport's name only: such a URL keeps that transport.
    if url.scheme == "redis" or (url.scheme == "rediss" and "ssl_" in url.query):
        return redis_broker.TRANSPORT
    return None


def new_app(settings: WorkerSettings) -> ArenaCelery:
    """A configured app with its signals connected, and no tasks yet (`workers.make_app` adds them)."""
    app = ArenaCelery(settings)
    app.conf.update(
        broker_url=settings.broker_url,
        broker_transport=broker_transport(settings),
        broker_transport_options=settings.transport_options(),
        broker_connection_retry_on_startup=True,
        # However long the broker is away, wait for it (at most 30 s between tries)
        # rather than stop after Celery's 100 tries, some 45 minutes.
        broker_connection_max_retries=None,
        result_backend=settings.result_backend(),
        # State lives in the arena's database and nothing reads a task's return value:
        # storing each one cost the worker a write per task. Failures are still kept.
        task_ignore_result=True,
        task_store_errors_even_if_ignored=True,
        # The embedded SQLite result store: wait for a busy database instead of failing.
        database_engine_options={"connect_args": {"timeout": 30}},
        result_expires=24 * 3600,
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        # A match running when the broker goes away plays on and records its result:
        # cancelled (Celery 6's default), it would wait for a redelivery that a Redis
        # restarted empty never makes.
        worker_cancel_long_running_tasks_on_connection_loss=False,
        task_default_queue=QUEUE,
        timezone="UTC",
        enable_utc=True,
        # The embedded transport has no broadcast worth having: no remote control.
        worker_enable_remote_control=not settings.embedded,
        worker_hijack_root_logger=True,
    )
    _connect_signals(app)
    return app


def _connect_signals(app: ArenaCelery) -> None:
    """Metrics and per-process resources, through Celery's signals (for this app only)."""

    def mine(task: Any) -> bool:
        return isinstance(task, Task) and task.app is app

    def on_worker_init(sender: Any = None, **_: Any) -> None:
        if getattr(sender, "app", None) is not app:
            return
        migrate(app.settings.database_url)

    def on_beat_init(sender: Any = None, **_: Any) -> None:
        if getattr(sender, "app", None) is app:
            migrate(app.settings.database_url)

    def on_process_init(**_: Any) -> None:
        # A forked child must not use the parent's connections.
        app._resources = None

    def on_process_shutdown(pid: int | None = None, **_: Any) -> None:
        process_exited(pid or os.getpid())

    def on_prerun(task_id: str = "", task: Any = None, **_: Any) -> None:
        if mine(task):
            app._started[task_id] = time.monotonic()

    def on_postrun(task_id: str = "", task: Any = None, state: str | None = None, **_: Any) -> None:
        if not mine(task):
            return
        started = app._started.pop(task_id, None)
        metrics = app.metrics
        metrics.tasks.labels(task.name, state or "UNKNOWN").inc()
        if started is not None:
            metrics.task_duration.labels(task.name).observe(time.monotonic() - started)

    def on_failure(sender: Any = None, exception: BaseException | None = None, **_: Any) -> None:
        if mine(sender):
            kind = type(exception).__name__ if exception is not None else "unknown"
            app.metrics.task_failures.labels(sender.name, kind).inc()

    worker_init.connect(on_worker_init, weak=False)
    beat_init.connect(on_beat_init, weak=False)
    worker_process_init.connect(on_process_init, weak=False)
    worker_process_shutdown.connect(on_process_shutdown, weak=False)
    task_prerun.connect(on_prerun, weak=False)
    task_postrun.connect(on_postrun, weak=False)
    task_failure.connect(on_failure, weak=False)
