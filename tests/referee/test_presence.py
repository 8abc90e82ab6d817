"""referee.presence: the store's presence follows a bot's sessions, on one referee and on
the replicas of a tier (two hubs sharing one store, as two replicas do)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from ladder import queries
from ladder.store import Store
from referee.presence import Presence
from referee.sessions import Session, SessionHub
from tests.support.aio import eventually


def online(store: Store, bot: str) -> bool:
    return queries.bot_line(store, bot).online


def test_a_bot_is_offline_only_when_its_last_session_closes(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'arena.db'}")
    bot = store.register_bot("present", "1", ["golden10"])[0].id
    held: set[str] = set()

    async def elsewhere(session: Session) -> bool:
        """What the tier's registry says: a session of the bot's instance on another hub."""
        return bool(held - {session.id})

    async def test() -> None:
        a, b = SessionHub(), SessionHub()
        on_a, on_b = (
            Presence(store, a, elsewhere=elsewhere),
            Presence(store, b, elsewhere=elsewhere),
        )

        async def settled() -> None:
            await on_a.flush()
            await on_b.flush()

        # One session on each replica, of one instance.
        first, second = a.open(bot, 1, instance="i1"), b.open(bot, 1, instance="i1")
        held.update((first.id, second.id))
        await settled()
        assert online(store, bot)
        # a drains: b still holds the bot, which stays online.
        held.discard(first.id)
        a.close(first)
        await settled()
        assert online(store, bot)
        # The bot leaves b too: offline.
        held.discard(second.id)
        b.close(second)
        await settled()
        assert not online(store, bot)

        # A bot of one session that moved: the old session's late closing leaves it online.
        old = a.open(bot, 1)
        await settled()
        new = b.open(bot, 1)
        await settled()
        a.close(old)
        await settled()
        assert online(store, bot)
        b.close(new)
        await eventually(lambda: asyncio.sleep(0, not online(store, bot)), "the bot offline")

    try:
        asyncio.run(asyncio.wait_for(test(), 30))
    finally:
        store.close()
