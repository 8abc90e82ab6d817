"""A bot hears that its match ended (`MatchEnd`) only once the result is stored.

Told before, a bot that asks for the replay at once would be refused it (a running
match's replay shows hands still in play), and a result the store then refused (the
replica's lease had lapsed: the match is played again, maybe elsewhere) would have been
announced to the bots as final.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bots.random_bot import RandomBot
from ladder.records import MatchEnd, MatchRequest, Notice
from ladder.store import Conflict, Store
from referee.matches import MatchManager
from referee.metrics import RefereeMetrics
from referee.runner import Limits
from referee.seats import Connected
from tests.support.arena import BotSeat


class Heard:
    """What a bot was told, with the match's stored status at that moment."""

    def __init__(self) -> None:
        self.notices: list[tuple[Notice, str]] = []

    def ends(self) -> list[tuple[MatchEnd, str]]:
        return [(n, status) for n, status in self.notices if isinstance(n, MatchEnd)]


class HearingSeat(BotSeat):
    """A random bot that answers at once, and notes what it is told."""

    def __init__(self, bot_id: str, store: Store, heard: Heard) -> None:
        super().__init__(bot_id, RandomBot(seed=1))
        self._store = store
        self._heard = heard

    async def notify(self, notice: Notice) -> None:
        self._heard.notices.append((notice, self._store.match(notice.match_id).status))


class AnsweringSeats:
    def __init__(self, store: Store, heard: Heard) -> None:
        self._store = store
        self._heard = heard

    def channel(self, bot_id: str) -> HearingSeat:
        return HearingSeat(bot_id, self._store, self._heard)

    async def acquire(self, bots: Sequence[str], match_id: str) -> None:
        pass

    async def release(self, bots: Sequence[str], match_id: str) -> None:
        pass

    async def connected(self) -> list[Connected]:
        return []


class RefusingStore(Store):
    """A store that refuses every result: the replica's lease lapsed meanwhile."""

    def finish_match(self, *args: Any, **kwargs: Any) -> None:
        raise Conflict("match m1 is no longer this replica's to finish")


def play(store: Store) -> tuple[Heard, list[dict[str, Any]]]:
    """Play match m1 (Golden 10, 3 bots) to its end; what the bots heard, and its events."""
    heard = Heard()
    bots = [store.register_bot(f"bot{n}", "1", ["golden10"])[0].id for n in range(3)]
    request = MatchRequest("m1", "golden10", 3, tuple(bots), 7, {"rounds": "1"}, False, 60_000)

    async def main() -> list[dict[str, Any]]:
        manager = MatchManager(
            store, AnsweringSeats(store, heard), Limits(), RefereeMetrics.create()
        )
        await manager.start(request)
        events = [event async for event in manager.watch("m1")]
        await manager.shutdown(0)
        return events

    try:
        return heard, asyncio.run(asyncio.wait_for(main(), 60))
    finally:
        store.close()


def test_a_bot_hears_the_end_once_the_result_is_stored(tmp_path: Path) -> None:
    heard, events = play(Store(f"sqlite:///{tmp_path / 'arena.db'}"))
    ends = heard.ends()
    assert len(ends) == 3, "each bot hears the end once"
    assert {status for _, status in ends} == {"finished"}
    stored = Store(f"sqlite:///{tmp_path / 'arena.db'}")
    assert all(end.result == stored.match("m1").result for end, _ in ends)
    stored.close()
    assert heard.notices[-3:] == ends, "the end is the last thing a bot hears"
    assert events[-1]["type"] == "match_end"


def test_a_result_the_store_refuses_is_never_announced(tmp_path: Path) -> None:
    heard, events = play(RefusingStore(f"sqlite:///{tmp_path / 'arena.db'}"))
    assert heard.notices, "the game was played"
    assert heard.ends() == []
    assert events[-1]["type"] == "match_aborted"
