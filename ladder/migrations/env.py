"""Alembic environment: the URL comes from the caller (ladder.store.migrate)."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from ladder.models import Base

config = context.config
url = config.attributes.get("url") or config.get_main_option("sqlalchemy.url")
if not url:
    raise RuntimeError("no database URL: call ladder.store.migrate(url)")

engine = create_engine(url)
with engine.connect() as connection:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=url.startswith("sqlite"),
    )
    with context.begin_transaction():
        context.run_migrations()
    connection.commit()
engine.dispose()
