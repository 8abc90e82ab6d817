"""Presence by session: a bot is offline only when its newest session closes

`bots.presence_session` is the session the bot's `online` was last set by
(an opening, or a renewal of a bot that read offline). The closing of
another session (in a tier, the old session of a bot that moved, closed
after the new one opened) leaves the bot online.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-07 01:10:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("bots") as batch:
        batch.add_column(sa.Column("presence_session", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("bots") as batch:
        batch.drop_column("presence_session")
