"""The arena's Celery workers: schedule tournaments, ask the referee to play, record results.

`make_app()` builds an app (settings from ARENA_* variables); nothing is
created at import. For `celery -A workers worker` the module attribute
`app` is built on first access, from the environment.
"""

from __future__ import annotations

from typing import Any

from workers import tasks
from workers.celery_app import ArenaCelery, new_app
from workers.settings import WorkerSettings

__all__ = ["ArenaCelery", "WorkerSettings", "make_app"]

_default: ArenaCelery | None = None


def make_app(
    broker_url: str | None = None,
    backend_url: str | None = None,
    *,
    settings: WorkerSettings | None = None,
) -> ArenaCelery:
    """A new Celery app for the arena with its tasks; settings from the environment unless given."""
    if settings is None:
        settings = WorkerSettings.from_env(broker_url=broker_url, backend_url=backend_url)
    elif broker_url or backend_url:
        raise ValueError("give either settings or broker/backend URLs, not both")
    app = new_app(settings)
    tasks.register(app)
    return app


def __getattr__(name: str) -> Any:
    """`workers.app`: the app of this environment, built when first asked for."""
    global _default
    if name == "app":
        if _default is None:
            _default = make_app()
        return _default
    raise AttributeError(f"module 'workers' has no attribute {name!r}")
