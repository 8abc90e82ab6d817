"""The standings web app (FastAPI): pages and a JSON API over the ladder's store.

`create_app(store)` builds the app; `arena web` serves it with uvicorn.
"""

from __future__ import annotations

from ladder.web.app import create_app

__all__ = ["create_app"]
