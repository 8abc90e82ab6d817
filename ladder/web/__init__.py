"""The standings web app (FastAPI): pages and a JSON API over the ladder's store.

`create_app(store)` builds the app; `arena web` serves it with uvicorn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ladder.web.app import create_app

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    """`create_app`, imported when first asked for: `arena --help` reads only the settings."""
    if name == "create_app":
        from ladder.web.app import create_app

        return create_app
    raise AttributeError(f"module 'ladder.web' has no attribute {name!r}")
