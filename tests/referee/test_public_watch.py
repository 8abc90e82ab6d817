"""WatchPublic: a live match's public stream over real gRPC, scanned for hidden cards.

A referee process with an admin token, bot processes, and a watcher with no
token: every string of every message it gets (typed fields and JSON alike) is
checked against the cards some seat could not see at that moment, rebuilt
afterwards from the finished match's replay (tests/support/public.py; the web's
test imports the scan from here too). The admin's WatchMatch still carries
every action.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator

import grpc
import pytest

from cardarena_api.v1 import arena_pb2 as pb
from ladder.records import MatchRequest
from referee.public import VIEW, Projector
from tests.support.processes import wait_until
from tests.support.public import check_public_stream, hidden_by_step, message_strings
from tests.support.referee import BotHandle, RefereeProc, result_of, running_referee

ADMIN = "admin-" + uuid.uuid4().hex
SLOW = ("--delay-ms", "250", "--delay-count", "4")
"""The first seat's first answers are slow: the match is surely still running when watched."""
CASES = [
    ("goodge", 3, False, {"max_rounds": "2"}),
    ("golden10", 3, True, {"rounds": "1"}),
    ("goof", 3, False, {"rounds": "1"}),
]


def admin() -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {ADMIN}"),)


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RefereeProc]:
    """`arena referee --admin-token T`: callers without it are the public."""
    with running_referee(tmp_path_factory.mktemp("public"), "--admin-token", ADMIN) as ref:
        yield ref


@pytest.fixture(scope="module")
def seats(guarded: RefereeProc) -> list[BotHandle]:
    """A slow recording bot, then two random bots."""
    handles = [
        guarded.run_badbot("record", guarded.register("slow"), *SLOW, wait=False),
        guarded.run_bot("random", guarded.register("random")),
        guarded.run_bot("random", guarded.register("random")),
    ]

    def connected() -> bool:
        reply = guarded.matches.ListSessions(pb.ListSessionsRequest(), metadata=admin(), timeout=10)
        return {h.bot_id for h in handles} <= {s.bot_id for s in reply.sessions}

    wait_until(connected, 30, "bots to connect", 0.1)
    return handles


# The tests -------------------------------------------------------------------------------


def _collect(call: Iterator[pb.MatchEvent], into: list[pb.MatchEvent]) -> None:
    into.extend(call)


@pytest.mark.parametrize(("game", "players", "duplicate", "options"), CASES, ids=lambda v: str(v))
def test_a_public_watcher_sees_only_what_is_public(
    guarded: RefereeProc,
    seats: list[BotHandle],
    game: str,
    players: int,
    duplicate: bool,
    options: dict[str, str],
) -> None:
    match_id = f"public-{game}-{uuid.uuid4().hex[:8]}"
    guarded.matches.StartMatch(
        pb.StartMatchRequest(
            match_id=match_id,
            game=game,
            players=players,
            bot_ids=[bot.bot_id for bot in seats[:players]],
            duplicate=duplicate,
            deadline_ms=2000,
            seed=11,
            options=options,
        ),
        metadata=admin(),
        timeout=30,
    )
    request = pb.GetMatchRequest(match_id=match_id)
    public: list[pb.MatchEvent] = []
    full: list[pb.MatchEvent] = []
    public_call = guarded.matches.WatchPublic(request, timeout=120)
    threads = [
        threading.Thread(target=_collect, args=(public_call, public)),
        threading.Thread(
            target=_collect,
            args=(guarded.matches.WatchMatch(request, metadata=admin(), timeout=120), full),
        ),
    ]
    for thread in threads:
        thread.start()
    wait_until(lambda: any(e.type == VIEW for e in public), 60, "a first public view", 0.02)
    assert guarded.matches.GetMatch(request, timeout=10).status == "running", (
        "views come while the match is played"
    )
    for thread in threads:
        thread.join(120)
    result_of(guarded.wait_match(match_id))
    # Without the admin token WatchMatch stays closed.
    with pytest.raises(grpc.RpcError) as denied:
        next(iter(guarded.matches.WatchMatch(request, timeout=10)))
    assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED

    replay = guarded.matches.GetReplay(request, timeout=10)
    events = [{**json.loads(e.json), "strings": message_strings(e)} for e in public]
    views = check_public_stream(events, hidden_by_step(replay))
    moves = {g.game_index: len(json.loads(g.log_json)["moves"]) for g in replay.games}
    for index, count in moves.items():
        steps = [e["step"] for e in events if e["type"] == VIEW and e["game_index"] == index]
        # A watcher who comes late gets the table as it stands, then every move.
        assert steps == list(range(steps[0], count + 1)), f"a view after each move of {index}"
    assert all(e.WhichOneof("event") == VIEW for e in public if e.type == VIEW), "typed too"
    view = next(e.view for e in public if e.type == VIEW)
    assert view.observation.seat == -1 and view.observation.game == game

    # The admin's stream is the full log: every move of every game.
    kinds = [e.type for e in full]
    assert VIEW not in kinds
    assert kinds.count("action") + kinds.count("tick") == sum(moves.values())

    # A match that is over: its public stream is projected from what is stored.
    stored = guarded.matches.WatchPublic(request, timeout=30)
    again = [{**json.loads(e.json), "strings": message_strings(e)} for e in stored]
    assert check_public_stream(again, hidden_by_step(replay)) == sum(moves.values()) + len(moves)
    assert views <= len(again)


def test_strikes_and_forfeits_lose_their_reasons() -> None:
    """A strike's reason quotes the legal actions, which is the hand."""
    request = MatchRequest("m", "golden10", 3, ("a", "b", "c"), 5, {}, False, 1000)
    projector = Projector(request)
    start = {
        "type": "game_start",
        "game_index": 0,
        "seats": ["a", "b", "c"],
        "seed_commitment": "x",
    }
    assert [e["type"] for e in projector.project(start)] == ["game_start", VIEW]
    strike = {
        "type": "strike",
        "game_index": 0,
        "seat": 1,
        "bot": "b",
        "reason": "illegal answer '3R'; legal: 1R, 7Y",
        "strikes": 1,
    }
    forfeit = {"type": "forfeit", "game_index": 0, "seat": 1, "bot": "b", "reason": "3R"}
    assert projector.project(strike) == [
        {"type": "strike", "game_index": 0, "seat": 1, "bot": "b", "strikes": 1}
    ]
    assert projector.project(forfeit) == [
        {"type": "forfeit", "game_index": 0, "seat": 1, "bot": "b"}
    ]
