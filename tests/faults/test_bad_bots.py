"""Bad bots, each its own badbot.py process, against one referee process.

Each misbehaviour gets a clear status or strike, its match still ends with a
complete result, and while it runs the referee keeps playing other matches
between other bots: their per-move latency (the "ms" the replay events carry
for every answered move) stays below their deadline. The referee runs with a
200 ms default deadline, a 300 ms time bank, 3 strikes, a 2 s grace period,
at most 100 stray messages (answering no open request) a second per session
with a flood limit of 300, and the default 30 session opens a minute per bot.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
from grpc_health.v1 import health_pb2

from tests.support.processes import Processes, wait_until
from tests.support.referee import (
    MAX_STRIKES,
    TIME_BANK_MS,
    BotHandle,
    RefereeProc,
    check_complete,
    check_replay,
    launch_referee,
    records_until,
    replay_logs,
    result_of,
)

STRAY_MESSAGES_PER_SECOND = 100
FLOOD_LIMIT = 300
SESSION_OPENS_PER_MINUTE = 30  # the referee's default
CONTROL_DEADLINE_MS = 3000  # generous: other helpers load this machine too
ONE_ROUND = {"rounds": "1"}


@pytest.fixture(scope="module")
def referee(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RefereeProc]:
    """A referee with tight answer-rate bounds (defaults otherwise)."""
    workdir = tmp_path_factory.mktemp("badbots")
    procs = Processes(workdir)
    try:
        ref = launch_referee(
            workdir,
            procs,
            "--stray-messages-per-second",
            str(STRAY_MESSAGES_PER_SECOND),
            "--flood-limit",
            str(FLOOD_LIMIT),
        )
        yield ref
        ref.channel.close()
    finally:
        procs.close()


@pytest.fixture(scope="module")
def good(referee: RefereeProc) -> list[BotHandle]:
    """Five well-behaved `arena bot run random` processes: two opponents, three controls."""
    handles = [referee.run_bot("random", referee.register("random"), capacity=8) for _ in range(5)]
    referee.wait_connected(handles)
    return handles


@pytest.fixture
def badbot(referee: RefereeProc) -> Iterator[Callable[..., BotHandle]]:
    """`badbot(mode, *flags)`: register a bot and start badbot.py for this test."""
    group = Processes(referee.workdir)

    def make(mode: str, *extra: str, wait: bool = True) -> BotHandle:
        return referee.run_badbot(mode, referee.register(mode), *extra, wait=wait, procs=group)

    try:
        yield make
    finally:
        group.close()


def answered_ms(referee: RefereeProc, match_id: str) -> list[float]:
    """The answer time of every move a bot chose itself, from the match's replay events."""
    times: list[float] = []
    for _, _, events in replay_logs(referee, match_id):
        for event in events:
            if event["type"] == "action" and event["ms"] is not None:
                times.append(event["ms"])
            elif event["type"] == "tick":
                times += [move[3] for move in event["moves"] if move[3] is not None]
    return times


def play_beside(
    referee: RefereeProc,
    seats: Sequence[BotHandle],
    controls: Sequence[BotHandle],
    *,
    game: str = "golden10",
    deadline_ms: int,
    options: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Play a match with a bad bot while control matches between `controls` run
    one after another beside it; the bad match's result.

    Every control match finishes without a strike, and every move in them was
    answered well within its deadline: the bad bot slowed nobody else down.
    """
    match_id = "bad-" + uuid.uuid4().hex[:10]
    referee.start_match(
        match_id, game, seats, seed=5, deadline_ms=deadline_ms, options=options or ONE_ROUND
    )
    latencies: list[float] = []
    for number in range(40):  # bounded: the bad match ends long before
        control_id = f"control-{number}-" + uuid.uuid4().hex[:8]
        control = result_of(
            referee.play(
                control_id,
                "golden10",
                controls,
                seed=number,
                deadline_ms=CONTROL_DEADLINE_MS,
                options=ONE_ROUND,
            )
        )
        assert set(control["strikes"].values()) == {0} and not control["forfeits"], [
            e
            for _, _, evs in replay_logs(referee, control_id)
            for e in evs
            if e["type"] == "strike"
        ]
        latencies += answered_ms(referee, control_id)
        if referee.match(match_id).status != "running":
            break
    assert latencies, "the control matches had moves"
    assert max(latencies) < CONTROL_DEADLINE_MS, sorted(latencies)[-5:]
    result = result_of(referee.wait_match(match_id))
    check_complete(
        result,
        game,
        [bot.bot_id for bot in seats],
        seed=5,
        duplicate=False,
        forfeits=result["forfeits"],
    )
    check_replay(referee, match_id, result)
    return result


def of_match(bot: BotHandle, kind: str, match_id: str) -> list[dict[str, Any]]:
    """The messages of one kind the bot received for one match, in order."""
    return [m[kind] for m in bot.received(kind) if m[kind].get("match_id") == match_id]


def errors(bot: BotHandle) -> list[str]:
    return [m["error"]["message"] for m in bot.received("error")]


def statuses(bot: BotHandle) -> dict[int, dict[str, Any]]:
    """How each of the bot's streams ended, by session number."""
    return {r["session"]: r for r in bot.records() if r["kind"] == "status"}


def seat_moves(referee: RefereeProc, match_id: str, seat: int) -> list[str]:
    (_, log, _), *_ = replay_logs(referee, match_id)
    return [action for s, action in log["moves"] if s == seat]


def test_silent_bot_strikes_out_and_a_stand_in_plays_on(
    referee: RefereeProc, good: list[BotHandle], badbot: Callable[..., BotHandle]
) -> None:
    """A bot that never answers: a strike per request (deadline, then its time bank),
    a forfeit at the third, and a stand-in finishes its seat."""
    silent = badbot("silent")
    seats = [silent, good[0], good[1]]
    result = play_beside(referee, seats, good[2:], deadline_ms=200)
    match_id = result["match_id"]
    assert result["forfeits"] == [silent.bot_id]
    assert result["ranks"][0] == 3
    assert result["strikes"][silent.bot_id] == MAX_STRIKES
    assert result["forfeit_reasons"][silent.bot_id] == f"{MAX_STRIKES} strikes"
    records_until(silent, lambda _: of_match(silent, "forfeit", match_id), "its forfeit")
    strikes = of_match(silent, "strike", match_id)
    assert [s["strikes"] for s in strikes] == [1, 2, 3]
    assert all("deadline" in s["reason"] for s in strikes)
    assert len(of_match(silent, "act", match_id)) == MAX_STRIKES, "not asked after the forfeit"
    # The stand-in played every later move of the seat.
    assert len(seat_moves(referee, match_id, 0)) == len(seat_moves(referee, match_id, 1))


def test_flooding_bot_is_rate_limited_then_cut_off(
    referee: RefereeProc, good: list[BotHandle], badbot: Callable[..., BotHandle]
) -> None:
    """A bot that sends thousands of answers to a made-up request at once: each gets
    an Error until the rate is reached, those over it are dropped (one rate-limit
    Error), then its stream ends RESOURCE_EXHAUSTED; it reconnects within the grace
    period, gets the open request again, and its match completes."""
    flood = badbot("flood", "--flood-count", "3000")
    seats = [good[0], flood, good[1]]
    result = play_beside(referee, seats, good[2:], deadline_ms=3000)
    match_id = result["match_id"]
    assert not result["forfeits"]
    first = statuses(flood)[1]
    assert first["code"] == "RESOURCE_EXHAUSTED", first
    assert f"more than {FLOOD_LIMIT} messages" in first["details"]
    assert f"{STRAY_MESSAGES_PER_SECOND} stray messages per second" in first["details"]
    rate_errors = [e for e in errors(flood) if e.startswith("rate limit")]
    assert rate_errors and rate_errors[0] == (
        f"rate limit: at most {STRAY_MESSAGES_PER_SECOND} messages per second that answer "
        "no open request; messages over it are dropped"
    )
    # Until the rate bit, each made-up answer was refused with its own Error.
    refused = errors(flood).count(f"no open request '{'f' * 32}' for this bot")
    assert STRAY_MESSAGES_PER_SECOND <= refused < 3000
    records_until(flood, lambda _: of_match(flood, "match_end", match_id), "the match end")
    assert len(flood.received("welcome")) >= 2, "it came back on a new stream"
    assert seat_moves(referee, match_id, 1)


def test_opening_sessions_in_a_loop_is_bounded(
    referee: RefereeProc, good: list[BotHandle], badbot: Callable[..., BotHandle]
) -> None:
    """One token opening 40 sessions in a row: the first 30 open (each replacing the
    last), the rest fail RESOURCE_EXHAUSTED; a while later a session opens again and
    the bot plays a complete match."""
    many = badbot("sessions", "--sessions", "40", "--away-ms", "250", wait=False)
    opens = records_until(
        many,
        lambda records: (
            (found := [r for r in records if r["kind"] == "open"]) and len(found) == 40 and found
        ),
        "40 session opens",
    )
    codes = [entry["code"] for entry in opens]
    assert codes[:SESSION_OPENS_PER_MINUTE] == ["OK"] * SESSION_OPENS_PER_MINUTE
    assert all(entry["received"] == ["welcome"] for entry in opens if entry["code"] == "OK")
    refused = [entry for entry in opens if entry["code"] != "OK"]
    assert len(refused) >= 5 and {entry["code"] for entry in refused} == {"RESOURCE_EXHAUSTED"}
    assert f"more than {SESSION_OPENS_PER_MINUTE} sessions in a minute" in refused[0]["details"]
    referee.wait_connected([many])
    seats = [good[0], good[1], many]
    result = play_beside(referee, seats, good[2:], deadline_ms=3000)
    assert not result["forfeits"]
    assert result["strikes"][many.bot_id] == 0


def test_undecodable_bytes_end_the_stream_invalid_argument(
    referee: RefereeProc, good: list[BotHandle], badbot: Callable[..., BotHandle]
) -> None:
    """Random bytes that are no BotMessage end that stream with INVALID_ARGUMENT
    (docs/protocol.md); the bot reconnects, answers the same request, the match
    completes, and the referee stays healthy."""
    garbage = badbot("garbage", "--seed", "11")
    seats = [garbage, good[0], good[1]]
    result = play_beside(referee, seats, good[2:], deadline_ms=3000)
    match_id = result["match_id"]
    assert not result["forfeits"]
    assert statuses(garbage)[1]["code"] == "INVALID_ARGUMENT", statuses(garbage)
    [sent] = [r for r in garbage.records() if r["kind"] == "garbage"]
    acts = [
        (r["session"], r["message"]["act"])
        for r in garbage.records()
        if "act" in r.get("message", {})
    ]
    resent = next(act for session, act in acts if session == 2)
    assert resent["request_id"] == sent["request_id"], "the same request, asked again"
    records_until(garbage, lambda _: of_match(garbage, "match_end", match_id), "the match end")
    reply = referee.health.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
    assert reply.status == health_pb2.HealthCheckResponse.SERVING


def test_bad_indexes_and_unknown_cards_strike_with_reasons(
    referee: RefereeProc, good: list[BotHandle], badbot: Callable[..., BotHandle]
) -> None:
    """Index -1 and a Golden 10 card that does not exist each get a strike whose
    reason names the answer and the legal actions; the referee plays a legal
    default; two strikes of three are no forfeit."""
    bad = badbot("badcards")
    seats = [good[0], good[1], bad]
    result = play_beside(referee, seats, good[2:], deadline_ms=3000)
    match_id = result["match_id"]
    assert not result["forfeits"] and result["strikes"][bad.bot_id] == 2
    records_until(bad, lambda _: of_match(bad, "match_end", match_id), "the match end")
    acts = of_match(bad, "act", match_id)
    first, second = ([a["text"] for a in act["legal"]] for act in acts[:2])
    reasons = [s["reason"] for s in of_match(bad, "strike", match_id)]
    assert reasons == [
        f"illegal answer index -1; legal: {', '.join(first)}",
        f"illegal answer '99G'; legal: {', '.join(second)}",
    ]
    moves = seat_moves(referee, match_id, 2)
    assert moves[0] in first and moves[1] in second


def test_a_typed_goof_play_of_another_seats_card_is_struck(
    referee: RefereeProc, good: list[BotHandle], badbot: Callable[..., BotHandle]
) -> None:
    """A typed play whose card names another seat's deck contradicts the move: a strike
    that says so, though its suit, rank and pile are those of a legal play."""
    bad = badbot("wrongowner")
    result = play_beside(
        referee,
        [bad, good[0]],
        good[2:],
        game="goof",
        deadline_ms=3000,
        options={"goof_pile": "3", "rounds": "1"},
    )
    match_id = result["match_id"]
    assert not result["forfeits"] and result["strikes"][bad.bot_id] == 1
    records_until(bad, lambda _: of_match(bad, "match_end", match_id), "the match end")
    sent = next(r for r in bad.records() if r["kind"] == "sent" and "typed" in r)
    play = sent["typed"]["goof"]["play"]
    (reason,) = [s["reason"] for s in of_match(bad, "strike", match_id)]
    assert reason.startswith("illegal answer '")
    assert f"(a card from the deck of seat {play['card']['owner']}, played by seat 0)" in reason


def test_stalling_goof_bot_holds_each_tick_at_most_its_deadline(
    referee: RefereeProc, good: list[BotHandle], badbot: Callable[..., BotHandle]
) -> None:
    """In Goof every seat acts each tick. A bot that answers its first three requests
    0.8 s before the 2 s deadline holds those ticks (no strike), the others' answers
    are applied first, in the order they came, and the match ends in bounded time."""
    stall = badbot("stall", "--delay-count", "3", "--stall-margin-ms", "800")
    seats = [stall, good[0], good[1]]
    deadline_ms = 2000
    started = time.monotonic()
    result = play_beside(
        referee,
        seats,
        good[2:],
        game="goof",
        deadline_ms=deadline_ms,
        options={"goof_pile": "3", "rounds": "1"},
    )
    elapsed = time.monotonic() - started
    assert not result["forfeits"] and result["strikes"][stall.bot_id] == 0
    (_, _, events), *_ = replay_logs(referee, result["match_id"])
    ticks = [e for e in events if e["type"] == "tick"]
    # Every seat is asked every tick, so the stalled requests are those of the first three
    # ticks. (Told apart by time instead, a quick answer slowed by a loaded machine looked
    # stalled.) A stalled answer took at least its stall; an answer's time is a lower bound.
    held = ticks[:3]
    assert len(ticks) >= 3, [t["moves"] for t in ticks]
    for tick in held:
        moves = tick["moves"]
        assert moves[-1][0] == 0, "the stalled seat's answer came last and was applied last"
        assert moves[-1][3] >= deadline_ms - 800, moves
        assert all(m[3] is not None for m in moves), "every seat answered"
        assert moves[-1][3] < deadline_ms + TIME_BANK_MS
        assert all(m[3] < moves[-1][3] for m in moves[:-1])
    # Three held ticks of at most the deadline each, the rest at bot speed.
    assert elapsed < 3 * deadline_ms / 1000 + 30


def test_referee_is_healthy_after_the_bad_bots(referee: RefereeProc) -> None:
    """After every bad bot above, the referee process is alive, serving, traceback-free."""
    assert referee.proc.poll() is None
    reply = referee.health.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
    assert reply.status == health_pb2.HealthCheckResponse.SERVING
    assert "Traceback" not in referee.log.read_text(encoding="utf-8")
    assert wait_until(lambda: referee.sessions() is not None, 5, "ListSessions")
