"""Fair deals end to end: secret seeds, the commitment at GameStart, the reveal, `arena match verify`.

A referee process with an admin token, bot processes that record every
message they receive, matches whose seeds the referee draws. While a match
runs no RPC shows its seed; no message to a bot carries it before MatchEnd;
afterwards the seed is published and sha256 of it is the commitment each
seat got. `arena match verify` passes on untouched matches of every game,
plain and duplicate, and names the difference once the database is altered.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import uuid
from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from cardarena_api.v1 import arena_pb2 as pb
from tests.support.processes import PYTHON, REPO, clean_env, wait_until
from tests.support.referee import (
    BotHandle,
    RefereeProc,
    match_ended,
    result_of,
    running_referee,
)

ADMIN = "admin-" + uuid.uuid4().hex
AUTH = (("authorization", f"Bearer {ADMIN}"),)
DENIED = grpc.StatusCode.PERMISSION_DENIED


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RefereeProc]:
    """A referee with an admin token (registration stays open on loopback)."""
    with running_referee(tmp_path_factory.mktemp("fair"), "--admin-token", ADMIN) as ref:
        yield ref


@pytest.fixture(scope="module")
def recorders(guarded: RefereeProc) -> list[BotHandle]:
    """Four recording bots playing random legal actions."""
    handles = [
        guarded.run_badbot("record", guarded.register("fair"), "--seed", str(i), wait=False)
        for i in range(4)
    ]
    wait_connected(guarded, handles)
    return handles


def wait_connected(referee: RefereeProc, handles: list[BotHandle]) -> None:
    def connected() -> bool:
        reply = referee.matches.ListSessions(pb.ListSessionsRequest(), metadata=AUTH, timeout=10)
        return {bot.bot_id for bot in handles} <= {s.bot_id for s in reply.sessions}

    wait_until(connected, 30, "the bots to connect", 0.1)


def start(
    referee: RefereeProc,
    game: str,
    bots: list[BotHandle],
    *,
    duplicate: bool = False,
    options: dict[str, str] | None = None,
) -> str:
    """StartMatch with no seed (the referee draws one); the match id."""
    match_id = f"fair-{game}-" + uuid.uuid4().hex[:8]
    referee.start_match(
        match_id, game, bots, seed=None, duplicate=duplicate, options=options, metadata=AUTH
    )
    return match_id


def finished(referee: RefereeProc, match_id: str) -> pb.Match:
    return referee.matches.GetMatch(
        pb.GetMatchRequest(match_id=match_id, wait=True), metadata=AUTH, timeout=120
    )


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def messages_of(bot: BotHandle, match_id: str) -> list[dict[str, Any]]:
    return [m for m in bot.received() if next(iter(m.values())).get("match_id") == match_id]


def test_no_rpc_shows_the_seed_of_a_running_match(
    guarded: RefereeProc, recorders: list[BotHandle]
) -> None:
    """A slow bot keeps the match running while every call is tried without the token."""
    slow = guarded.run_badbot(
        "record", guarded.register("slow"), "--delay-ms", "150", "--delay-count", "25", wait=False
    )
    wait_connected(guarded, [slow])
    match_id = start(guarded, "golden10", [slow, *recorders[:3]], options={"rounds": "2"})
    request = pb.GetMatchRequest(match_id=match_id)
    running = guarded.matches.GetMatch(request, timeout=10)
    assert running.status == "running"
    assert running.seed_decimal == "" and len(running.seed_commitment) == 64
    assert not running.HasField("result")
    with pytest.raises(grpc.RpcError) as replay:
        guarded.matches.GetReplay(request, timeout=10)
    assert replay.value.code() == DENIED
    with pytest.raises(grpc.RpcError) as watch:
        list(guarded.matches.WatchMatch(request, timeout=10))
    assert watch.value.code() == DENIED
    # Even the operator's view of a running match shows the commitment, never the seed.
    events = guarded.matches.WatchMatch(request, metadata=AUTH, timeout=120)
    seen = [json.loads(event.json) for event in events]
    done = finished(guarded, match_id)
    seed = done.seed_decimal
    assert seed and sha256(seed) == running.seed_commitment == done.seed_commitment
    assert int(seed).bit_length() > 64, "a drawn seed has 128 random bits"
    assert [e["type"] for e in seen][-1] == "match_end"
    before_end = json.dumps(seen[:-1])
    assert seed not in before_end and running.seed_commitment in before_end
    assert seed in json.dumps(seen[-1])
    assert [g.seed_decimal for g in done.result.games] == [seed]


@pytest.mark.parametrize(
    ("game", "duplicate", "options"),
    [
        ("goodge", False, {"max_rounds": "4"}),
        ("goodge", True, {"max_rounds": "2"}),
        ("golden10", False, {}),
        ("golden10", True, {"rounds": "2"}),
        ("goof", False, {"rounds": "1"}),
        ("goof", True, {"rounds": "1"}),
    ],
    ids=["goodge", "goodge-dup", "golden10", "golden10-dup", "goof", "goof-dup"],
)
def test_seed_is_committed_hidden_revealed_and_verifies(
    guarded: RefereeProc,
    recorders: list[BotHandle],
    game: str,
    duplicate: bool,
    options: dict[str, str],
) -> None:
    bots = recorders[:3] if game == "golden10" else recorders
    match_id = start(guarded, game, bots, duplicate=duplicate, options=options)
    done = finished(guarded, match_id)
    result_of(done)
    seed, committed = done.seed_decimal, done.seed_commitment
    assert sha256(seed) == committed
    wait_until(lambda: all(match_ended(bot, match_id) for bot in bots), 30, "every match end")
    games_played = len(done.result.games)
    assert games_played == (len(bots) if duplicate else 1)
    for bot in bots:
        received = messages_of(bot, match_id)
        starts = [m["game_start"] for m in received if "game_start" in m]
        assert len(starts) == games_played
        assert {start["seed_commitment"] for start in starts} == {committed}
        for message in received:
            text = json.dumps(message)
            if "match_end" in message:
                assert seed in text  # the reveal
            else:
                assert seed not in text, f"{bot.name} saw the seed in {list(message)}"
    verdict = verify(guarded, match_id)
    assert verdict.returncode == 0, verdict.stdout + verdict.stderr
    assert verdict.stdout.startswith(f"match {match_id} verified")
    assert verdict.stdout.count("\n") == 1


def verify(referee: RefereeProc, match_id: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """`arena match verify MATCH_ID --referee ADDR` (no admin token)."""
    return subprocess.run(
        [
            PYTHON,
            "-m",
            "arena_cli.main",
            "match",
            "verify",
            match_id,
            "--referee",
            referee.address,
            *extra,
        ],
        cwd=REPO,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_verify_names_an_altered_action_or_score(
    guarded: RefereeProc, recorders: list[BotHandle]
) -> None:
    # Two matches: the referee keeps a finished match's replay once it has built it, so
    # the log is altered before anyone asks for the first one's replay; the second is
    # verified as played, then its result altered (read afresh at every call).
    played = [
        start(guarded, "golden10", recorders[:3], duplicate=True, options={"rounds": "1"})
        for _ in range(2)
    ]
    for match_id in played:
        result_of(finished(guarded, match_id))
    altered_log, altered_result = played
    assert verify(guarded, altered_result).returncode == 0
    db = sqlite3.connect(guarded.workdir / "arena.db")
    try:
        (log_text,) = db.execute(
            "SELECT log FROM replays WHERE match_id = ? AND game_index = 1", (altered_log,)
        ).fetchone()
        log = json.loads(log_text)
        seat, _ = log["moves"][0]
        # The first lead changed to a card another seat held: that seat's deal says no.
        other = next(action for who, action in log["moves"] if who != seat)
        altered_moves = [[seat, other], *log["moves"][1:]]
        db.execute(
            "UPDATE replays SET log = ? WHERE match_id = ? AND game_index = 1",
            (json.dumps({**log, "moves": altered_moves}), altered_log),
        )
        (result_text,) = db.execute(
            "SELECT result FROM matches WHERE id = ?", (altered_result,)
        ).fetchone()
        result = json.loads(result_text)
        result["scores"][0] += 1
        db.execute(
            "UPDATE matches SET result = ? WHERE id = ?", (json.dumps(result), altered_result)
        )
        db.commit()
    finally:
        db.close()
    altered = verify(guarded, altered_log, "--json")
    assert altered.returncode == 1, altered.stdout + altered.stderr
    report = json.loads(altered.stdout)
    assert report["verified"] is False
    assert "game 1: the recorded moves do not replay" in report["verdict"], report
    score = verify(guarded, altered_result)
    assert score.returncode == 1
    assert "does NOT verify: the match's scores differ" in score.stdout


def test_verify_of_an_unknown_match_fails(guarded: RefereeProc) -> None:
    unknown = verify(guarded, "no-such-match")
    assert unknown.returncode == 1 and "NOT_FOUND" in unknown.stderr
