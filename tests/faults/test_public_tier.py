"""WatchPublic across a referee tier: the watcher reaches a replica that does not play
the match.

Replicas A and B on ports of their own, one SQLite database, a Redis relay of the
test's own. Every bot connects to A, so A plays the matches. A public watcher on A
and one on B: B's stream is live (views while GetMatch still says running), carries
A's events in A's order from where it came in, ends with match_end and passes the
hidden-card scan. Then A is killed mid-match: B's watcher ends with match_aborted
once the store says so, instead of waiting for ever. Last, a replica whose Redis is
gone answers a watcher with an error (UNAVAILABLE at the servicer).
"""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cardarena_api.v1 import arena_pb2 as pb
from referee.public import VIEW, Event
from referee.tier.public import PublicTier, WatchUnavailable
from referee.tier.relay import Clients
from tests.support.processes import Processes, free_port, wait_until
from tests.support.public import check_public_stream, hidden_by_step, message_strings
from tests.support.referee import BotHandle, RefereeProc, launch_referee, result_of
from tests.support.services import RedisServer

SLOW = ("--delay-ms", "100")
"""One seat answers slowly: each match still runs when B's watcher starts."""
WATCH_S = 90.0


def collect(call: Iterator[pb.MatchEvent], into: list[pb.MatchEvent]) -> None:
    into.extend(call)


def watching(referee: RefereeProc, match_id: str, into: list[pb.MatchEvent]) -> threading.Thread:
    """A thread that gathers `referee`'s WatchPublic stream of `match_id` into `into`."""
    call = referee.matches.WatchPublic(pb.GetMatchRequest(match_id=match_id), timeout=WATCH_S)
    thread = threading.Thread(target=collect, args=(call, into), daemon=True)
    thread.start()
    return thread


def as_json(stream: list[pb.MatchEvent]) -> list[dict[str, Any]]:
    return [json.loads(event.json) for event in stream]


def is_subsequence(part: list[dict[str, Any]], whole: list[dict[str, Any]]) -> bool:
    rest = iter(whole)
    return all(any(event == other for other in rest) for event in part)


def start(a: RefereeProc, bots: list[BotHandle], seed: int) -> str:
    match_id = f"tier-public-{uuid.uuid4().hex[:8]}"
    a.start_match(
        match_id,
        "golden10",
        bots,
        seed=seed,
        duplicate=True,
        deadline_ms=2000,
        options={"rounds": "1"},
    )
    return match_id


def test_a_public_watcher_on_another_replica_sees_the_match_live(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    relay = ("--relay", redis_server.url, "--lease-s", "3")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    procs_a, procs_b = Processes(tmp_path / "a"), Processes(tmp_path / "b")
    try:
        a = launch_referee(tmp_path / "a", procs_a, "--replica", "A", *relay)
        shared = f"sqlite:///{tmp_path / 'a' / 'arena.db'}"
        b = launch_referee(tmp_path / "b", procs_b, "--replica", "B", "--db", shared, *relay)
        bots = [
            a.run_badbot("record", a.register("slow"), *SLOW, wait=False),
            a.run_bot("random", a.register("random")),
            a.run_bot("random", a.register("random")),
        ]
        a.wait_connected(bots)
        assert {b.sessions()[bot.bot_id].replica for bot in bots} == {"A"}

        match_id = start(a, bots, seed=7)
        here: list[pb.MatchEvent] = []
        there: list[pb.MatchEvent] = []
        threads = [watching(a, match_id, here), watching(b, match_id, there)]
        wait_until(lambda: any(e.type == VIEW for e in there), 30, "a first view on B", 0.02)
        request = pb.GetMatchRequest(match_id=match_id)
        assert b.matches.GetMatch(request, timeout=10).status == "running", "B's view is live"
        for thread in threads:
            thread.join(WATCH_S)
            assert not thread.is_alive(), "the public streams end with the match"
        result_of(a.wait_match(match_id))

        hidden = hidden_by_step(a.replay(match_id))
        far = [{**json.loads(e.json), "strings": message_strings(e)} for e in there]
        views = check_public_stream(far, hidden)
        near = as_json(here)
        # B's watcher came in after A's: it gets A's stream with the views before it came
        # in reduced to the latest, as a late watcher on A would.
        assert is_subsequence(as_json(there), near), "B shows A's events, in A's order"
        kinds = [e["type"] for e in near if e["type"] != VIEW]
        assert [e["type"] for e in far if e["type"] != VIEW] == kinds
        for index in {e["game_index"] for e in far if e["type"] == VIEW}:
            steps = [e["step"] for e in far if e["type"] == VIEW and e["game_index"] == index]
            last = max(e["step"] for e in near if e["type"] == VIEW and e["game_index"] == index)
            assert steps == list(range(steps[0], last + 1)), f"a view after each move of {index}"
        assert views and all(e.WhichOneof("event") == VIEW for e in there if e.type == VIEW)

        # The owner dies mid-match: B's watcher ends once its lease has run out.
        match_id = start(a, bots, seed=8)
        orphaned: list[pb.MatchEvent] = []
        thread = watching(b, match_id, orphaned)
        wait_until(lambda: any(e.type == VIEW for e in orphaned), 30, "a view of B's", 0.02)
        a.proc.kill()
        a.proc.wait(10)
        thread.join(WATCH_S)
        assert not thread.is_alive(), "B's stream ends though its owner died"
        assert orphaned[-1].type == "match_aborted", orphaned[-1].json
        orphan = pb.GetMatchRequest(match_id=match_id)
        assert b.matches.GetMatch(orphan, timeout=10).status == "aborted"
    finally:
        procs_a.close()
        procs_b.close()


def test_a_watcher_of_a_match_elsewhere_without_redis_gets_a_reason() -> None:
    async def test() -> None:
        clients = Clients.connect(f"redis://127.0.0.1:{free_port()}/0")
        tier = PublicTier(clients.commands)

        async def running() -> Event | None:
            return None

        try:
            with pytest.raises(WatchUnavailable, match=r"^the relay \(Redis\) is unavailable"):
                async for _ in tier.watch("m", running):
                    pass
        finally:
            await tier.close()
            await clients.close()

    asyncio.run(asyncio.wait_for(test(), 30))
