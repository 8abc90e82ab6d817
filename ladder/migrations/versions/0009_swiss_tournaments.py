"""Swiss tournaments: a tournament's format, its rounds, and each planned match's round

A tournament is a round robin (`tournaments.format` "round_robin", every
match planned at the start, all in round 1) or a Swiss tournament ("swiss":
`rounds` rounds, the first seated by `seeding`, "draw" or "rating"; the
round being played is `round`, and the next round is planned once it is
recorded, fenced by one conditional UPDATE of `round`). Each planned match
says its round (`tournament_matches.round`).

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-04 19:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tournaments") as batch:
        batch.add_column(
            sa.Column("format", sa.String(16), nullable=False, server_default="round_robin")
        )
        batch.add_column(sa.Column("rounds", sa.Integer(), nullable=False, server_default="1"))
        batch.add_column(sa.Column("round", sa.Integer(), nullable=False, server_default="1"))
        batch.add_column(sa.Column("seeding", sa.String(16), nullable=True))
    with op.batch_alter_table("tournament_matches") as batch:
        batch.add_column(sa.Column("round", sa.Integer(), nullable=False, server_default="1"))


def downgrade() -> None:
    with op.batch_alter_table("tournament_matches") as batch:
        batch.drop_column("round")
    with op.batch_alter_table("tournaments") as batch:
        batch.drop_column("seeding")
        batch.drop_column("round")
        batch.drop_column("rounds")
        batch.drop_column("format")
