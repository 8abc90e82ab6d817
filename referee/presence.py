"""Which bots hold a session here, told to the store for `arena bot list` and the web.

At a session's open and close, and every `PRESENCE_RENEW_S` for the sessions
still open: never on the move path. A replica that dies stops renewing, so the
bots it held read as offline once their `last_seen_at` is stale.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from sqlalchemy.exc import SQLAlchemyError

from ladder.store import PRESENCE_RENEW_S, Store
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
        self._spawn([session.bot_id], online=True)

    def _closed(self, session: Session) -> None:
        self._spawn([session.bot_id], online=False)

    def _spawn(self, bot_ids: Sequence[str], online: bool) -> None:
        task = asyncio.create_task(self._write(bot_ids, online))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def _write(self, bot_ids: Sequence[str], online: bool) -> None:
        try:
            await asyncio.to_thread(self._store.mark_seen, bot_ids, online)
        except SQLAlchemyError as error:
            # Presence is advisory: the next renewal writes it again.
            log.warning("presence: the database is unavailable (%s)", error)

    async def keep(self) -> None:
        """Until cancelled: renew the presence of every bot with an open session."""
        while True:
            await asyncio.sleep(self._renew_s)
            await self._write([session.bot_id for session in self._hub.connected()], True)

    async def flush(self) -> None:
        """Wait for the writes under way (before the store closes)."""
        if self._writes:
            await asyncio.gather(*self._writes, return_exceptions=True)
