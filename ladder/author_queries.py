"""What the ladder shows of authors: who owns a bot, and an author's bots.

Read-only, over a `Store`, for the web. Only an author's id, name and
creation date are ever read from its row: its token's hash and its quota
counters stay in the store.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

from ladder import authors, queries
from ladder.models import AuthorRow, BotNameRow
from ladder.names import name_key
from ladder.store import Store

RECENT_MATCHES = 30
"""How many of the recent matches of an author's bots its page lists."""


@dataclass(frozen=True)
class AuthorName:
    """A bot name an author owns, every version of it, and whether it accepts challenges."""

    name: str
    """The spelling it was first registered with."""
    challenges: bool
    versions: list[queries.BotLine]
    """Newest first; a version may be spelled as a look-alike of `name`."""


@dataclass(frozen=True)
class AuthorView:
    """An author as the web shows it."""

    id: str
    name: str
    created_at: datetime
    names: list[AuthorName]
    """By name."""

    @property
    def bot_ids(self) -> list[str]:
        """Every version of every name the author owns."""
        return [line.id for owned in self.names for line in owned.versions]


def author_view(store: Store, ref: str) -> AuthorView:
    """The author with this id or name (any spelling of it), with its bot names and
    their versions; raises NotFound."""
    author = authors.find_author(store, ref)
    with store.session() as session:
        created_at = session.scalar(select(AuthorRow.created_at).where(AuthorRow.id == author.id))
        owned = session.execute(
            select(BotNameRow.name_key, BotNameRow.name, BotNameRow.challenges)
            .where(BotNameRow.author_id == author.id)
            .order_by(BotNameRow.name)
        ).all()
    assert created_at is not None  # find_author found the row
    versions: dict[str, list[queries.BotLine]] = {row.name_key: [] for row in owned}
    for line in queries.versions_of(store, versions):
        versions[name_key(line.name)].append(line)
    return AuthorView(
        id=author.id,
        name=author.name,
        created_at=created_at,
        names=[
            AuthorName(
                name=row.name, challenges=row.challenges, versions=versions[row.name_key][::-1]
            )
            for row in owned
        ],
    )


def author_of(store: Store, bot_name: str) -> str | None:
    """The name of the author who owns `bot_name` (any spelling), or None."""
    owner = authors.owner_of(store, bot_name)
    return None if owner is None else owner.name


def author_names(store: Store, author_ids: Iterable[str | None]) -> dict[str, str]:
    """The name of each of these authors (an id nobody has is left out)."""
    wanted = {author_id for author_id in author_ids if author_id is not None}
    if not wanted:
        return {}
    with store.session() as session:
        return dict(
            session.execute(
                select(AuthorRow.id, AuthorRow.name).where(AuthorRow.id.in_(wanted))
            ).all()
        )
