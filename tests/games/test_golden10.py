"""Hand-built scenarios for each rule of Golden 10 (docs/rules/golden10.md)."""

from __future__ import annotations

from typing import Any

import pytest

import games
from games import IllegalAction
from games.golden10 import SPEC, Golden10State, new_game, red_points

COLOURS = "RYBG"


def cards(colour: str, *ranks: int) -> list[str]:
    return [f"{rank}{colour}" for rank in ranks]


def span(colour: str, low: int, high: int) -> list[str]:
    return cards(colour, *range(low, high + 1))


def in_deck_order(names: list[str]) -> list[str]:
    return sorted(names, key=lambda card: (COLOURS.index(card[-1]), int(card[:-1])))


def play(state: Golden10State, moves: str) -> None:
    """Play cards in turn order, each by whichever seat must act."""
    for card in moves.split():
        state.apply(state.to_act()[0], card)


def play_first_legal(state: Golden10State) -> None:
    """Finish the current round (or the game) by always playing the first legal card."""
    start = state.round
    while not state.is_over() and state.round == start:
        seat = state.to_act()[0]
        state.apply(seat, state.legal_actions(seat)[0])


# Seven players, eight tricks; each trick's cards listed by seat 0..6.
SEVEN_TRICKS = [
    ["1R", "2R", "8R", "3R", "4R", "6R", "7R"],  # led by 0, won by 2: 7 red points
    ["8Y", "9Y", "14Y", "10Y", "11Y", "12Y", "13Y"],  # led by 2, won by 2 with the yellow 10
    ["5R", "9R", "10R", "11R", "14R", "12R", "13R"],  # led by 2, won by 4: 20 red points
    ["1Y", "2Y", "3Y", "4Y", "5Y", "7Y", "6Y"],  # led by 4, won by 5
    span("B", 1, 7),  # led by 5, won by 6; the rest all won by 6
    span("B", 8, 14),
    span("G", 1, 7),
    span("G", 8, 14),
]
SEVEN_DEAL: dict[str, Any] = {
    "hands": [[trick[seat] for trick in SEVEN_TRICKS] for seat in range(7)],
    "left_over": [],
    "dealer": 6,
}


def play_seven_tricks(state: Golden10State) -> None:
    for trick in SEVEN_TRICKS:
        leader = state.to_act()[0]
        play(state, " ".join(trick[(leader + i) % 7] for i in range(7)))


# --- dealing ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("players", "size", "left_over"), [(3, 18, 2), (4, 14, 0), (5, 11, 1), (6, 9, 2), (7, 8, 0)]
)
def test_deal_sizes_and_left_over_go_to_first_trick_winner(
    players: int, size: int, left_over: int
) -> None:
    state = new_game(players, seed=players)
    zones = state.zones()
    assert [len(zones[f"hand:{seat}"]) for seat in range(players)] == [size] * players
    aside = zones["left_over"]
    assert len(aside) == left_over
    for seat in range(players):
        assert set(aside) <= state.hidden_cards(seat), "nobody sees the set-aside cards"
    observation = state.observation(0)
    assert observation["left_over_count"] == left_over
    assert observation["to_act"] == (observation["dealer"] + 1) % players

    for _ in range(players):
        seat = state.to_act()[0]
        state.apply(seat, state.legal_actions(seat)[-1])
    winner = state.to_act()[0]
    zones = state.zones()
    assert zones["left_over"] == []
    assert set(aside) <= set(zones[f"won:{winner}"])
    assert len(zones[f"won:{winner}"]) == players + left_over
    assert state.observation(winner)["left_over_taker"] == winner
    for seat in range(players):
        assert set(aside) <= state.hidden_cards(seat), "still unseen in the winner's pile"


def test_left_over_points_are_scored_by_the_first_trick_winner() -> None:
    # Three players: seat 0 holds every black, so it wins the first trick and the
    # two set-aside cards, the red 10 and red 5, without anyone seeing them.
    deal = {
        "hands": [
            span("B", 1, 14) + span("G", 11, 14),
            span("R", 1, 4) + span("R", 6, 9) + span("R", 11, 14) + span("G", 1, 6),
            span("Y", 1, 14) + span("G", 7, 10),
        ],
        "left_over": ["10R", "5R"],
        "dealer": 2,
    }
    state = new_game(3, seed=1, options={"rounds": 1}, deal=deal)
    assert state.to_act() == (0,)
    play(state, "1B 1G 7G")
    assert state.to_act() == (0,)
    assert {"10R", "5R"} <= set(state.zones()["won:0"])
    for seat in range(3):
        assert {"10R", "5R"} <= state.hidden_cards(seat)
        assert "10R" not in str(state.observation(seat))
    assert state.observation(1)["red_points_taken"] == [0, 0, 0], "only played cards count"
    play_first_legal(state)
    # Seat 0 leads blacks and wins every trick: all 27 red points, and the yellow 10.
    assert state.result().scores == (17, 0, 0)
    assert state.observation(0)["last_round"]["red_points"] == [27, 0, 0]
    assert games.replay(state.log()).result() == state.result()


def test_player_left_of_dealer_leads() -> None:
    for dealer in range(7):
        state = new_game(7, seed=3, deal={**SEVEN_DEAL, "dealer": dealer})
        assert state.to_act() == ((dealer + 1) % 7,)
        assert state.observation(0)["dealer"] == dealer


def test_deal_is_fixed_and_logged() -> None:
    state = new_game(7, seed=9, deal=SEVEN_DEAL)
    for seat in range(7):
        assert state.observation(seat)["hand"] == in_deck_order(SEVEN_DEAL["hands"][seat])
    logged = state.log()["deal"]
    assert logged["hands"] == [in_deck_order(hand) for hand in SEVEN_DEAL["hands"]]
    assert logged["left_over"] == [] and logged["dealer"] == 6


@pytest.mark.parametrize(
    ("deal", "message"),
    [
        ({"hands": [span("R", 1, 14)] * 3}, "must be a list of 4 hands"),
        ({"hands": [span("R", 1, 14), *[["1Y"]] * 3]}, "must be a list of 14 cards"),
        (
            {"hands": [span(c, 1, 14) for c in "RYBR"]},
            "dealt twice",
        ),
        ({"hands": [span(c, 1, 14) for c in "RYB"] + [[*span("G", 1, 13), "15G"]]}, "not a"),
        ({"hands": [span(c, 1, 14) for c in "RYBG"], "left_over": ["1R"]}, "0 cards"),
        ({"hands": [span(c, 1, 14) for c in "RYBG"], "dealer": 4}, "dealer"),
        ({"hands": [span(c, 1, 14) for c in "RYBG"], "stash": []}, "unknown keys"),
        ("1R 2R", "must be a dict"),
    ],
)
def test_bad_deals_are_refused(deal: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        new_game(4, seed=0, deal=deal)


# --- play ---------------------------------------------------------------------

FOUR_DEAL: dict[str, Any] = {
    "hands": [
        span("R", 4, 11) + cards("R", 13, 14) + span("G", 11, 14),
        ["3R", *span("Y", 1, 13)],
        cards("R", 1, 2, 12) + span("B", 1, 11),
        [*span("B", 12, 14), "14Y", *span("G", 1, 10)],
    ],
    "dealer": 0,
}


def test_follow_colour_and_highest_card_of_led_colour_wins() -> None:
    state = new_game(4, seed=0, deal=FOUR_DEAL)
    assert state.to_act() == (1,)
    state.apply(1, "3R")
    assert [str(card) for card in state.legal_actions(2)] == ["1R", "2R", "12R"]
    with pytest.raises(IllegalAction, match=r"seat 2 must follow red; legal: 1R, 2R, 12R"):
        state.apply(2, "11B")
    state.apply(2, "12R")
    # Seat 3 holds no red, so any card goes; its 14B cannot win a red trick.
    assert len(state.legal_actions(3)) == 14
    state.apply(3, "14B")
    with pytest.raises(IllegalAction, match="must follow red"):
        state.apply(0, "14G")
    state.apply(0, "9R")
    assert state.to_act() == (2,), "the highest red wins and leads next"
    assert sorted(state.zones()["won:2"]) == sorted(["3R", "12R", "14B", "9R"])
    trick = state.observation(1)["tricks"][0]
    assert trick == {
        "leader": 1,
        "cards": [[1, "3R"], [2, "12R"], [3, "14B"], [0, "9R"]],
        "winner": 2,
    }
    assert state.observation(1)["red_points_taken"] == [0, 0, 3, 0]


def test_acting_out_of_turn_or_without_the_card_is_illegal() -> None:
    state = new_game(4, seed=0, deal=FOUR_DEAL)
    with pytest.raises(IllegalAction, match="it is seat 1's turn, not seat 3's"):
        state.apply(3, "14Y")
    assert state.legal_actions(3) == []
    with pytest.raises(IllegalAction, match="seat 1 does not hold 4R; legal: 3R, 1Y"):
        state.apply(1, "4R")
    with pytest.raises(IllegalAction, match="not an action"):
        state.apply(1, "15R")
    state.apply(1, 0 * 14 + 2)  # an action number: 3R
    assert state.log()["moves"] == [[1, "3R"]]


# --- scoring ------------------------------------------------------------------


def test_red_points() -> None:
    def mask(*names: str) -> int:
        return sum(1 << SPEC.parse_action(name) for name in names)

    assert red_points(mask(*span("R", 1, 14))) == 27
    assert red_points(mask("5R")) == 5
    assert red_points(mask("10R")) == 10
    assert red_points(mask("1R", "14R", "5Y", "10Y", "14B")) == 2


def test_red_card_scoring_and_yellow_10_floored_per_round() -> None:
    state = new_game(7, seed=5, options={"rounds": 1}, deal=SEVEN_DEAL)
    play_seven_tricks(state)
    last = state.observation(0)["last_round"]
    assert last["red_points"] == [0, 0, 7, 0, 20, 0, 0]
    assert last["yellow10"] == 2
    # Seat 2 took 7 red points and the yellow 10: its round scores 0, not -3.
    assert state.result().scores == (0, 0, 0, 0, 20, 0, 0)


def test_lowest_total_wins_and_equal_totals_share_the_rank() -> None:
    state = new_game(7, seed=5, options={"rounds": 1}, deal=SEVEN_DEAL)
    with pytest.raises(ValueError, match="not over"):
        state.result()
    play_seven_tricks(state)
    assert state.is_over() and state.to_act() == ()
    assert state.result().ranks == (1, 1, 1, 1, 7, 1, 1)
    assert not state.hidden_cards(0)


def oracle_totals(players: int, seed: int, floor: str) -> tuple[list[int], list[int]]:
    """Play 6 rounds by first legal card; score each round independently of the engine.

    Returns the engine's totals and the totals computed here from the moves.
    """
    state = new_game(players, seed, options={"yellow10_floor": floor})
    totals = [0] * players
    while not state.is_over():
        aside = state.zones()["left_over"]
        start = len(state.log()["moves"])
        play_first_legal(state)
        moves = state.log()["moves"][start:]
        taken: list[list[str]] = [[] for _ in range(players)]
        for first in range(0, len(moves), players):
            trick = moves[first : first + players]
            led = trick[0][1][-1]
            winner = max((int(card[:-1]), seat) for seat, card in trick if card[-1] == led)[1]
            taken[winner] += [card for _, card in trick] + (aside if first == 0 else [])
        for seat in range(players):
            red = [int(card[:-1]) for card in taken[seat] if card[-1] == "R"]
            score = sum(rank if rank in (5, 10) else 1 for rank in red)
            score -= 10 if "10Y" in taken[seat] else 0
            if floor == "round":
                totals[seat] += max(0, score)
            else:
                totals[seat] = max(0, totals[seat] + score)
    return list(state.result().scores), totals


def test_yellow_10_floor_options_against_an_independent_count() -> None:
    # Seed 2 with 5 players: the yellow 10's taker has points to lose in a later round.
    by_round, expected_round = oracle_totals(5, 2, "round")
    by_game, expected_game = oracle_totals(5, 2, "game")
    assert by_round == expected_round
    assert by_game == expected_game
    assert by_round != by_game, "the two readings differ on this seed"
    assert sum(by_round) > sum(by_game)


def test_six_rounds_dealer_moves_left() -> None:
    state = new_game(5, seed=11)
    dealers = []
    for number in range(1, 7):
        assert state.round == number
        assert not state.is_over()
        dealers.append(state.observation(0)["dealer"])
        play_first_legal(state)
        if number < 6:
            assert state.observation(1)["last_round"]["round"] == number
    assert state.is_over() and state.round == 6
    assert dealers == [(dealers[0] + step) % 5 for step in range(6)]
    assert len(state.log()["moves"]) == 6 * 55
    assert sum(state.observation(0)["last_round"]["red_points"]) == 27


def test_rounds_option() -> None:
    state = new_game(4, seed=1, options={"rounds": "2"})
    play_first_legal(state)
    assert not state.is_over()
    play_first_legal(state)
    assert state.is_over() and state.round == 2
    with pytest.raises(ValueError, match="option rounds"):
        new_game(4, seed=1, options={"rounds": 0})
    with pytest.raises(ValueError, match="yellow10_floor"):
        new_game(4, seed=1, options={"yellow10_floor": "never"})
    with pytest.raises(ValueError, match="3 to 7 players"):
        new_game(8, seed=1)


def test_observation_shows_only_own_hand_and_this_rounds_play() -> None:
    state = new_game(4, seed=0, deal=FOUR_DEAL)
    observation = state.observation(3)
    assert observation["hand"] == in_deck_order(FOUR_DEAL["hands"][3])
    assert observation["hand_sizes"] == [14, 14, 14, 14]
    hidden = state.hidden_cards(3)
    assert hidden == {card for seat in (0, 1, 2) for card in FOUR_DEAL["hands"][seat]}
    play_first_legal(state)
    # A new round: nothing of the last round's cards, only its numbers.
    observation = state.observation(3)
    assert observation["tricks"] == [] and observation["trick"] == []
    assert observation["last_round"]["round"] == 1
    assert sum(observation["last_round"]["red_points"]) == 27
