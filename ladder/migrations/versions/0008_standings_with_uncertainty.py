"""standings with uncertainty: each ladder's Plackett-Luce fit of its rated games

Beside each bot's live Elo (`ratings.rating`), the ladder's fit of all its
rated games (`ladder.ladder_fit`) gives the bot a rating on the Elo scale and
its standard error (`ratings.fit_rating`, `ratings.fit_se`; NULL until the
first fit). Each ladder keeps the spread of its field that the last fit
learnt (`ladders.field_sd`, the next fit's prior) and when it was fitted.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-04 18:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("ratings") as batch:
        batch.add_column(sa.Column("fit_rating", sa.Double(), nullable=True))
        batch.add_column(sa.Column("fit_se", sa.Double(), nullable=True))
    with op.batch_alter_table("ladders") as batch:
        batch.add_column(sa.Column("field_sd", sa.Double(), nullable=True))
        batch.add_column(sa.Column("fitted_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("ladders") as batch:
        batch.drop_column("fitted_at")
        batch.drop_column("field_sd")
    with op.batch_alter_table("ratings") as batch:
        batch.drop_column("fit_se")
        batch.drop_column("fit_rating")
