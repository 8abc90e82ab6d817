"""match owner and lease

A running match is claimed by the referee replica playing it, until a lease
that replica renews; another replica aborts it only once the lease has
expired. Existing rows have neither (they count as abandoned).

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01 12:20:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("owner", sa.String(length=128), nullable=True))
        batch.add_column(sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("matches") as batch:
        batch.drop_column("lease_until")
        batch.drop_column("owner")
