"""The arena's Celery workers: schedule tournaments, ask the referee to play, record results.

`make_app()` builds an app (settings from ARENA_* variables); nothing is
created at import. For `celery -A workers worker` the module attribute
`app` is built on first access, from the environment. The package itself
loads nothing heavy: `workers.settings` is read by `arena --help`, and
Celery is imported with the first of `make_app`, `ArenaCelery` or `app`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workers.celery_app import ArenaCelery
    from workers.factory import make_app
    from workers.settings import WorkerSettings

__all__ = ["ArenaCelery", "WorkerSettings", "make_app"]

_default: ArenaCelery | None = None


def __getattr__(name: str) -> Any:
    """The package's names, each imported when first asked for; `app` built from the environment."""
    global _default
    if name == "make_app":
        from workers.factory import make_app

        return make_app
    if name == "ArenaCelery":
        from workers.celery_app import ArenaCelery

        return ArenaCelery
    if name == "WorkerSettings":
        from workers.settings import WorkerSettings

        return WorkerSettings
    if name == "app":
        if _default is None:
            from workers.factory import make_app

            _default = make_app()
        return _default
    raise AttributeError(f"module 'workers' has no attribute {name!r}")
