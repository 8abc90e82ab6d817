"""A match's attempts: an aborted match played again is dealt from a fresh seed

`matches.attempt` counts the times a match was started (1 when stored). Each
restart of an aborted match draws a new secret seed for it, since its bots
saw part of the old deal; a request asking again for a match played again
is compared without its seed (it holds the first attempt's).

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-07 01:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("attempt", sa.Integer(), nullable=False, server_default="1"))


def downgrade() -> None:
    with op.batch_alter_table("matches") as batch:
        batch.drop_column("attempt")
