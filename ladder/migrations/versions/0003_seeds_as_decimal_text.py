"""seeds as decimal text; whether a tournament's seed was chosen

Seeds are drawn from `secrets` with 128 bits, more than a BIGINT holds;
every seed column keeps the seed's decimal text instead (existing seeds
convert exactly). `tournaments.seed_chosen` tells a seed the operator chose
(deals derive from it) from a drawn one (each match's seed drawn on its own);
existing tournaments count as not chosen, so their next scheduled runs draw
secret seeds.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01 11:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

TABLES = ("matches", "tournaments", "tournament_matches", "games")


def upgrade() -> None:
    with op.batch_alter_table("tournaments") as batch:
        batch.add_column(
            sa.Column("seed_chosen", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    for table in TABLES:
        with op.batch_alter_table(table) as batch:
            batch.alter_column(
                "seed",
                existing_type=sa.BigInteger(),
                type_=sa.String(length=80),
                existing_nullable=False,
                postgresql_using="seed::text",
            )


def downgrade() -> None:
    with op.batch_alter_table("tournaments") as batch:
        batch.drop_column("seed_chosen")
    for table in TABLES:
        with op.batch_alter_table(table) as batch:
            batch.alter_column(
                "seed",
                existing_type=sa.String(length=80),
                type_=sa.BigInteger(),
                existing_nullable=False,
                postgresql_using="seed::bigint",
            )
