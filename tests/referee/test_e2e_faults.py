"""End to end: misbehaving bots (badbot.py processes) against a referee process.

Each misbehaviour gets its documented outcome — a strike with a reason, an
Error message, a closed stream, a forfeit — and the match still ends with a
complete result that its replay rebuilds. The referee runs with a 200 ms
default deadline, a 300 ms time bank, 3 strikes and a 2 s grace period.
"""

from __future__ import annotations

import signal
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from tests.support.processes import wait_until
from tests.support.referee import (
    GRACE_S,
    MAX_STRIKES,
    BotHandle,
    RefereeProc,
    check_complete,
    check_replay,
    records_until,
    replay_logs,
    result_of,
)

GAME = "golden10"
OPTIONS = {"rounds": "1"}  # one round: 14 requests per seat with 4 players


@pytest.fixture(scope="module")
def opponents(referee: RefereeProc) -> list[BotHandle]:
    """Three well-behaved `arena bot run random` processes for every fault test."""
    handles = [referee.run_bot("random", referee.register("random"), capacity=8) for _ in range(3)]
    referee.wait_connected(handles)
    return handles


def play(
    referee: RefereeProc, seats: list[BotHandle], *, deadline_ms: int, seed: int = 5
) -> dict[str, Any]:
    """Play a one-round Golden 10 match to its end; its result (it must finish)."""
    match_id = "fault-" + uuid.uuid4().hex[:10]
    match = referee.play(match_id, GAME, seats, seed=seed, deadline_ms=deadline_ms, options=OPTIONS)
    return result_of(match)


def complete(
    referee: RefereeProc,
    result: dict[str, Any],
    seats: list[BotHandle],
    forfeits: Sequence[str] = (),
) -> None:
    check_complete(
        result,
        GAME,
        [bot.bot_id for bot in seats],
        seed=int(result["games"][0]["seed"]),
        duplicate=False,
        forfeits=forfeits,
    )
    check_replay(referee, result["match_id"], result)


def of_match(bot: BotHandle, kind: str, match_id: str) -> list[dict[str, Any]]:
    """The messages of one kind the bot received for one match, in order."""
    return [m[kind] for m in bot.received(kind) if m[kind].get("match_id") == match_id]


def errors(bot: BotHandle) -> list[str]:
    return [m["error"]["message"] for m in bot.received("error")]


def legal_texts(act: dict[str, Any]) -> list[str]:
    return [action["text"] for action in act["legal"]]


def seat_moves(referee: RefereeProc, match_id: str, seat: int) -> list[str]:
    """The actions applied for `seat` in game 0 of a match, from its replay log."""
    (_, log, _), *_ = replay_logs(referee, match_id)
    return [action for s, action in log["moves"] if s == seat]


def test_late_answers_strike_each_move_then_forfeit(
    referee: RefereeProc,
    opponents: list[BotHandle],
    badbot: Callable[..., BotHandle],
) -> None:
    """A bot that answers every request late gets a strike per late move (the first
    one after its time bank runs out too), then forfeits at the third: it is ranked
    last, listed in forfeits, told so, and asked nothing more."""
    late = badbot("late", "--delay-ms", "900")
    seats = [opponents[0], late, opponents[1], opponents[2]]
    result = play(referee, seats, deadline_ms=200)
    match_id = result["match_id"]
    complete(referee, result, seats, forfeits=[late.bot_id])
    assert result["ranks"][1] == 4
    assert result["strikes"][late.bot_id] == MAX_STRIKES
    assert result["forfeit_reasons"][late.bot_id] == f"{MAX_STRIKES} strikes"

    records_until(late, lambda _: of_match(late, "forfeit", match_id), "its forfeit")
    acts = of_match(late, "act", match_id)
    strikes = of_match(late, "strike", match_id)
    assert len(acts) == MAX_STRIKES, "no request after the forfeit"
    assert [s["strikes"] for s in strikes] == [1, 2, 3]
    assert all(s["max_strikes"] == MAX_STRIKES for s in strikes)
    assert all("deadline" in s["reason"] for s in strikes)
    assert all(s.get("seat", 0) == 1 for s in strikes)
    assert "strikes" in of_match(late, "forfeit", match_id)[0]["reason"]
    # The first request drew on the time bank (300 ms), the next ones did not.
    assert acts[0]["time_bank_ms"] == 300 and "time_bank_ms" not in acts[1]
    # Its late answers reached a referee that no longer waited for them.
    late_ids = {act["request_id"] for act in acts}
    records_until(
        late,
        lambda _: any(rid in e for e in errors(late) for rid in late_ids),
        "an error for a late answer",
    )
    assert all("no open request" in e for e in errors(late))
    (_, _, events), *_ = replay_logs(referee, match_id)
    assert [e["type"] for e in events].count("strike") == MAX_STRIKES
    assert [e["bot"] for e in events if e["type"] == "forfeit"] == [late.bot_id]


def test_illegal_answers_strike_with_the_legal_actions(
    referee: RefereeProc,
    opponents: list[BotHandle],
    badbot: Callable[..., BotHandle],
) -> None:
    """An index out of range and an unknown action text each get a strike whose
    reason names the legal actions; the referee plays a legal default; two
    strikes of three are no forfeit."""
    bad = badbot("illegal")
    seats = [bad, *opponents]
    result = play(referee, seats, deadline_ms=1000)
    match_id = result["match_id"]
    complete(referee, result, seats)
    assert result["strikes"][bad.bot_id] == 2
    assert bad.bot_id not in result["forfeits"]

    records_until(bad, lambda _: of_match(bad, "match_end", match_id), "the match end")
    acts = of_match(bad, "act", match_id)
    strikes = of_match(bad, "strike", match_id)
    assert len(strikes) == 2 and not of_match(bad, "forfeit", match_id)
    first, second = (legal_texts(act) for act in acts[:2])
    assert strikes[0]["reason"] == (
        f"illegal answer index {len(first) + 5}; legal: {', '.join(first)}"
    )
    assert strikes[1]["reason"] == f"illegal answer 'no-such-action'; legal: {', '.join(second)}"
    assert [s["strikes"] for s in strikes] == [1, 2]
    # The referee's defaults were legal, and the bot's later legal answers stood.
    sent = {r["request_id"]: r.get("text") for r in bad.records() if r["kind"] == "sent"}
    moves = seat_moves(referee, match_id, 0)
    assert len(moves) == len(acts)
    assert moves[0] in first and moves[1] in second
    assert moves[2:] == [sent[act["request_id"]] for act in acts[2:]]


def test_malformed_messages_get_errors_and_a_strike(
    referee: RefereeProc,
    opponents: list[BotHandle],
    badbot: Callable[..., BotHandle],
) -> None:
    """A second Hello and an empty BotMessage get an Error; an answer to an unknown
    request id gets 'no open request'; an Answer with no choice is a strike. The
    session survives all of it and the match finishes."""
    bad = badbot("malformed")
    seats = [opponents[0], opponents[1], bad, opponents[2]]
    result = play(referee, seats, deadline_ms=1000)
    match_id = result["match_id"]
    complete(referee, result, seats)
    assert result["strikes"][bad.bot_id] == 1 and not result["forfeits"]

    records_until(bad, lambda _: of_match(bad, "match_end", match_id), "the match end")
    [strike] = of_match(bad, "strike", match_id)
    first = legal_texts(of_match(bad, "act", match_id)[0])
    assert strike["reason"] == f"illegal answer (empty); legal: {', '.join(first)}"
    messages = errors(bad)
    assert messages.count("after Hello, a bot sends only Answer messages") == 2
    assert messages.count(f"no open request '{'f' * 32}' for this bot") == 1
    assert len(messages) == 3
    assert len(bad.received("welcome")) == 1, "the stream was never broken"
    assert bad.bot_id in referee.sessions()


def test_oversized_message_ends_the_stream_with_resource_exhausted(
    referee: RefereeProc,
    opponents: list[BotHandle],
    badbot: Callable[..., BotHandle],
) -> None:
    """An answer over the referee's message limit ends that bot's stream with
    RESOURCE_EXHAUSTED; the bot reconnects within the grace period and is asked
    the same request again; nobody else is disturbed."""
    bad = badbot("oversized", "--oversize-bytes", str(400 * 1024))
    seats = [*opponents[:2], bad, opponents[2]]
    result = play(referee, seats, deadline_ms=3000)
    complete(referee, result, seats)
    assert not result["forfeits"]
    assert {bot: n for bot, n in result["strikes"].items() if n} in ({}, {bad.bot_id: 1})

    records = bad.records()
    [status] = [r for r in records if r["kind"] == "status" and r["session"] == 1]
    assert status["code"] == "RESOURCE_EXHAUSTED"
    assert "larger than max" in status["details"]
    acts = [(r["session"], r["message"]["act"]) for r in records if "act" in r.get("message", {})]
    first_in_second = next(act for session, act in acts if session == 2)
    assert first_in_second["request_id"] == acts[0][1]["request_id"], "the same seat resumed"
    assert len(bad.received("welcome")) == 2


def test_reconnect_within_grace_resumes_the_seat(
    referee: RefereeProc,
    opponents: list[BotHandle],
    badbot: Callable[..., BotHandle],
) -> None:
    """A bot that drops its stream with a request open and comes back 0.3 s later
    (grace 2 s) gets that request again on the new stream, answers it and the
    rest: no strike, no forfeit."""
    bad = badbot("reconnect", "--drop-after", "2", "--away-ms", "300")
    seats = [opponents[0], bad, *opponents[1:]]
    result = play(referee, seats, deadline_ms=3000)
    match_id = result["match_id"]
    complete(referee, result, seats)
    assert not result["forfeits"]
    assert result["strikes"][bad.bot_id] == 0

    records = bad.records()
    [dropped] = [r for r in records if r["kind"] == "dropped"]
    acts = [r for r in records if "act" in r.get("message", {})]
    assert [r["session"] for r in acts[:2]] == [1, 1]
    assert acts[1]["message"]["act"]["request_id"] == dropped["request_id"]
    assert acts[2]["session"] == 2
    assert acts[2]["message"]["act"]["request_id"] == dropped["request_id"]
    # Every move of its seat is what it answered, the resent request included.
    sent = {r["request_id"]: r["text"] for r in records if r["kind"] == "sent"}
    asked = [r["message"]["act"]["request_id"] for r in acts if r["session"] == 2]
    assert dropped["request_id"] in sent
    assert seat_moves(referee, match_id, 1) == [sent[acts[0]["message"]["act"]["request_id"]]] + [
        sent[rid] for rid in asked
    ]
    assert len(bad.received("welcome")) == 2


def test_disconnect_for_good_forfeits_after_grace(
    referee: RefereeProc,
    opponents: list[BotHandle],
    badbot: Callable[..., BotHandle],
) -> None:
    """A bot that leaves for good forfeits once the grace period is over; a
    stand-in plays its seat to the end; it is ranked last."""
    gone = badbot("vanish", "--drop-after", "2")
    seats = [*opponents, gone]
    result = play(referee, seats, deadline_ms=1500)
    match_id = result["match_id"]
    complete(referee, result, seats, forfeits=[gone.bot_id])
    assert result["ranks"][3] == 4
    reason = result["forfeit_reasons"][gone.bot_id]
    assert reason.startswith("disconnected"), reason
    assert f"grace {GRACE_S:g} s" in reason
    assert gone.proc is not None and gone.proc.wait(10) == 0
    assert gone.bot_id not in referee.sessions()
    # The stand-in finished the seat: it made as many moves as the others.
    assert len(seat_moves(referee, match_id, 3)) == len(seat_moves(referee, match_id, 0))
    assert len(of_match(gone, "act", match_id)) == 2


def test_wrong_tokens_are_unauthenticated(
    referee: RefereeProc,
    opponents: list[BotHandle],
    badbot: Callable[..., BotHandle],
    procs: Any,
) -> None:
    """Sessions with no token, a made-up token, another bot's token altered by one
    character, or a token in the wrong scheme end UNAUTHENTICATED before any
    message; the real bot's session is untouched."""
    victim = opponents[0]
    before = referee.sessions()[victim.bot_id]
    thief = referee.register("thief")
    thief.token = victim.token  # badtoken mode alters it or replaces it
    referee.run_badbot("badtoken", thief, wait=False, procs=procs)
    assert thief.proc is not None
    assert thief.proc.wait(30) == 0
    tries = {r["variant"]: r for r in thief.records() if r["kind"] == "token"}
    assert set(tries) == {"none", "garbage", "altered", "scheme"}
    for variant, attempt in tries.items():
        assert attempt["code"] == "UNAUTHENTICATED", variant
        assert attempt["received"] == [], variant
    after = referee.sessions()[victim.bot_id]
    assert after.capacity == before.capacity


def test_answers_to_requests_of_others_are_refused(
    referee: RefereeProc,
    opponents: list[BotHandle],
    badbot: Callable[..., BotHandle],
) -> None:
    """A bot that answers requests sent to another bot — another seat of its own
    match, a seat of a match it is not in, a made-up id — gets 'no open request'
    each time, and the other bot's moves are exactly its own answers."""
    victim = badbot(
        "record", "--pick", "last", "--delay-ms", "250", "--delay-count", "10", "--seed", "3"
    )
    assert victim.record is not None
    thief = badbot("steal", "--steal-from", str(victim.record))
    shared = [victim, thief, opponents[0], opponents[1]]
    apart = [opponents[2], opponents[1], victim, opponents[0]]
    first = "steal-a-" + uuid.uuid4().hex[:8]
    second = "steal-b-" + uuid.uuid4().hex[:8]
    referee.start_match(first, GAME, shared, seed=7, deadline_ms=2000, options=OPTIONS)
    referee.start_match(second, GAME, apart, seed=8, deadline_ms=2000, options=OPTIONS)
    results = [result_of(referee.wait_match(first)), result_of(referee.wait_match(second))]
    complete(referee, results[0], shared)
    complete(referee, results[1], apart)
    assert all(set(r["strikes"].values()) == {0} for r in results)

    stolen: dict[str, dict[str, Any]] = {}

    def every_theft_refused(records: list[dict[str, Any]]) -> bool:
        stolen.clear()
        stolen.update({r["request_id"]: r for r in records if r["kind"] == "stole"})
        asked = {m["act"]["request_id"] for m in victim.received("act")}
        refused = set(errors(thief))
        return asked <= set(stolen) and all(
            f"no open request '{rid}' for this bot" in refused for rid in stolen
        )

    records_until(thief, every_theft_refused, "an Error for every stolen answer")
    victim_acts = [r["message"]["act"] for r in victim.records() if "act" in r.get("message", {})]
    assert {act["request_id"] for act in victim_acts} <= set(stolen)
    assert {s["match_id"] for s in stolen.values()} == {"", first, second}
    # Some thefts came while the victim's request was still open (it waits 250 ms).
    answered_at = {r["request_id"]: r["t"] for r in victim.records() if r["kind"] == "sent"}
    early = [rid for rid, s in stolen.items() if rid in answered_at and s["t"] < answered_at[rid]]
    assert {stolen[rid]["match_id"] for rid in early} == {first, second}
    # The victim's seats played exactly what the victim answered.
    sent = {r["request_id"]: r["text"] for r in victim.records() if r["kind"] == "sent"}
    for match_id, seat in ((first, 0), (second, 2)):
        asked = [a["request_id"] for a in victim_acts if a["match_id"] == match_id]
        assert seat_moves(referee, match_id, seat) == [sent[rid] for rid in asked]
    # ... which were never the thief's choice (index 0) when there was a choice.
    choices = [
        (legal_texts(act), sent[act["request_id"]]) for act in victim_acts if len(act["legal"]) > 1
    ]
    assert choices and all(text == legal[-1] != legal[0] for legal, text in choices)


def test_sigusr1_logs_where_each_task_waits(referee: RefereeProc) -> None:
    """`kill -USR1`: every asyncio task's stack in the log, and the referee serves on."""
    referee.proc.send_signal(signal.SIGUSR1)
    wait_until(lambda: " waits at:" in referee.log.read_text(), 30, "the tasks' stacks")
    text = referee.log.read_text()
    assert 'File "' in text.split(" waits at:", 1)[1], text[-3000:]


def test_referee_still_serves_after_the_faults(referee: RefereeProc) -> None:
    """After every fault above, the referee process is alive and healthy."""
    from grpc_health.v1 import health_pb2

    assert referee.proc.poll() is None
    reply = referee.health.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
    assert reply.status == health_pb2.HealthCheckResponse.SERVING
    assert "Traceback" not in referee.log.read_text(encoding="utf-8")
