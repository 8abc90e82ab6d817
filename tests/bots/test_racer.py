"""The `racer` bot for Goof: never waits when it can act; weighs contested piles."""

from __future__ import annotations

import random
from typing import Any

import bots
import games
from bots.base import Turn
from bots.local import turn_for
from bots.racer import RacerBot, choose


def test_never_waits_when_it_can_act() -> None:
    state = games.get("goof").new_game(4, 9, {"rounds": 2})
    racers = [RacerBot(seat) for seat in range(4)]
    checked = 0
    while not state.is_over() and checked < 3000:
        actions = {}
        for seat in state.to_act():
            turn = turn_for(state, seat)
            action = racers[seat].act(turn)
            assert action in turn.legal
            if len(turn.legal) > 1:
                assert action != "wait"
            plays = [a for a in turn.legal if ">" in a]
            if plays:
                assert ">" in action, "a card that fits always goes before turning"
                line = {c.partition("@")[0] for c in turn.observation["tableau"][seat]["line"]}
                if any(a.partition(">")[0] in line for a in plays):
                    assert action.partition(">")[0] in line, "the goof line goes first"
            actions[seat] = action
            checked += 1
        state.apply_tick(actions)
    assert checked >= 3000 or state.is_over()


def entry(seat: int, line: list[str], waste_top: str | None = None) -> dict[str, Any]:
    return {
        "seat": seat,
        "line": [f"{card}@{seat}" for card in line],
        "waste_top": None if waste_top is None else f"{waste_top}@{seat}",
        "back_three": None,
    }


def goof_turn(tableau: list[dict[str, Any]], piles: dict[int, str], legal: list[str]) -> Turn:
    """Seat 0's turn at a hand-made table: `piles` maps pile ids to their top cards."""
    observation = {
        "tableau": tableau,
        "piles": [{"id": pile, "top": f"{top}@1"} for pile, top in piles.items()],
    }
    return Turn(game="goof", seat=0, players=len(tableau), view=observation, legal=(*legal, "turn"))


def test_an_uncontested_goof_line_card_goes_first() -> None:
    # Both plays are safe this tick: the goof-line card (worth more) goes first.
    turn = goof_turn(
        [entry(0, ["5H", "KS", "QS", "JS"], waste_top="3C"), entry(1, ["9D", "9S", "8S", "7S"])],
        {0: "4H", 1: "2C"},
        ["5H>p0", "3C>p1"],
    )
    assert {choose(turn, random.Random(seed)) for seed in range(20)} == {"5H>p0"}


def test_the_goof_line_goes_first_even_before_a_contested_waste_card() -> None:
    # Seat 1 is about to put its goof-line 3C on pile 1, which the racer's
    # waste 3C could also take: the racer's own goof line still comes first.
    turn = goof_turn(
        [entry(0, ["5H", "KS", "QS", "JS"], waste_top="3C"), entry(1, ["3C", "9S", "8S", "7S"])],
        {0: "4H", 1: "2C"},
        ["5H>p0", "3C>p1"],
    )
    assert {choose(turn, random.Random(seed)) for seed in range(20)} == {"5H>p0"}


def test_of_two_goof_line_cards_the_contested_one_goes_first() -> None:
    # Seat 1 is about to take pile 1 with its 3C; the racer's 5H on pile 0
    # will still fit next tick, its 3C would not.
    turn = goof_turn(
        [entry(0, ["5H", "3C", "QS", "JS"]), entry(1, ["3C", "9S", "8S", "7S"])],
        {0: "4H", 1: "2C"},
        ["5H>p0", "3C>p1"],
    )
    assert {choose(turn, random.Random(seed)) for seed in range(20)} == {"3C>p1"}


def test_a_card_that_opens_its_own_goof_line_goes_before_other_waste() -> None:
    # The waste 8S opens pile 0 for the goof-line 9S; the back-three 3C
    # only scores a point, and seat 1 wants pile 1 too.
    me = entry(0, ["9S", "KH", "QH", "JH"], waste_top="8S")
    me["back_three"] = "3C@0"
    turn = goof_turn(
        [me, entry(1, ["3C", "9D", "8D", "7D"])],
        {0: "7S", 1: "2C"},
        ["8S>p0", "3C>p1"],
    )
    assert {choose(turn, random.Random(seed)) for seed in range(20)} == {"8S>p0"}


def test_other_games_play_like_rules() -> None:
    state = games.get("golden10").new_game(3, 2)
    seat = state.to_act()[0]
    turn = turn_for(state, seat)
    assert RacerBot(1).act(turn) == bots.reference("rules", 1).act(turn)


def test_registered() -> None:
    assert isinstance(bots.reference("racer", 1), RacerBot)
    assert "search" in bots.REFERENCE_BOTS
