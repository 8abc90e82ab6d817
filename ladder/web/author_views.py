"""The data behind an author's page and `/api/authors/{name}` (see `ladder.web.views`)."""

from __future__ import annotations

from ladder import author_queries, queries
from ladder.store import NotFound, Store
from ladder.web.schemas import AuthorBotOut, AuthorOut, AuthorPageOut, AuthorVersionOut
from ladder.web.views import WebError, bot_out, bot_ratings, checked_id, match_lines


def author_page(store: Store, ref: str) -> AuthorPageOut:
    """An author (by name, any spelling of it, or id): its bots with their versions and
    ratings, and the recent matches they played; 404 for an unknown author."""
    checked_id("author", ref)
    try:
        view = author_queries.author_view(store, ref)
    except NotFound as error:
        raise WebError(404, str(error)) from None
    bot_ids = view.bot_ids
    ratings = bot_ratings(store, bot_ids)
    return AuthorPageOut(
        author=AuthorOut(id=view.id, name=view.name, created_at=view.created_at),
        bots=[
            AuthorBotOut(
                name=owned.name,
                accepts_challenges=owned.challenges,
                versions=[
                    AuthorVersionOut(**bot_out(line).model_dump(), ratings=ratings[line.id])
                    for line in owned.versions
                ],
            )
            for owned in view.names
        ],
        matches=match_lines(store, bot_ids, author_queries.RECENT_MATCHES),
        provisional_se=queries.PROVISIONAL_SE,
    )
