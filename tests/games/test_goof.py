"""Game of Goof: one hand-built scenario per rule, plus ticks, apply() and replay."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any

import pytest

import games
from games import goof
from games.core import IllegalAction

# Fillers go King first, so Aces (the only cards that start piles) stay out of
# the way unless a test places them.
FILLER = [rank + suit for rank in reversed(goof.RANKS) for suit in goof.SUITS]
HIGH_LINE = ["KS", "KH", "KD", "KC"]


def deck(
    line: Sequence[str], goof_cards: Sequence[str] = (), stock: Sequence[str] = (), size: int = 13
) -> list[str]:
    """A deck in dealing order: `size` goof cards (the given ones on top, then
    fillers), the goof line, then the stock (the given cards on top)."""
    used = [*goof_cards, *line, *stock]
    assert len(set(used)) == len(used)
    rest = [card for card in FILLER if card not in used]
    fill = size - len(goof_cards)
    return [*goof_cards, *rest[:fill], *line, *stock, *rest[fill:]]


def new(*decks: list[str], seed: int = 1, **options: object) -> goof.GoofState:
    return goof.new_game(len(decks), seed, options, deal={"decks": list(decks)})


def tick(state: goof.GoofState, *actions: str, order: Sequence[int] | None = None) -> list[Any]:
    """Apply one tick (seat i plays actions[i]) and return (seat, notation, took_effect)."""
    result = state.apply_tick(dict(enumerate(actions)), order)
    return [(seat, str(action), ok) for seat, action, ok in result]


def legal(state: goof.GoofState, seat: int) -> list[str]:
    return [str(action) for action in state.legal_actions(seat)]


def mine(state: goof.GoofState, seat: int) -> dict[str, Any]:
    tableau: dict[str, Any] = state.observation(seat)["tableau"][seat]
    return tableau


def piles(state: goof.GoofState) -> list[tuple[int, str, int]]:
    return [(p["id"], p["top"], p["size"]) for p in state.observation(0)["piles"]]


# -- notation, options and deal ------------------------------------------------


def test_notation_and_action_table() -> None:
    assert len(goof.TABLE) == 52 * 33 + 2
    assert str(goof.TABLE.parse("10H>p31")) == "10H>p31"
    assert str(goof.TABLE.parse(" AS>new ")) == "AS>new"
    assert {str(goof.TURN), str(goof.WAIT)} == {"turn", "wait"}
    with pytest.raises(IllegalAction, match="not an action"):
        goof.TABLE.parse("7H@2")


def test_handicap_goof_pile_per_seat() -> None:
    state = goof.new_game(3, 5, {"goof_pile": "13,10,13"})
    counts = [(t["goof_pile"], t["stock"]) for t in state.observation(0)["tableau"]]
    assert counts == [(13, 35), (10, 38), (13, 35)]
    assert state.log()["options"]["goof_pile"] == [13, 10, 13]
    assert goof.new_game(2, 5, {"goof_pile": [7, 9]}).observation(1)["tableau"][1]["goof_pile"] == 9
    assert goof.new_game(2, 5, {"goof_pile": "10"}).observation(1)["tableau"][0]["goof_pile"] == 10
    for bad in ("13,10", "0", 49, [13, True, 13], "x"):
        with pytest.raises(ValueError, match="goof_pile"):
            goof.new_game(3, 5, {"goof_pile": bad})


def test_deal_is_checked() -> None:
    good = deck(HIGH_LINE)
    state = goof.new_game(2, 1, deal={"decks": [good, good], "dealer": 1})
    assert state.observation(0)["dealer"] == 1
    assert state.zones()["line:1"] == ["KS@1", "KH@1", "KD@1", "KC@1"]
    assert state.zones()["goof:0"][0] == good[0] + "@0"
    assert state.zones()["stock:0"][0] == good[17] + "@0"
    cases = [
        ({"decks": [good]}, "one deck per seat"),
        ({"decks": [good, good[:-1]]}, "52 cards"),
        ({"decks": [good, [*good[:-1], good[0]]]}, "repeats"),
        ({"decks": [good, ["1S", *good[1:]]]}, "unknown card '1S'"),
        ({"decks": [good, good], "dealer": 2}, "dealer"),
        ({"decks": [good, good], "caller": 0}, "not \\['caller'\\]"),
        ([good, good], "a dict"),
    ]
    for deal, message in cases:
        with pytest.raises(ValueError, match=message):
            goof.new_game(2, 1, deal=deal)


# -- the rules -------------------------------------------------------------------


def test_only_aces_start_piles_and_aces_go_nowhere_else() -> None:
    state = new(deck(["AS", "2S", "AH", "9D"]), deck(HIGH_LINE))
    assert legal(state, 0) == ["AS>new", "AH>new", "turn", "wait"]
    before = state.zones()
    with pytest.raises(IllegalAction, match="only an Ace starts a new pile; legal: AS>new"):
        tick(state, "2S>new", "wait")
    assert state.zones() == before
    assert tick(state, "AS>new", "wait", order=[1, 0]) == [(1, "wait", True), (0, "AS>new", True)]
    assert piles(state) == [(0, "AS@0", 1)]
    with pytest.raises(IllegalAction, match="an Ace only starts a new pile"):
        tick(state, "AH>p0", "wait")


def test_piles_build_up_in_suit_with_anyones_cards() -> None:
    state = new(deck(["AS", "3S", "2H", "9D"]), deck(["2S", "KH", "KD", "KC"]))
    tick(state, "AS>new", "wait")
    assert "2S>p0" in legal(state, 1)
    assert not any(action.endswith(">p0") for action in legal(state, 0))
    with pytest.raises(IllegalAction, match="pile 0 has AS@0 on top"):
        tick(state, "2H>p0", "wait")
    tick(state, "wait", "2S>p0")
    assert "3S>p0" in legal(state, 0)
    tick(state, "3S>p0", "wait")
    assert piles(state) == [(0, "3S@0", 3)]
    assert [t["area_cards"] for t in state.observation(1)["tableau"]] == [2, 1]
    assert state.zones()["piles"] == ["AS@0", "2S@1", "3S@0"]


def test_goof_line_card_is_replaced_from_the_goof_pile() -> None:
    state = new(deck(["9D", "AS", "8D", "7D"], goof_cards=["2S", "5C"]), deck(HIGH_LINE))
    tick(state, "AS>new", "wait")
    assert state.zones()["line:0"] == ["9D@0", "2S@0", "8D@0", "7D@0"]
    assert state.zones()["goof:0"][0] == "5C@0"
    assert mine(state, 0)["goof_pile"] == 12
    assert "2S>p0" in legal(state, 0)


def test_turning_three_and_turning_the_waste_over() -> None:
    stock = ["2C", "3C", "4C", "5C"]
    state = new(deck(HIGH_LINE, stock=stock, size=44), deck(HIGH_LINE), goof_pile="44,13")
    tick(state, "turn", "wait")
    zones = state.zones()
    assert zones["waste:0"] == ["4C@0", "3C@0", "2C@0"] and zones["stock:0"] == ["5C@0"]
    assert mine(state, 0)["waste_top"] == "4C@0" and mine(state, 0)["back_three"] is None
    assert {"3C@0", "2C@0", "5C@0"} <= state.hidden_cards(1)
    tick(state, "turn", "wait")  # fewer than three left: one card
    assert state.zones()["waste:0"][0] == "5C@0" and state.zones()["stock:0"] == []
    assert mine(state, 0)["back_three"] == "4C@0"
    tick(state, "turn", "wait")  # the waste becomes the stock again, then three are turned
    assert state.zones() == zones
    assert mine(state, 0)["back_three"] is None
    # With no stock and no waste at all there is nothing to turn.
    empty = new(deck(HIGH_LINE, size=48), deck(HIGH_LINE), goof_pile="48,13")
    assert legal(empty, 0) == ["wait"]
    with pytest.raises(IllegalAction, match="stock and waste are empty; legal: wait"):
        tick(empty, "turn", "wait")


def test_back_three_until_the_next_turn() -> None:
    stock = ["QH", "JH", "2S", "QD", "JD", "10D", "QC", "JC", "10C"]
    state = new(
        deck(HIGH_LINE, stock=stock, size=39), deck(["AS", "KH", "KD", "KC"]), goof_pile="39,13"
    )
    tick(state, "turn", "AS>new")
    assert legal(state, 0) == ["2S>p0", "turn", "wait"]  # the waste top itself
    tick(state, "turn", "wait")
    assert mine(state, 0)["waste_top"] == "10D@0" and mine(state, 0)["back_three"] == "2S@0"
    assert "2S@0" not in state.hidden_cards(0) and "QD@0" in state.hidden_cards(0)
    assert legal(state, 0) == ["2S>p0", "turn", "wait"]
    other = games.replay(state.log())
    assert isinstance(other, goof.GoofState)
    tick(other, "turn", "wait")  # turning again loses the back three
    assert mine(other, 0)["back_three"] == "10D@0" and "2S>p0" not in legal(other, 0)
    tick(state, "2S>p0", "wait")
    assert piles(state) == [(0, "2S@0", 2)]
    assert state.zones()["waste:0"] == ["10D@0", "JD@0", "QD@0", "JH@0", "QH@0"]
    assert mine(state, 0)["back_three"] is None


def test_same_card_at_one_pile_in_one_tick_first_applied_wins() -> None:
    for order, winner in (([1, 0], 1), ([0, 1], 0)):
        state = new(deck(["AS", "2S", "KD", "KC"]), deck(["2S", "KH", "KD", "KC"]))
        tick(state, "AS>new", "wait")
        outcome = tick(state, "2S>p0", "2S>p0", order=order)
        loser = 1 - winner
        assert outcome == [(winner, "2S>p0", True), (loser, "2S>p0", False)]
        assert piles(state) == [(0, f"2S@{winner}", 2)]
        assert f"2S@{loser}" in state.zones()[f"line:{loser}"]
        assert state.log()["moves"][-1] == [[winner, "2S>p0"], [loser, "2S>p0"]]
        assert state.observation(loser)["last_tick"] == [
            [winner, "2S>p0", True],
            [loser, "2S>p0", False],
        ]


def test_one_under_moves_each_top_stock_card_to_the_bottom() -> None:
    state = new(
        deck(HIGH_LINE, stock=["AS", "QH", "QD"], size=45),
        deck(HIGH_LINE, stock=["QS", "JH", "JD"], size=45),
        goof_pile=45,
    )
    tick(state, "turn", "wait")  # waiting is no pass through the stock
    assert [t["full_pass"] for t in state.observation(0)["tableau"]] == [True, False]
    assert state.observation(0)["one_unders"] == 0
    assert state.zones()["waste:0"] == ["QD@0", "QH@0", "AS@0"]
    tick(state, "wait", "turn")  # both have seen all their cards; nobody can play
    zones = state.zones()
    assert zones["stock:0"] == ["QH@0", "QD@0", "AS@0"] and zones["waste:0"] == []
    assert zones["stock:1"] == ["JH@1", "JD@1", "QS@1"]
    assert state.observation(0)["one_unders"] == 1
    tick(state, "turn", "turn")
    assert mine(state, 0)["waste_top"] == "AS@0" and "AS>new" in legal(state, 0)
    tick(state, "AS>new", "wait")
    assert state.observation(0)["one_unders"] == 0  # progress resets the count


def test_stalled_round_ends_after_stall_limit_one_unders() -> None:
    state = new(
        deck(HIGH_LINE, stock=["QS", "QH", "QD"], size=45),
        deck(HIGH_LINE, stock=["QS", "JH", "JD"], size=45),
        goof_pile=45,
        stall_limit=2,
        rounds=1,
    )
    tick(state, "turn", "turn")
    assert state.observation(0)["one_unders"] == 1
    tick(state, "turn", "turn")
    assert state.observation(0)["one_unders"] == 2
    assert not state.is_over()
    tick(state, "turn", "turn")
    assert state.is_over()
    observation = state.observation(1)
    assert observation["past_rounds"] == [{"scores": [-90, -90], "goof": None, "end": "stall"}]
    assert state.result() == games.Result((-90, -90), (1, 1))


def test_max_ticks_safeguard_ends_a_round_of_waiting() -> None:
    state = goof.new_game(2, 3, {"max_ticks": 5, "rounds": 2})
    for _ in range(5):
        tick(state, "wait", "wait")
    observation = state.observation(0)
    assert observation["round"] == 2 and observation["tick"] == 0
    assert observation["past_rounds"] == [{"scores": [-26, -26], "goof": None, "end": "max_ticks"}]
    assert observation["scores"] == [-26, -26]


def test_three_complete_piles_are_removed_and_still_count() -> None:
    suits = [f"{rank}{suit}" for suit in "SHD" for rank in goof.RANKS]
    state = new(
        deck(["AS", "QC", "JC", "10C"], goof_cards=suits[1:], size=40),
        deck(["AC", "KH", "KD", "QD"]),
        goof_pile="40,13",
        max_ticks=40,
        rounds=1,
    )
    for card in suits[:-1]:
        (play,) = [a for a in legal(state, 0) if a.startswith(card + ">")]
        tick(state, play, "wait")
    assert [(p, top) for p, top, _ in piles(state)] == [(0, "KS@0"), (1, "KH@0"), (2, "QD@0")]
    tick(state, "KD>p2", "wait")
    assert piles(state) == [] and state.observation(0)["removed_piles"] == [0, 1, 2]
    assert len(state.zones()["removed"]) == 39 and state.zones()["piles"] == []
    assert "KS@0" not in state.hidden_cards(1)
    tick(state, "wait", "AC>new")  # pile ids are never reused in a round
    assert piles(state) == [(3, "AC@1", 1)]
    assert state.is_over()  # max_ticks ended the round: 39 - 2 * 1 and 1 - 2 * 12
    assert state.result().scores == (37, -23)


def test_goof_ends_the_round_at_once_and_scores() -> None:
    decks = (deck(["AS", "2S", "KD", "KC"], size=2), deck(["AH", "AD", "2H", "KC"]))
    for order, seat1_area in (([0, 1], 1), ([1, 0], 2)):
        state = new(*decks, goof_pile="2,13", rounds=2)
        tick(state, "AS>new", "AH>new")
        outcome = tick(state, "2S>p0", "AD>new", order=order)
        assert outcome[order.index(0)] == (0, "2S>p0", True)
        assert outcome[order.index(1)] == (1, "AD>new", order == [1, 0])
        observation = state.observation(1)
        # +1 per own card in the area, -2 per card left in the goof pile.
        seat1 = seat1_area - 2 * (13 - seat1_area)
        assert observation["past_rounds"] == [{"scores": [2, seat1], "goof": 0, "end": "goof"}]
        assert observation["scores"] == [2, seat1]
        assert observation["round"] == 2 and observation["piles"] == []
        assert [t["goof_pile"] for t in observation["tableau"]] == [2, 13]  # handicap stays
        assert observation["last_tick"] == []


def test_game_ends_at_target_score_or_after_the_rounds() -> None:
    decks = (deck(["AS", "2S", "KD", "KC"], size=1), deck(HIGH_LINE))
    state = new(*decks, goof_pile=[1, 13], rounds=5, target_score=1)
    tick(state, "AS>new", "wait")
    assert state.is_over() and state.to_act() == () and state.round == 1
    assert state.result() == games.Result((1, -26), (1, 2))
    assert state.legal_actions(0) == []
    with pytest.raises(IllegalAction, match="over"):
        tick(state, "wait", "wait")
    unfinished = new(*decks, goof_pile=[1, 13], rounds=5, target_score=2)
    tick(unfinished, "AS>new", "wait")
    assert not unfinished.is_over() and unfinished.round == 2
    with pytest.raises(ValueError, match="not over"):
        unfinished.result()


# -- ticks, apply() and replay ------------------------------------------------------


def test_a_tick_with_a_missing_or_illegal_action_applies_nothing() -> None:
    state = new(deck(["AS", "2S", "KD", "KC"]), deck(HIGH_LINE))
    before = (state.zones(), state.observation(0))
    with pytest.raises(IllegalAction, match="missing: \\[1\\]"):
        state.apply_tick({0: "AS>new"})
    with pytest.raises(IllegalAction, match="unknown seats: \\[2\\]"):
        state.apply_tick({0: "AS>new", 1: "wait", 2: "wait"})
    with pytest.raises(IllegalAction, match="seat 1 cannot 2S>p0: 2S is not in its goof line"):
        tick(state, "AS>new", "2S>p0")
    with pytest.raises(IllegalAction, match="there is no pile 0"):
        tick(state, "2S>p0", "wait")
    with pytest.raises(IllegalAction, match="order must list every seat"):
        tick(state, "AS>new", "wait", order=[0, 0])
    assert (state.zones(), state.observation(0)) == before
    assert state.log()["moves"] == []


def test_apply_collects_a_tick_in_arrival_order() -> None:
    state = new(deck(["AS", "2S", "KD", "KC"]), deck(["2S", "KH", "KD", "KC"]))
    state.apply(1, "wait")
    assert state.to_act() == (0,) and state.legal_actions(1) == []
    with pytest.raises(IllegalAction, match="seat 1 already acted in this tick \\(wait\\)"):
        state.apply(1, "turn")
    with pytest.raises(IllegalAction, match="finish the tick with apply"):
        tick(state, "AS>new", "wait")
    state.apply(0, goof.TABLE.parse("AS>new"))
    assert state.to_act() == (0, 1)
    state.apply(1, "2S>p0")  # arrives first, so it wins the race
    state.apply(0, "2S>p0")
    assert piles(state) == [(0, "2S@1", 2)]
    assert state.log()["moves"] == [
        [[1, "wait"], [0, "AS>new"]],
        [[1, "2S>p0"], [0, "2S>p0"]],
    ]
    assert state.observation(0)["last_tick"][1] == [0, "2S>p0", False]
    with pytest.raises(IllegalAction, match="no seat 5"):
        state.apply(5, "wait")


def test_ticks_collected_by_apply_replay_across_rounds() -> None:
    state = goof.new_game(3, 9, {"max_ticks": 3, "rounds": 3})
    rng = random.Random(9)
    while not state.is_over():
        for seat in rng.sample(range(3), 3):
            state.apply(seat, rng.choice(state.legal_actions(seat)))
    replayed = games.replay(json.loads(json.dumps(state.log())))
    assert replayed.zones() == state.zones() and replayed.result() == state.result()
    assert replayed.observation(1) == state.observation(1)


def random_game(players: int, seed: int, **options: object) -> goof.GoofState:
    state = goof.new_game(players, seed, options)
    rng = random.Random(seed)
    while not state.is_over():
        state.apply_tick({s: rng.choice(state.legal_actions(s)) for s in state.to_act()})
    return state


def test_replay_of_ticks_gives_the_same_game() -> None:
    state = random_game(3, 11, rounds=2)
    log = json.loads(json.dumps(state.log()))
    assert all(len(entry) == 3 for entry in log["moves"])
    replayed = games.replay(log)
    assert isinstance(replayed, goof.GoofState)
    assert replayed.result() == state.result() and replayed.log() == state.log()
    assert replayed.observation(2) == state.observation(2)
    assert replayed.zones() == state.zones()
    assert len(state.observation(0)["past_rounds"]) == 2
    assert random_game(3, 11, rounds=2).log() == state.log()


def test_given_orders_use_the_rng_like_drawn_ones() -> None:
    # Two rounds of waiting; the second round's shuffle must not depend on
    # whether the first round's ticks were given an order.
    drawn = goof.new_game(3, 8, {"max_ticks": 4})
    given = goof.new_game(3, 8, {"max_ticks": 4})
    for _ in range(4):
        tick(drawn, "wait", "wait", "wait")
        tick(given, "wait", "wait", "wait", order=[2, 0, 1])
    assert drawn.round == given.round == 2
    assert drawn.zones() == given.zones()


def test_a_fixed_deal_leaves_later_rounds_to_the_seed() -> None:
    seeded = goof.new_game(2, 4, {"max_ticks": 1})
    dealt = goof.new_game(2, 4, {"max_ticks": 1}, deal={"decks": [deck(HIGH_LINE)] * 2})
    assert seeded.zones() != dealt.zones()
    tick(seeded, "wait", "wait")
    tick(dealt, "wait", "wait")
    assert seeded.zones() == dealt.zones()


def test_observation_is_public_table_and_hides_face_down_cards() -> None:
    state = random_game(4, 2, rounds=1, max_ticks=150)
    observation = state.observation(3)
    assert set(observation) == {
        "game", "seat", "players", "round", "dealer", "scores", "phase", "tick", "tableau",
        "piles", "removed_piles", "one_unders", "last_tick", "past_rounds",
    }  # fmt: skip
    assert observation["phase"] == "over" and observation["seat"] == 3
    text = json.dumps(observation)
    for card in state.hidden_cards(3):
        assert f'"{card}"' not in text
    zones = state.zones()
    assert sorted(card for zone in zones.values() for card in zone) == sorted(goof.CARD_IDS[:208])
    shown = {t["waste_top"] for t in observation["tableau"]} | {
        t["back_three"] for t in observation["tableau"]
    }
    waste = {card for seat in range(4) for card in zones[f"waste:{seat}"]}
    assert waste - state.hidden_cards(0) == shown - {None}
