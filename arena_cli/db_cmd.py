"""`arena migrate`: bring the database to the newest schema."""

from __future__ import annotations

import argparse

from arena_cli.env import add_database
from ladder.store import migrate


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
    migrate(args.db)
    print(f"database at the newest schema: {args.db}")
    return 0
