"""`make_app`: a Celery app for the arena, with its tasks registered."""

from __future__ import annotations

from workers import tasks
from workers.celery_app import ArenaCelery, new_app
from workers.settings import WorkerSettings


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
