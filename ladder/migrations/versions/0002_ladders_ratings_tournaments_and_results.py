"""ladders, ratings, tournaments and results

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29 16:45:37.621511
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "games",
        sa.Column("match_id", sa.String(length=64), nullable=False),
        sa.Column("game_index", sa.Integer(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("rounds", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("match_id", "game_index"),
    )
    op.create_table(
        "ladders",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("players", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "tournaments",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("players", sa.Integer(), nullable=False),
        sa.Column("entrants", sa.JSON(), nullable=False),
        sa.Column("duplicate", sa.Boolean(), nullable=False),
        sa.Column("deadline_ms", sa.Integer(), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("schedule", sa.String(length=64), nullable=True),
        sa.Column("parent_id", sa.String(length=32), nullable=True),
        sa.Column("table", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("tournaments", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_tournaments_status"), ["status"], unique=False)

    op.create_table(
        "rating_history",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("ladder_id", sa.String(length=32), nullable=False),
        sa.Column("bot_id", sa.String(length=32), nullable=False),
        sa.Column("match_id", sa.String(length=64), nullable=False),
        sa.Column("rating_before", sa.Double(), nullable=False),
        sa.Column("rating_after", sa.Double(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["bot_id"],
            ["bots.id"],
        ),
        sa.ForeignKeyConstraint(
            ["ladder_id"],
            ["ladders.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("ladder_id", "bot_id", "match_id", name="uq_rating_history_once"),
    )
    with op.batch_alter_table("rating_history", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_rating_history_bot_id"), ["bot_id"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_rating_history_ladder_id"), ["ladder_id"], unique=False
        )

    op.create_table(
        "ratings",
        sa.Column("ladder_id", sa.String(length=32), nullable=False),
        sa.Column("bot_id", sa.String(length=32), nullable=False),
        sa.Column("rating", sa.Double(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["bot_id"],
            ["bots.id"],
        ),
        sa.ForeignKeyConstraint(
            ["ladder_id"],
            ["ladders.id"],
        ),
        sa.PrimaryKeyConstraint("ladder_id", "bot_id"),
    )
    op.create_table(
        "results",
        sa.Column("match_id", sa.String(length=64), nullable=False),
        sa.Column("entry", sa.Integer(), nullable=False),
        sa.Column("bot_id", sa.String(length=32), nullable=False),
        sa.Column("ladder_id", sa.String(length=32), nullable=False),
        sa.Column("tournament_id", sa.String(length=32), nullable=True),
        sa.Column("score", sa.Integer(), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.Column("forfeit", sa.Boolean(), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["bot_id"],
            ["bots.id"],
        ),
        sa.ForeignKeyConstraint(
            ["ladder_id"],
            ["ladders.id"],
        ),
        sa.PrimaryKeyConstraint("match_id", "entry"),
    )
    with op.batch_alter_table("results", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_results_bot_id"), ["bot_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_results_ladder_id"), ["ladder_id"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_results_tournament_id"), ["tournament_id"], unique=False
        )

    op.create_table(
        "seats",
        sa.Column("match_id", sa.String(length=64), nullable=False),
        sa.Column("game_index", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("bot_id", sa.String(length=32), nullable=False),
        sa.Column("score", sa.Integer(), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["bot_id"],
            ["bots.id"],
        ),
        sa.PrimaryKeyConstraint("match_id", "game_index", "seat"),
    )
    with op.batch_alter_table("seats", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_seats_bot_id"), ["bot_id"], unique=False)

    op.create_table(
        "tournament_matches",
        sa.Column("match_id", sa.String(length=64), nullable=False),
        sa.Column("tournament_id", sa.String(length=32), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("bot_ids", sa.JSON(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
        ),
        sa.PrimaryKeyConstraint("match_id"),
    )
    with op.batch_alter_table("tournament_matches", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_tournament_matches_tournament_id"), ["tournament_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("tournament_matches", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_tournament_matches_tournament_id"))

    op.drop_table("tournament_matches")
    with op.batch_alter_table("seats", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_seats_bot_id"))

    op.drop_table("seats")
    with op.batch_alter_table("results", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_results_tournament_id"))
        batch_op.drop_index(batch_op.f("ix_results_ladder_id"))
        batch_op.drop_index(batch_op.f("ix_results_bot_id"))

    op.drop_table("results")
    op.drop_table("ratings")
    with op.batch_alter_table("rating_history", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_rating_history_ladder_id"))
        batch_op.drop_index(batch_op.f("ix_rating_history_bot_id"))

    op.drop_table("rating_history")
    with op.batch_alter_table("tournaments", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_tournaments_status"))

    op.drop_table("tournaments")
    op.drop_table("ladders")
    op.drop_table("games")
