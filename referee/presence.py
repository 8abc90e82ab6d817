"""Which bots hold a session here, told to the store for `arena bot list` and the web.

At a session's open and close, and every `PRESENCE_RENEW_S` for the sessions
still open: never on the move path. Each write names the session, so that the
late closing of a bot's old session (in a tier, after it opened a new one on
another replica) does not make it offline. A replica that dies stops renewing, so the
bots it held read as offline once their `last_seen_at` is stale.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping

from sqlalchemy.exc import SQLAlchemyError

from ladder.store import PRESENCE_RENEW_S, Seen, Store
from referee.sessions import Session, SessionHub

log = logging.getLogger("arena.referee")


class Presence:
    """Keeps the store's `online` and `last_seen_at` of this referee's bots current."""

    def __init__(self, store: Store, hub: SessionHub, renew_s: float = PRESENCE_RENEW_S) -> None:
        self._store = store
        self._hub = hub
        self._renew_s = renew_s
        self._writes: set[asyncio.Task[None]] = set()
        hub.on_open.append(self._opened)
        hub.on_close.append(self._closed)

    def _opened(self, session: Session) -> None:
        self._spawn({session.bot_id: session.id}, Seen.OPENED)

    def _closed(self, session: Session) -> None:
        self._spawn({session.bot_id: session.id}, Seen.CLOSED)

    def _spawn(self, sessions: Mapping[str, str], seen: Seen) -> None:
        task = asyncio.create_task(self._write(sessions, seen))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def _write(self, sessions: Mapping[str, str], seen: Seen) -> None:
        try:
            await asyncio.to_thread(self._store.mark_seen, sessions, seen)
        except SQLAlchemyError as error:
            # Presence is advisory: the next renewal writes it again.
            log.warning("presence: the database is unavailable (%s)", error)

    async def keep(self) -> None:
        """Until cancelled: renew the presence of every bot with an open session."""
        while True:
            await asyncio.sleep(self._renew_s)
            await self._write({s.bot_id: s.id for s in self._hub.connected()}, Seen.RENEWED)

    async def flush(self) -> None:
        """Wait for the writes under way (before the store closes)."""
        if self._writes:
            await asyncio.gather(*self._writes, return_exceptions=True)
