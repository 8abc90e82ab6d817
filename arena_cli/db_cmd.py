"""`arena migrate`, and the database as the other commands open it.

The store (SQLAlchemy, Alembic) is imported when a command runs, so
`arena --help` stays quick.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from arena_cli.env import add_database

if TYPE_CHECKING:
    from ladder.store import Store


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `migrate` on the `arena` parser."""
    parser = commands.add_parser(
        "migrate",
        help="apply the database migrations (Alembic upgrade head)",
        description="Bring the database to the newest schema. Every process also does this when "
        "it starts; run it alone before an upgrade (a Kubernetes Job does).",
    )
    add_database(parser)
    parser.set_defaults(run=run_migrate)


def run_migrate(args: argparse.Namespace) -> int:
    """Migrate and say so."""
    from ladder.store import migrate

    migrate(args.db)
    print(f"database at the newest schema: {args.db}")
    return 0


def open_store(args: argparse.Namespace) -> Store:
    """The store at --db, migrated; a clear error if the database cannot be opened."""
    from sqlalchemy.exc import DBAPIError

    from ladder.store import Store

    try:
        return Store(args.db)
    except DBAPIError as error:
        raise ValueError(f"cannot open the database {args.db}: {error.orig}") from None
