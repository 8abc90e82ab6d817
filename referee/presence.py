"""Which bots hold a session here, told to the store for `arena bot list` and the web.

At a session's open and close, and every `PRESENCE_RENEW_S` for the sessions
still open: never on the move path. Each write names the session (or the
instance, which a bot's sessions on every replica of a tier share), so that
the late closing of a bot's old session (in a tier, after it opened a new one
on another replica) does not make it offline; nor does the closing of one of
its sessions while another replica still holds one (a drain). A replica that
dies stops renewing, so the bots it held read as offline once their
`last_seen_at` is stale.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from ladder.store import PRESENCE_RENEW_S, Seen, Store
from referee.sessions import Session, SessionHub

log = logging.getLogger("arena.referee")

Elsewhere = Callable[[Session], Awaitable[bool]]
"""Whether the bot of a session that closed still holds a session on another replica."""
SETTLE_S = 1.0
"""How long a closed session of a bot with one on every replica waits before it looks
whether the others stand."""


def presence_key(session: Session) -> str:
    """What the store's presence is by: the bot's instance, which its sessions on every
    replica of a tier share, else the session itself."""
    return session.instance or session.id


class Presence:
    """Keeps the store's `online` and `last_seen_at` of this referee's bots current."""

    def __init__(
        self,
        store: Store,
        hub: SessionHub,
        renew_s: float = PRESENCE_RENEW_S,
        elsewhere: Elsewhere | None = None,
    ) -> None:
        """`elsewhere` says whether a closing session's bot still holds one on another
        replica of a tier (a session on every replica): then it stays online."""
        self._store = store
        self._hub = hub
        self._renew_s = renew_s
        self._elsewhere = elsewhere
        self._writes: set[asyncio.Task[None]] = set()
        hub.on_open.append(self._opened)
        hub.on_close.append(self._closed)

    def _opened(self, session: Session) -> None:
        self._spawn(self._write({session.bot_id: presence_key(session)}, Seen.OPENED))

    def _closed(self, session: Session) -> None:
        self._spawn(self._left(session))

    async def _left(self, session: Session) -> None:
        if session.instance and self._elsewhere is not None:
            # A bot that quits closes all its sessions at once: given a moment, the
            # others are gone from the registry too, and the last look finds none.
            await asyncio.sleep(SETTLE_S)
            if await self._elsewhere(session):
                return
        await self._write({session.bot_id: presence_key(session)}, Seen.CLOSED)

    def _spawn(self, write: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(write)
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
            sessions = {s.bot_id: presence_key(s) for s in self._hub.connected()}
            await self._write(sessions, Seen.RENEWED)

    async def flush(self) -> None:
        """Wait for the writes under way (before the store closes)."""
        if self._writes:
            await asyncio.gather(*self._writes, return_exceptions=True)
