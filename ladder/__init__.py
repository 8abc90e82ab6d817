"""The ladder: the store of bots, matches and replays, and (later) ratings.

`ladder.store` holds the SQLAlchemy models and the `Store` that the referee
and the workers use; the schema changes only through Alembic migrations in
`ladder/migrations`.
"""
