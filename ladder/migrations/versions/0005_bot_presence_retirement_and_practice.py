"""bot presence, retirement and practice results

A bot version is seen by the referee while it holds a session (`last_seen_at`,
renewed while connected; `online` cleared when its last session closes), can
be retired (hidden from standings and pairing, its history kept), and its
first ladder matches are practice: recorded but not rated (`results.practice`).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 20:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("bots") as batch:
        batch.add_column(sa.Column("last_seen_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(
            sa.Column("online", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("retired_at", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("results") as batch:
        batch.add_column(
            sa.Column("practice", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    with op.batch_alter_table("results") as batch:
        batch.drop_column("practice")
    with op.batch_alter_table("bots") as batch:
        batch.drop_column("retired_at")
        batch.drop_column("online")
        batch.drop_column("last_seen_at")
