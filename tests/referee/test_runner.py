"""referee.runner: one match through the engines, with fake seat channels (no network)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

import games
from games.core import rank_scores
from ladder.records import GameStart, MatchRequest, Notice, Strike
from referee.channels import ActRequest, Answer, SeatGone, SeatTimeout
from referee.runner import Event, GameOutcome, Limits, MatchRunner, aggregate, rotation

Policy = Callable[[ActRequest, int], Answer | Awaitable[Answer]]
"""How a fake bot answers its n-th request (n from 1); may raise SeatTimeout/SeatGone."""


class FakeSeat:
    """A SeatChannel in this process: answers by a policy, records everything."""

    def __init__(self, bot_id: str, policy: Policy) -> None:
        self.bot_id = bot_id
        self.policy = policy
        self.requests: list[ActRequest] = []
        self.timeouts: list[float] = []
        self.notices: list[Notice] = []

    async def act(self, request: ActRequest, timeout_s: float) -> Answer:
        self.requests.append(request)
        self.timeouts.append(timeout_s)
        answer = self.policy(request, len(self.requests))
        if not isinstance(answer, Answer):
            answer = await answer
        return answer

    async def notify(self, notice: Notice) -> None:
        self.notices.append(notice)

    def kinds(self) -> list[str]:
        return [notice.kind for notice in self.notices]


def first_legal(request: ActRequest, n: int) -> Answer:
    return Answer(request.request_id, index=0)


def last_legal(request: ActRequest, n: int) -> Answer:
    return Answer(request.request_id, action=request.legal[-1])


def random_legal(seed: int) -> Policy:
    rng = random.Random(seed)

    def policy(request: ActRequest, n: int) -> Answer:
        return Answer(request.request_id, action=rng.choice(request.legal))

    return policy


def late(request: ActRequest, n: int) -> Answer:
    raise SeatTimeout()


def gone(request: ActRequest, n: int) -> Answer:
    raise SeatGone("disconnected for 2.0 s (grace 2 s)")


def faulty_at(calls: set[int], fault: Policy, otherwise: Policy = first_legal) -> Policy:
    """`fault` on the given calls (numbered from 1), `otherwise` on the rest."""

    def policy(request: ActRequest, n: int) -> Answer | Awaitable[Answer]:
        return fault(request, n) if n in calls else otherwise(request, n)

    return policy


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def match_request(
    game: str = "golden10",
    bots: tuple[str, ...] = ("a", "b", "c"),
    options: dict[str, Any] | None = None,
    duplicate: bool = False,
    deadline_ms: int = 100,
    seed: int = 11,
) -> MatchRequest:
    return MatchRequest(
        id="m1",
        game=game,
        players=len(bots),
        bot_ids=bots,
        seed=seed,
        options={"rounds": 1} if options is None and game == "golden10" else options or {},
        duplicate=duplicate,
        deadline_ms=deadline_ms,
    )


def play(
    request: MatchRequest,
    seats: list[FakeSeat],
    limits: Limits | None = None,
    clock: Callable[[], float] | None = None,
    on_latency: Callable[[float, bool], None] | None = None,
) -> tuple[dict[str, Any], list[Any], list[Event]]:
    """Run the match to its end; its result (as JSON, as stored), replays and every event."""
    events: list[Event] = []
    extra: dict[str, Any] = {}
    if clock is not None:
        extra["clock"] = clock
    if on_latency is not None:
        extra["on_latency"] = on_latency
    runner = MatchRunner(
        request,
        {seat.bot_id: seat for seat in seats},
        limits or Limits(time_bank_ms=1000, max_strikes=3),
        on_event=events.append,
        **extra,
    )
    result, replays = asyncio.run(asyncio.wait_for(runner.run(), 60))
    return result.to_json(), replays, events


def of_type(events: list[Event], kind: str) -> list[Event]:
    return [event for event in events if event["type"] == kind]


# A clean match


def test_a_clean_match_is_the_game_the_engine_plays() -> None:
    seats = [FakeSeat(bot, random_legal(i)) for i, bot in enumerate("abc")]
    request = match_request()
    result, replays, events = play(request, seats)
    assert len(replays) == 1
    replayed = games.replay(replays[0].log)
    assert result["scores"] == list(replayed.result().scores)
    assert result["ranks"] == list(rank_scores(result["scores"], higher_is_better=False))
    assert (result["forfeits"], result["strikes"]) == ([], {"a": 0, "b": 0, "c": 0})
    assert of_type(events, "strike") == of_type(events, "forfeit") == []
    # Every move the log holds is the answer the bot gave, in order.
    moves = [(event["seat"], event["action"]) for event in of_type(events, "action")]
    assert [tuple(move) for move in replays[0].log["moves"]] == moves
    assert all(event["ms"] is not None for event in of_type(events, "action"))
    for seat_number, seat in enumerate(seats):
        # The match's end is told by whoever stores it (tests/referee/test_match_end.py).
        assert seat.kinds()[0] == "game_start" and seat.kinds()[-1] == "game_end"
        start = seat.notices[0]
        assert isinstance(start, GameStart)
        assert (start.seat, start.game_index, start.game) == (seat_number, 0, "golden10")
        assert list(start.seats) == ["a", "b", "c"]
        for act, timeout_s in zip(seat.requests, seat.timeouts, strict=True):
            assert (act.match_id, act.game, act.seat, act.players) == (
                "m1",
                "golden10",
                seat_number,
                3,
            )
            assert act.observation["seat"] == seat_number  # only its own view
            assert (act.deadline_ms, act.time_bank_ms, timeout_s) == (100, 1000, pytest.approx(1.1))
        assert len(seat.requests) == sum(1 for s, _ in moves if s == seat_number)


# Strikes and forfeits


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        (
            lambda request, n: Answer(request.request_id, index=len(request.legal)),
            "illegal answer index",
        ),
        (lambda request, n: Answer(request.request_id, index=-1), "illegal answer index -1"),
        (
            lambda request, n: Answer(request.request_id, action="nonsense"),
            "illegal answer 'nonsense'",
        ),
        (lambda request, n: Answer(request.request_id), "illegal answer (empty)"),
        (late, "no answer before the deadline"),
    ],
    ids=["index-too-big", "index-negative", "not-legal-text", "empty", "late"],
)
def test_a_bad_answer_is_a_strike_and_a_stand_in_plays(fault: Policy, reason: str) -> None:
    seats = [
        FakeSeat("a", first_legal),
        FakeSeat("b", faulty_at({2}, fault)),
        FakeSeat("c", last_legal),
    ]
    result, replays, events = play(match_request(), seats)
    strikes = of_type(events, "strike")
    assert len(strikes) == 1
    strike = strikes[0]
    assert (strike["bot"], strike["seat"], strike["strikes"]) == ("b", 1, 1)
    assert strike["reason"].startswith(reason)
    # The bot was told, with the limit.
    told = [n for n in seats[1].notices if n.kind == "strike"]
    assert len(told) == 1
    assert isinstance(told[0], Strike)
    assert (told[0].reason, told[0].strikes, told[0].max_strikes) == (strike["reason"], 1, 3)
    # The move after the strike is the stand-in's: legal for that request, and in the log.
    faulty_request = seats[1].requests[1]
    after = events[events.index(strike) + 1]
    assert after["type"] == "action" and after["seat"] == 1 and after["ms"] is None
    assert after["action"] in faulty_request.legal
    position = of_type(events, "action").index(after)
    assert replays[0].log["moves"][position] == [1, after["action"]]
    # One strike is not a forfeit: the bot played on and the game ended normally.
    assert len(seats[1].requests) > 2
    assert result["forfeits"] == [] and result["strikes"]["b"] == 1
    assert games.replay(replays[0].log).is_over()
    if reason.startswith("no answer"):
        # A timeout spends the whole time bank: the next request has none left.
        assert seats[1].requests[2].time_bank_ms == 0
        assert seats[1].timeouts[2] == pytest.approx(0.1)
    else:
        assert seats[1].requests[2].time_bank_ms == 1000


def test_max_strikes_forfeits_the_bot_which_is_ranked_last() -> None:
    seats = [FakeSeat("a", random_legal(1)), FakeSeat("b", random_legal(2)), FakeSeat("c", late)]
    result, replays, events = play(
        match_request(options={"rounds": 2}), seats, Limits(time_bank_ms=1000, max_strikes=2)
    )
    assert [event["strikes"] for event in of_type(events, "strike")] == [1, 2]
    forfeits = of_type(events, "forfeit")
    assert len(forfeits) == 1 and forfeits[0]["bot"] == "c"
    assert forfeits[0]["reason"] == "2 strikes"
    # After the forfeit a stand-in plays: the bot is asked nothing more, but still told.
    assert len(seats[2].requests) == 2
    assert seats[2].kinds()[:4] == ["game_start", "strike", "strike", "forfeit"]
    assert seats[2].kinds()[-1] == "game_end"
    assert games.replay(replays[0].log).is_over()
    assert result["forfeits"] == ["c"]
    assert result["forfeit_reasons"] == {"c": "2 strikes"}
    assert result["strikes"] == {"a": 0, "b": 0, "c": 2}
    assert result["ranks"][2] == 3
    assert result["ranks"][:2] == list(rank_scores(result["scores"][:2], higher_is_better=False))


def test_a_seat_gone_forfeits_at_once_without_strikes() -> None:
    seats = [
        FakeSeat("a", first_legal),
        FakeSeat("b", faulty_at({3}, gone)),
        FakeSeat("c", first_legal),
    ]
    result, _, events = play(match_request(), seats)
    assert of_type(events, "strike") == []
    forfeit = of_type(events, "forfeit")
    assert len(forfeit) == 1
    assert forfeit[0]["bot"] == "b" and forfeit[0]["reason"].startswith("disconnected: ")
    assert len(seats[1].requests) == 3
    assert result["forfeits"] == ["b"] and result["ranks"][1] == 3
    assert [n.kind for n in seats[1].notices].count("forfeit") == 1


def test_a_forfeit_carries_over_to_the_later_games_of_a_duplicate_match() -> None:
    seats = [FakeSeat("a", first_legal), FakeSeat("b", gone), FakeSeat("c", first_legal)]
    result, replays, _ = play(match_request(duplicate=True), seats)
    assert len(replays) == 3
    assert len(seats[1].requests) == 1  # stand-ins for all the rest
    assert result["forfeits"] == ["b"] and result["ranks"][1] == 3


# Duplicate rotation


@pytest.mark.parametrize(
    ("game", "bots", "options"),
    [
        ("golden10", ("a", "b", "c"), {"rounds": 1}),
        ("goodge", ("a", "b", "c", "d"), {"max_rounds": 1}),
    ],
)
def test_duplicate_rotation_seats_every_bot_in_every_seat(
    game: str, bots: tuple[str, ...], options: dict[str, Any]
) -> None:
    seats = [FakeSeat(bot, random_legal(i)) for i, bot in enumerate(bots)]
    request = match_request(game, bots, options, duplicate=True)
    result, replays, events = play(request, seats)
    n = len(bots)
    assert len(replays) == len(result["games"]) == n
    for index, (replay, played) in enumerate(zip(replays, result["games"], strict=True)):
        assert replay.game_index == index
        assert tuple(played["seats"]) == tuple(replay.seats) == rotation(bots, index)
        assert played["seed"] == str(replay.log["seed"]) == str(request.seed)
        assert played["scores"] == list(games.replay(replay.log).result().scores)
    for bot in bots:
        assert sorted(played["seats"].index(bot) for played in result["games"]) == list(range(n))
    # Rotation 1 moves each bot one seat on: entry i sits at seat i + 1.
    assert replays[1].seats == (bots[-1], *bots[:-1])
    # The same deal every time: each seat is first shown the same hand in every game.
    firsts = [
        next(e for e in of_type(events, "game_start") if e["game_index"] == i) for i in range(n)
    ]
    assert [e["seats"] for e in firsts] == [list(rotation(bots, i)) for i in range(n)]
    opening: dict[tuple[int, int], list[str]] = {}
    for seat in seats:
        for act in seat.requests:
            opening.setdefault((act.game_index, act.seat), act.observation["hand"])
    for position in range(n):
        hands = [opening[index, position] for index in range(n)]
        assert hands == [hands[0]] * n
    # Each bot was told its own seat in every game.
    for seat in seats:
        starts = [notice for notice in seat.notices if notice.kind == "game_start"]
        assert [s.seat for s in starts] == [
            list(rotation(bots, i)).index(seat.bot_id) for i in range(n)
        ]
    # Scores are summed per bot over the rotations; ranks follow the totals.
    for entry, bot in enumerate(bots):
        assert result["scores"][entry] == sum(
            played["scores"][played["seats"].index(bot)] for played in result["games"]
        )
    higher = games.get(game).higher_is_better
    assert higher == (game == "goodge")
    assert result["ranks"] == list(rank_scores(result["scores"], higher_is_better=higher))


def test_without_duplicate_one_game_is_played() -> None:
    seats = [FakeSeat(bot, first_legal) for bot in "abc"]
    result, replays, _ = play(match_request(duplicate=False), seats)
    assert len(replays) == len(result["games"]) == 1
    assert result["scores"] == result["games"][0]["scores"]


# Goof ticks


class Conductor:
    """Holds every seat's answer of a tick, then releases them in a chosen order.

    Some seats in some ticks time out instead; the runner must resolve the
    tick in the order the answers arrived, late seats last in seat order.
    """

    def __init__(self, players: int, seed: int) -> None:
        self.players = players
        self.rng = random.Random(seed)
        self.waiting: dict[int, tuple[ActRequest, asyncio.Future[Answer]]] = {}
        self.expected: list[list[int]] = []
        self.late_seats: list[list[int]] = []
        self._tasks: set[asyncio.Task[None]] = set()

    def seat(self, bot_id: str) -> FakeSeat:
        return FakeSeat(bot_id, lambda request, n: self.act(request))

    async def act(self, request: ActRequest) -> Answer:
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self.waiting[request.seat] = (request, future)
        if len(self.waiting) == self.players:
            waiting, self.waiting = self.waiting, {}
            task = asyncio.create_task(self._release(waiting))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return await future

    async def _release(self, waiting: dict[int, tuple[ActRequest, asyncio.Future[Answer]]]) -> None:
        order = self.rng.sample(sorted(waiting), len(waiting))
        late = sorted(seat for seat in order if self.rng.random() < 0.15)
        self.expected.append([seat for seat in order if seat not in late] + late)
        self.late_seats.append(late)
        for seat in order:
            request, future = waiting[seat]
            if seat in late:
                future.set_exception(SeatTimeout())
            else:
                future.set_result(Answer(request.request_id, action=self.rng.choice(request.legal)))
            for _ in range(3):  # let the runner take this answer before the next one comes
                await asyncio.sleep(0)


def test_goof_ticks_are_resolved_in_arrival_order() -> None:
    conductor = Conductor(players=3, seed=5)
    seats = [conductor.seat(bot) for bot in "abc"]
    request = match_request(
        "goof", ("a", "b", "c"), {"rounds": 1, "goof_pile": 4, "max_ticks": 150}
    )
    result, replays, events = play(request, seats, Limits(time_bank_ms=1000, max_strikes=10_000))
    ticks = of_type(events, "tick")
    assert len(ticks) == len(conductor.expected) > 5
    assert any(conductor.late_seats) and any(
        len(o) == 3 and o != sorted(o) for o in conductor.expected
    )
    for tick, expected, late_seats, logged in zip(
        ticks, conductor.expected, conductor.late_seats, replays[0].log["moves"], strict=True
    ):
        assert [move[0] for move in tick["moves"]] == expected
        assert [move[0] for move in logged] == expected
        for seat, _action, _took, ms in tick["moves"]:
            assert (ms is None) == (seat in late_seats)
    assert result["strikes"] == {
        bot: sum(late.count(seat) for late in conductor.late_seats)
        for seat, bot in enumerate("abc")
    }
    assert games.replay(replays[0].log).result() == games.Result(
        tuple(result["scores"]), tuple(result["games"][0]["ranks"])
    )


def test_a_goof_answer_is_placed_by_when_it_reached_the_referee_not_the_relays_delay() -> None:
    """Bot a, whose stream another replica holds, answers each tick in 1 ms, and the relay
    takes 60 ms to bring the answer back; b and c, held here, take 20 and 40 ms. a's card
    reached the referee first: it is applied first, whatever the relay's delay."""

    def answering(after_s: float, bot_s: float | None) -> Policy:
        async def answer(request: ActRequest) -> Answer:
            await asyncio.sleep(after_s)
            relayed = bot_s is not None
            return Answer(request.request_id, index=0, relayed=relayed, bot_s=bot_s)

        return lambda request, n: answer(request)

    seats = [
        FakeSeat("a", answering(0.06, 0.001)),
        FakeSeat("b", answering(0.02, None)),
        FakeSeat("c", answering(0.04, None)),
    ]
    request = match_request("goof", ("a", "b", "c"), {"rounds": 1, "max_ticks": 4})
    _, _, events = play(request, seats, Limits(time_bank_ms=1000, max_strikes=10))
    ticks = of_type(events, "tick")
    assert ticks and all(tick["moves"][0][0] == 0 for tick in ticks), ticks


# The time bank


def test_the_time_bank_pays_for_slow_answers_and_a_timeout_empties_it() -> None:
    clock = FakeClock()
    delays_ms = [50, 250, 400, 900, 10, 100]

    def slow(request: ActRequest, n: int) -> Answer:
        delay = delays_ms[n - 1] if n <= len(delays_ms) else 0
        timeout_ms = (request.deadline_ms + request.time_bank_ms) / 1000 * 1000
        if delay > timeout_ms:  # what a real channel does: give up at the timeout
            clock.now += timeout_ms / 1000
            raise SeatTimeout()
        clock.now += delay / 1000
        return Answer(request.request_id, index=0)

    latencies: list[float] = []
    seats = [FakeSeat("a", slow), FakeSeat("b", first_legal), FakeSeat("c", first_legal)]
    result, _, events = play(
        match_request(deadline_ms=100),
        seats,
        Limits(time_bank_ms=1000, max_strikes=3),
        clock=clock,
        on_latency=lambda seconds, relayed: latencies.append(seconds),
    )
    banks = [act.time_bank_ms for act in seats[0].requests[:6]]
    # 50 ms: within the deadline. 250: 150 from the bank. 400: 300 more. 900 > 100 + 550:
    # timeout, the bank is empty. Then only the deadline is left.
    assert banks == [1000, 1000, 850, 550, 0, 0]
    assert seats[0].timeouts[:6] == pytest.approx([1.1, 1.1, 0.95, 0.65, 0.1, 0.1])
    assert [act.time_bank_ms for act in seats[1].requests] == [1000] * len(seats[1].requests)
    strikes = of_type(events, "strike")
    assert len(strikes) == 1 and strikes[0]["bot"] == "a" and "deadline" in strikes[0]["reason"]
    assert result["strikes"]["a"] == 1 and result["forfeits"] == []
    mine = [e["ms"] for e in of_type(events, "action") if e["seat"] == 0][:6]
    assert mine == [50.0, 250.0, 400.0, None, 10.0, 100.0]
    # Latency is reported for every answer that came, not for the timeout.
    assert [seconds for seconds in latencies if seconds > 0] == pytest.approx(
        [0.05, 0.25, 0.4, 0.01, 0.1]
    )


def test_a_relayed_answer_is_charged_the_bots_own_time_not_the_relays() -> None:
    """An answer that its holder measured at 20 ms but the relay brought 700 ms late (lost,
    then fetched with the holder's verdict) costs the bot nothing from its time bank."""
    clock = FakeClock()

    def relayed_late(request: ActRequest, n: int) -> Answer:
        clock.now += 0.7
        return Answer(request.request_id, index=0, relayed=True, bot_s=0.02)

    seats = [FakeSeat("a", relayed_late), FakeSeat("b", first_legal), FakeSeat("c", first_legal)]
    result, _, events = play(
        match_request(deadline_ms=100), seats, Limits(time_bank_ms=1000, max_strikes=3), clock
    )
    assert [act.time_bank_ms for act in seats[0].requests] == [1000] * len(seats[0].requests)
    assert {e["ms"] for e in of_type(events, "action") if e["seat"] == 0} == {20.0}
    assert result["strikes"]["a"] == 0


# Aggregation


def outcome(seats: tuple[str, ...], scores: tuple[int, ...], higher: bool) -> GameOutcome:
    return GameOutcome(
        seats=seats,
        result=games.Result(scores, rank_scores(scores, higher)),
        rounds=1,
        log={
            "game": "x",
            "players": len(seats),
            "seed": 1,
            "options": {},
            "deal": None,
            "moves": [],
        },
    )


def hand_made(game: str, forfeits: list[str]) -> dict[str, Any]:
    bots = ("a", "b", "c")
    higher = games.get(game).higher_is_better
    request = match_request(game, bots, {}, duplicate=True)
    outcomes = [
        outcome(rotation(bots, 0), (1, 2, 3), higher),  # a b c
        outcome(rotation(bots, 1), (10, 20, 30), higher),  # c a b
        outcome(rotation(bots, 2), (100, 200, 300), higher),  # b c a
    ]
    return aggregate(request, outcomes, forfeits).to_json()


def test_aggregate_sums_each_bot_over_the_rotations() -> None:
    result = hand_made("golden10", [])
    # a: 1 + 20 + 300, b: 2 + 30 + 100, c: 3 + 10 + 200
    assert result["scores"] == [321, 132, 213]
    assert result["ranks"] == [3, 1, 2]  # lowest is best in Golden 10
    assert result["forfeits"] == []
    assert [g["seats"] for g in result["games"]] == [
        ["a", "b", "c"],
        ["c", "a", "b"],
        ["b", "c", "a"],
    ]
    assert [g["scores"] for g in result["games"]] == [[1, 2, 3], [10, 20, 30], [100, 200, 300]]
    assert (result["match_id"], result["game"], result["bots"]) == (
        "m1",
        "golden10",
        ["a", "b", "c"],
    )
    assert hand_made("goodge", [])["ranks"] == [1, 3, 2]  # highest is best in Goodge


def test_aggregate_ranks_forfeits_last_whatever_their_score() -> None:
    result = hand_made("goodge", ["a"])  # a has the best Goodge total
    assert result["scores"] == [321, 132, 213]
    assert result["ranks"] == [3, 2, 1]
    assert result["forfeits"] == ["a"]
    both = hand_made("golden10", ["c", "b", "c"])
    assert both["ranks"] == [1, 2, 2]  # forfeits share the last rank
    assert both["forfeits"] == ["b", "c"]


def test_aggregate_ties_share_a_rank() -> None:
    bots = ("a", "b", "c")
    request = match_request("golden10", bots, {}, duplicate=False)
    result = aggregate(request, [outcome(bots, (5, 5, 9), False)], []).to_json()
    assert result["ranks"] == [1, 1, 3]
