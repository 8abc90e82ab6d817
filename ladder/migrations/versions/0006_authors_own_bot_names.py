"""authors own bot names; invite codes

An author has a name and a token (its hash). Every bot name (all its
versions, and every spelling with the same `ladder.names.name_key`) belongs
to one author. The names a database held before are given to the operator's
author, `a-operator`, which has no token (the admin token acts for it); the
operator can transfer them (`arena bot transfer NAME AUTHOR`).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-03 14:00:00.000000
"""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

from ladder.names import name_key

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

OPERATOR = "a-operator"


def upgrade() -> None:
    authors = op.create_table(
        "authors",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("name_key", sa.Text(), nullable=False, unique=True),
        sa.Column("token_hash", sa.String(64), nullable=True, unique=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("names", sa.Integer(), nullable=False, server_default="0"),
    )
    names = op.create_table(
        "bot_names",
        sa.Column("name_key", sa.Text(), primary_key=True),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("author_id", sa.String(32), sa.ForeignKey("authors.id"), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("versions_today", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("day_until", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_bot_names_author_id", "bot_names", ["author_id"])
    op.create_table(
        "invites",
        sa.Column("code_hash", sa.String(64), primary_key=True),
        sa.Column("uses_left", sa.Integer(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    now = datetime.now(UTC)
    op.bulk_insert(
        authors,
        [
            {
                "id": OPERATOR,
                "name": "operator",
                "name_key": name_key("operator"),
                "token_hash": None,
                "created_at": now,
                "names": 0,
            }
        ],
    )
    bots = sa.table("bots", sa.column("name", sa.String), sa.column("created_at", sa.DateTime))
    owned: dict[str, dict[str, object]] = {}
    rows = op.get_bind().execute(sa.select(bots.c.name).order_by(bots.c.created_at)).all()
    for (name,) in rows:
        # The oldest spelling names the entry; later look-alikes share its owner.
        owned.setdefault(
            name_key(name),
            {"name_key": name_key(name), "name": name, "author_id": OPERATOR, "created_at": now},
        )
    if owned:
        op.bulk_insert(names, list(owned.values()))


def downgrade() -> None:
    op.drop_table("invites")
    op.drop_index("ix_bot_names_author_id", "bot_names")
    op.drop_table("bot_names")
    op.drop_table("authors")
