"""The `search` bot: legal answers within its budget in every phase, and it beats random."""

from __future__ import annotations

import dataclasses
import random
import time

import pytest

import bots
import games
from bots.local import play_game, turn_for
from bots.search import BUDGET_ENV, SearchBot, _standing
from games.goodge import game_over as _goodge_decides

BUDGET_S = 0.05
# Generous: the machine may be loaded; the point is that the bot stops by itself.
MARGIN_S = 1.0


def turns_of_every_phase(game: str, players: int, seed: int) -> list[bots.Turn]:
    """Turns from a game between rules bots, at least one of every phase."""
    state = games.get(game).new_game(players, seed)
    rules = bots.reference("rules", seed)
    out: dict[str, list[bots.Turn]] = {}
    while not state.is_over() and state.round <= 2:
        seat = state.to_act()[0]
        turn = turn_for(state, seat)
        out.setdefault(turn.observation["phase"], []).append(turn)
        state.apply(seat, rules.act(turn))
    rng = random.Random(seed)
    return [
        turn for phase in sorted(out) for turn in rng.sample(out[phase], min(3, len(out[phase])))
    ]


@pytest.mark.parametrize(
    ("game", "players"), [("goodge", 4), ("goodge", 3), ("golden10", 4), ("golden10", 5)]
)
def test_answers_a_legal_action_within_its_budget(game: str, players: int) -> None:
    bot = SearchBot(3, time_budget_s=BUDGET_S)
    turns = turns_of_every_phase(game, players, 17)
    phases = {turn.observation["phase"] for turn in turns}
    assert phases == ({"bid", "discard", "trump", "play"} if game == "goodge" else {"play"})
    for turn in turns:
        started = time.perf_counter()
        action = bot.act(turn)
        assert action in turn.legal
        assert time.perf_counter() - started < BUDGET_S + MARGIN_S


def test_a_short_move_deadline_cuts_the_budget() -> None:
    # Thinking 10 s a move is allowed, but the referee gives each move 0.2 s:
    # the bot keeps to half of that, well inside the deadline.
    bot = SearchBot(3, time_budget_s=10.0)
    for turn in turns_of_every_phase("goodge", 4, 17):
        timed = dataclasses.replace(turn, deadline_s=0.2)
        started = time.perf_counter()
        assert bot.act(timed) in turn.legal
        assert time.perf_counter() - started < 0.1 + MARGIN_S


def test_budget_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BUDGET_ENV, "0.5")
    assert SearchBot(1).time_budget_s == 0.5
    assert SearchBot(1, time_budget_s=0.1).time_budget_s == 0.1
    monkeypatch.delenv(BUDGET_ENV)
    assert bots.reference("search", 1).time_budget_s == 0.2  # type: ignore[attr-defined]
    monkeypatch.setenv(BUDGET_ENV, "-1")
    with pytest.raises(ValueError, match=BUDGET_ENV):
        SearchBot(1)


def test_plays_goof_like_the_racer() -> None:
    state = play_game("goof", [SearchBot(1), bots.reference("racer", 2)], 5, {"rounds": 1})
    assert state.is_over()


def test_beats_random_at_golden10() -> None:
    """Duplicate games: the same deals with the seats rotated; fixed draws, not time."""
    better = 0
    search_points = random_points = 0.0
    games_played = 0
    for seed in range(5):
        for shift in range(4):
            lineup: list[bots.Bot] = [bots.reference("random", seed * 10 + i) for i in range(4)]
            lineup[shift] = SearchBot(seed, playouts=4)
            scores = play_game("golden10", lineup, seed, {"rounds": 1}).result().scores
            others = sum(scores) - scores[shift]
            better += scores[shift] < others / 3
            search_points += scores[shift]
            random_points += others / 3
            games_played += 1
    # Lower is better. Equal bots would each be ahead in about half the games.
    assert games_played == 20
    assert better >= 14, better
    assert search_points < 0.6 * random_points, (search_points, random_points)


def test_the_last_round_is_searched_for_places() -> None:
    # Places: 1 for first, 0 for last, shared when level; lowest total wins Golden 10.
    assert _standing([10, 20, 30, 40], 0, lower_wins=True) == 1.0
    assert _standing([10, 20, 30, 40], 0, lower_wins=False) == 0.0
    assert _standing([10, 20, 20, 40], 1, lower_wins=True) == pytest.approx(1.5 / 3)
    # A Goodge game ends when one player alone stands at 500 or more, or at the cap.
    assert _goodge_decides([510, 480, 200], round_number=7, max_rounds=200)
    assert not _goodge_decides([510, 510, 200], round_number=7, max_rounds=200)
    assert not _goodge_decides([495, 480, 200], round_number=7, max_rounds=200)
    assert _goodge_decides([95, 80, 20], round_number=200, max_rounds=200)


def test_a_fixed_number_of_playouts_ignores_the_clock() -> None:
    # A budget of a microsecond would allow one draw; 3 playouts make 3, and
    # two bots with one seed answer alike: a measurement that reproduces.
    turns = turns_of_every_phase("goodge", 4, 17)
    answers = []
    for _ in range(2):
        bot = SearchBot(5, time_budget_s=1e-6, playouts=3)
        moves = []
        for turn in turns:
            moves.append(bot.act(turn))
            if len(turn.legal) > 1:
                assert bot.samples_last_move == 3
        answers.append(moves)
    assert answers[0] == answers[1]
    with pytest.raises(ValueError, match="playouts"):
        SearchBot(1, playouts=0)
