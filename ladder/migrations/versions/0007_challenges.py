"""challenges: unrated matches one author asks for, and their quotas

A match may be a challenge (`matches.challenger_id`: the author who asked for
it; rated matches have none). Every bot name accepts challenges unless its
author turns them off (`bot_names.challenges`). Each author counts the
challenges of its current hour (`challenges_hour` until `hour_until`, by the
database's clock) and its challenge matches running now
(`challenges_running`), each quota one conditional UPDATE.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-04 18:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("challenger_id", sa.String(32), nullable=True))
        batch.create_index("ix_matches_challenger_id", ["challenger_id"])
    with op.batch_alter_table("bot_names") as batch:
        batch.add_column(
            sa.Column("challenges", sa.Boolean(), nullable=False, server_default=sa.true())
        )
    with op.batch_alter_table("authors") as batch:
        batch.add_column(
            sa.Column("challenges_hour", sa.Integer(), nullable=False, server_default="0")
        )
        batch.add_column(sa.Column("hour_until", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(
            sa.Column("challenges_running", sa.Integer(), nullable=False, server_default="0")
        )


def downgrade() -> None:
    with op.batch_alter_table("authors") as batch:
        batch.drop_column("challenges_running")
        batch.drop_column("hour_until")
        batch.drop_column("challenges_hour")
    with op.batch_alter_table("bot_names") as batch:
        batch.drop_column("challenges")
    with op.batch_alter_table("matches") as batch:
        batch.drop_index("ix_matches_challenger_id")
        batch.drop_column("challenger_id")
