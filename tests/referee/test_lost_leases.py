"""A replica renews the leases of the matches it plays, and only those (issue 22, defect 5).

A claim it cannot renew is lost: the database aborted the match meanwhile,
maybe another replica plays it now. The replica stops playing it at once,
stores nothing and tells its watchers why. A match it holds in the database
but no longer plays is not renewed: its lease runs out and a sweep aborts it.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import update

from ladder.models import MatchRow
from ladder.store import MatchRequest, Store
from referee.channels import ActRequest, Answer, Notice
from referee.matches import LEASE_LOST, MatchManager
from referee.metrics import RefereeMetrics
from referee.runner import Event, Limits
from referee.seats import Connected

LEASE_S = 0.6
"""Short leases: renewed every 0.2 s."""


class SilentChannel:
    """A bot that never answers: its match runs until it is stopped."""

    def __init__(self, bot_id: str) -> None:
        self.bot_id = bot_id

    async def act(self, request: ActRequest, timeout_s: float) -> Answer:
        await asyncio.Event().wait()
        raise AssertionError("never answered")

    async def notify(self, notice: Notice) -> None:
        pass


class CountedSeats:
    """Seats whose slots are counted; with `free` False none is ever free."""

    def __init__(self, free: bool = True) -> None:
        self.free = free
        self.held: Counter[str] = Counter()

    def channel(self, bot_id: str) -> SilentChannel:
        return SilentChannel(bot_id)

    async def acquire(self, bots: Sequence[str], match_id: str) -> None:
        if not self.free:
            await asyncio.Event().wait()
        self.held.update(bots)

    async def release(self, bots: Sequence[str], match_id: str) -> None:
        self.held.subtract(bots)

    async def connected(self) -> list[Connected]:
        return []


def hold(store: Store, match_id: str, owner: str, until: datetime) -> None:
    """Make `owner` the holder of the running match, its lease until `until`."""
    with store.session() as session:
        session.execute(
            update(MatchRow).where(MatchRow.id == match_id).values(owner=owner, lease_until=until)
        )


async def eventually(check: Callable[[], bool], what: str, timeout_s: float = 10) -> None:
    """Wait for `check` to hold; fail after `timeout_s`."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout_s
    while not check():
        assert loop.time() < end, f"timed out after {timeout_s:g} s waiting for {what}"
        await asyncio.sleep(0.05)


def run(
    test: Callable[[Store, MatchManager, CountedSeats], Awaitable[None]],
    tmp_path: Path,
    seats: CountedSeats | None = None,
) -> None:
    """`test` with replica A's manager (leases renewed) on a database of its own."""
    store = Store(f"sqlite:///{tmp_path / 'arena.db'}")
    seats = seats or CountedSeats()

    async def main() -> None:
        manager = MatchManager(
            store,
            seats,
            Limits(),
            RefereeMetrics.create(),
            "A",
            LEASE_S,  # type: ignore[arg-type]
        )
        leases = asyncio.create_task(manager.keep_leases())
        try:
            await test(store, manager, seats)
        finally:
            leases.cancel()
            await manager.shutdown(0)

    try:
        asyncio.run(asyncio.wait_for(main(), 60))
    finally:
        store.close()


def request_for(store: Store, match_id: str) -> MatchRequest:
    bots = [store.register_bot(f"{match_id}-{n}", "1", ["golden10"])[0].id for n in range(3)]
    return MatchRequest(match_id, "golden10", 3, tuple(bots), 7, {"rounds": "2"}, False, 60_000)


async def watched(manager: MatchManager, match_id: str) -> list[Event]:
    return [event async for event in manager.watch(match_id)]


def test_a_replica_stops_playing_a_match_whose_lease_it_lost(tmp_path: Path) -> None:
    async def test(store: Store, manager: MatchManager, seats: CountedSeats) -> None:
        await manager.start(request_for(store, "m1"))
        events = asyncio.create_task(watched(manager, "m1"))
        await eventually(lambda: sum(seats.held.values()) == 3, "the match to take its seats")
        # While A's renewals failed, another replica's sweep aborted the match and B took it.
        store.abort_match("m1", "its referee stopped renewing its lease")
        store.restart_match("m1")
        hold(store, "m1", "B", datetime.now(UTC) + timedelta(seconds=30))
        await eventually(lambda: manager.running() == [], "A to stop playing the match")
        assert (await events)[-1] == {"type": "match_aborted", "reason": LEASE_LOST}
        assert sum(seats.held.values()) == 0
        match = store.match("m1")
        assert (match.status, match.result) == ("running", None)
        with store.session() as session:
            row = session.get(MatchRow, "m1")
            assert row is not None and row.owner == "B"

    run(test, tmp_path)


def test_a_match_waiting_for_its_seats_stops_too_when_its_lease_is_lost(tmp_path: Path) -> None:
    async def test(store: Store, manager: MatchManager, seats: CountedSeats) -> None:
        await manager.start(request_for(store, "m1"))
        events = asyncio.create_task(watched(manager, "m1"))
        store.abort_match("m1", "its referee stopped renewing its lease")
        await eventually(lambda: manager.running() == [], "A to stop waiting for the seats")
        assert (await events)[-1] == {"type": "match_aborted", "reason": LEASE_LOST}
        assert seats.held == Counter()
        assert store.match("m1").reason == "its referee stopped renewing its lease"

    run(test, tmp_path, CountedSeats(free=False))


def test_a_match_held_but_no_longer_played_is_left_to_expire(tmp_path: Path) -> None:
    """A match whose abort failed while the database blinked stays A's in the database;
    A renews only the one it plays, so the other's lease runs out and it is aborted."""

    async def test(store: Store, manager: MatchManager, seats: CountedSeats) -> None:
        await manager.start(request_for(store, "played"))
        store.create_match(request_for(store, "forgotten"))
        hold(store, "forgotten", "A", datetime.now(UTC) - timedelta(seconds=1))
        await eventually(
            lambda: store.match("forgotten").status == "aborted", "the forgotten match's abort"
        )
        assert store.match("played").status == "running"
        assert manager.running() == ["played"]

    run(test, tmp_path)


def test_a_shutdown_is_not_a_lost_lease(tmp_path: Path) -> None:
    async def test(store: Store, manager: MatchManager, seats: CountedSeats) -> None:
        await manager.start(request_for(store, "m1"))
        events = asyncio.create_task(watched(manager, "m1"))
        await eventually(lambda: sum(seats.held.values()) == 3, "the match to take its seats")
        assert await manager.shutdown(0) == {"finished": [], "aborted": ["m1"]}
        assert (await events)[-1] == {"type": "match_aborted", "reason": "the referee stopped"}
        match = store.match("m1")
        assert (match.status, match.reason) == ("aborted", "the referee stopped during the match")
        assert sum(seats.held.values()) == 0

    run(test, tmp_path)


SECRET = "postgresql://arena:hunter2@db-7.internal:5432/arena"


class BrokenChannel(SilentChannel):
    """A seat whose every move fails inside the referee, with words it must not show."""

    async def act(self, request: ActRequest, timeout_s: float) -> Answer:
        raise RuntimeError(f"could not connect to {SECRET}")


class BrokenSeats(CountedSeats):
    def channel(self, bot_id: str) -> BrokenChannel:
        return BrokenChannel(bot_id)


def test_an_internal_error_aborts_the_match_without_its_words(tmp_path: Path) -> None:
    """The reason an aborted match is stored and announced with is public (GetMatch, the
    web, the live view): an error of the referee's own is named there by its kind, and its
    words (a database's address, a statement's parameters) stay in the referee's log."""

    async def test(store: Store, manager: MatchManager, seats: CountedSeats) -> None:
        await manager.start(request_for(store, "m1"))
        events = asyncio.create_task(watched(manager, "m1"))
        await eventually(lambda: manager.running() == [], "the match to abort")
        told = (await events)[-1]
        match = store.match("m1")
        assert told["type"] == "match_aborted" and match.status == "aborted"
        assert "RuntimeError" in match.reason and "RuntimeError" in told["reason"]
        assert "hunter2" not in match.reason and "hunter2" not in told["reason"], match.reason

    run(test, tmp_path, BrokenSeats())
