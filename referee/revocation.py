"""A rotated token's sessions end on every replica of a tier, even when the word is lost.

The replica where a token is rotated ends the old token's session at once, wherever in
the tier it is held, by a push over the relay. A push can be lost: popped by a blocked
read whose connection had just died (a partition that reset nothing), left in an inbox
that expired while its replica could not read, or never sent by a replica that stopped.
So each replica of a tier also reads, every TOKENS_CHECKED_EVERY_S, the current token of
each bot it holds a session with, and ends the sessions opened with a token that is
not the bot's any more: the database, not the relay, says which token is the bot's.
"""

from __future__ import annotations

import asyncio
import logging

from sqlalchemy.exc import SQLAlchemyError

from ladder.store import Store
from referee.sessions import SessionHub

log = logging.getLogger("arena.referee")

TOKENS_CHECKED_EVERY_S = 5.0
"""How long a session opened with a rotated token may last when the rotation's word to
its replica was lost (a query by primary key per replica this often)."""


async def end_revoked(store: Store, hub: SessionHub) -> None:
    """End every session of `hub` opened with a token its bot no longer has."""
    # Listed before the read: a session opened since may hold a token newer than the
    # one read, and must not be taken for an old one.
    sessions = hub.connected()
    if not sessions:
        return
    current = await asyncio.to_thread(store.token_hashes, [s.bot_id for s in sessions])
    for session in sessions:
        if current.get(session.bot_id) != session.credential and hub.revoke(
            session.bot_id, session.credential
        ):
            log.warning(
                "bot %s: its session's token was rotated and the word of it did not come; ended",
                session.bot_id,
            )


async def keep_ending_revoked(store: Store, hub: SessionHub) -> None:
    """Until cancelled: `end_revoked` every TOKENS_CHECKED_EVERY_S."""
    while True:
        await asyncio.sleep(TOKENS_CHECKED_EVERY_S)
        try:
            await end_revoked(store, hub)
        except SQLAlchemyError as error:
            log.warning("revocations: the database is unavailable (%s)", error)
