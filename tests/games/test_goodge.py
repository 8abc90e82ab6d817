"""Hand-built scenarios for each rule of The Goodge Rules (docs/rules/goodge.md)."""

from __future__ import annotations

import json
import random

import pytest

import games
from games import IllegalAction
from games.goodge import CARD_NAMES, POINTS, SPEC, GoodgeState, new_game

POINTS_BY_NAME = dict(zip(CARD_NAMES, POINTS, strict=True))

# Four hands of 12 and a Stash, dealer 3 (so seat 0 bids first). Seat 1 holds the
# Crown and no Hearts; the Stash holds 50 points.
HANDS = [
    "1H 10H 9H 8H 2H 2S 3S 2D 3D 2R 2C 3C",
    "CR 4S 5S 6S 4D 5D 3R 4R 4C 5C 6C 7C",
    "3H 4H 7S 8S 6D 7D 8D 5R 6R 7R 8C 9C",
    "5H 6H 7H 9S 10S 1S 9D 10D 8R 9R 10C 1C",
]
STASH = "1D 1R 10R"
DEAL = {"hands": [hand.split() for hand in HANDS], "stash": STASH.split(), "dealer": 3}


def game(**options: object) -> GoodgeState:
    return new_game(4, 7, options, DEAL)


def play(state: GoodgeState, moves: str) -> None:
    """Apply each action in turn, by whichever seat must act."""
    for action in moves.split():
        state.apply(state.to_act()[0], action)


def goodge_zero(state: GoodgeState, bid: int = 50, discards: str = "3S 3D 3C", trump: str = "H"):
    """Seat 0 wins the bidding, discards and names trump."""
    play(state, f"bid:{bid} pass pass pass {discards} trump:{trump}")


def legal(state: GoodgeState) -> list[str]:
    return [str(action) for action in state.legal_actions(state.to_act()[0])]


def finish_round(state: GoodgeState) -> None:
    """Play the first legal action until the round (or the game) ends."""
    start = state.round
    while not state.is_over() and state.round == start:
        seat = state.to_act()[0]
        state.apply(seat, state.legal_actions(seat)[0])


# -- set-up and bidding -------------------------------------------------------


def test_deal_sizes_and_deck() -> None:
    for players, size in ((3, 16), (4, 12)):
        state = new_game(players, 1)
        zones = state.zones()
        assert [len(zones[f"hand:{seat}"]) for seat in range(players)] == [size] * players
        assert len(zones["stash"]) == 3
        assert sorted(card for zone in zones.values() for card in zone) == sorted(CARD_NAMES)
    assert sum(POINTS) == 250


def test_bidding_starts_left_of_dealer_and_rises_by_five() -> None:
    state = game()
    assert state.to_act() == (0,)
    assert legal(state) == [f"bid:{value}" for value in range(50, 255, 5)] + ["pass"]
    with pytest.raises(IllegalAction, match="it is seat 0's turn, not seat 3's"):
        state.apply(3, "bid:50")
    with pytest.raises(IllegalAction, match="not an action"):
        state.apply(0, "bid:52")
    with pytest.raises(IllegalAction, match="not an action"):
        state.apply(0, "bid:255")
    state.apply(0, "bid:60")
    assert state.to_act() == (1,)
    assert legal(state)[0] == "bid:65"
    for too_low in ("bid:60", "bid:55"):
        with pytest.raises(IllegalAction, match=r"legal: bid:65, bid:70"):
            state.apply(1, too_low)
    state.apply(1, "bid:65")
    assert state.observation(2)["high_bid"] == 65
    assert state.observation(2)["high_bidder"] == 1


def test_first_bidder_follows_the_dealer() -> None:
    state = new_game(4, 7, None, {**DEAL, "dealer": 1})
    assert state.to_act() == (2,)
    assert state.observation(0)["dealer"] == 1


def test_pass_is_final_and_last_bidder_becomes_goodge() -> None:
    state = game()
    play(state, "bid:60 pass bid:70 pass")
    assert state.to_act() == (0,)
    state.apply(0, "bid:75")
    # Seat 1 passed, so seat 2 is next; seat 1 is never asked again.
    assert state.to_act() == (2,)
    assert state.legal_actions(1) == []
    with pytest.raises(IllegalAction):
        state.apply(1, "bid:80")
    state.apply(2, "pass")
    observation = state.observation(0)
    assert observation["goodge"] == 0
    assert observation["bid"] == 75
    assert observation["phase"] == "discard"
    assert observation["bids"] == [
        [0, "bid:60"],
        [1, "pass"],
        [2, "bid:70"],
        [3, "pass"],
        [0, "bid:75"],
        [2, "pass"],
    ]


def test_bid_of_250_leaves_only_pass() -> None:
    state = game()
    state.apply(0, "bid:250")
    assert legal(state) == ["pass"]


def test_last_seat_may_still_bid_after_three_passes() -> None:
    state = game()
    play(state, "pass pass pass")
    assert state.to_act() == (3,)
    assert "bid:50" in legal(state)
    state.apply(3, "bid:50")
    assert state.observation(3)["goodge"] == 3
    assert state.observation(3)["phase"] == "discard"


def test_all_pass_dealer_becomes_goodge_at_50() -> None:
    state = game()
    play(state, "pass pass pass pass")
    observation = state.observation(3)
    assert observation["goodge"] == 3
    assert observation["bid"] == 50
    assert observation["phase"] == "discard"
    assert state.to_act() == (3,)
    assert len(observation["hand"]) == 15


def test_all_pass_redeal_scores_nothing_and_passes_the_deal() -> None:
    state = game(all_pass="redeal")
    play(state, "pass pass pass pass")
    observation = state.observation(0)
    assert state.round == 2
    assert observation["dealer"] == 0
    assert state.to_act() == (1,)
    assert observation["phase"] == "bid"
    assert observation["scores"] == [0, 0, 0, 0]
    assert observation["last_round"] == {"round": 1, "redeal": True, "deltas": [0, 0, 0, 0]}
    assert observation["bids"] == []


def test_redeal_counts_toward_max_rounds_and_ties_share_rank() -> None:
    state = game(all_pass="redeal", max_rounds=1)
    play(state, "pass pass pass pass")
    assert state.is_over()
    assert state.to_act() == ()
    assert state.result().ranks == (1, 1, 1, 1)


# -- the Stash ----------------------------------------------------------------


def test_goodge_takes_the_stash_and_discards_three_face_down() -> None:
    state = game()
    assert state.hidden_cards(0) >= set(STASH.split())
    assert state.observation(0)["stash"] is None
    play(state, "bid:50 pass pass pass")
    hand = state.observation(0)["hand"]
    assert len(hand) == 15
    assert set(STASH.split()) <= set(hand)
    assert state.zones()["stash"] == []
    assert state.legal_actions(1) == []
    with pytest.raises(IllegalAction, match="discard a card from their hand"):
        state.apply(0, "4S")
    # Any card may be discarded, points included.
    play(state, "1D 10R")
    assert state.observation(0)["phase"] == "discard"
    state.apply(0, "3C")
    assert sorted(state.zones()["stash"]) == ["10R", "1D", "3C"]
    assert state.observation(0)["stash"] == ["1D", "10R", "3C"]
    assert state.observation(0)["phase"] == "trump"
    for seat in (1, 2, 3):
        assert state.observation(seat)["stash"] is None
        assert state.observation(seat)["stash_size"] == 3
        assert {"1D", "10R", "3C"} <= state.hidden_cards(seat)
    assert not {"1D", "10R", "3C"} & state.hidden_cards(0)
    assert legal(state) == ["trump:S", "trump:D", "trump:R", "trump:H", "trump:C"]
    state.apply(0, "trump:R")
    assert state.observation(2)["trump"] == "R"
    assert state.observation(2)["phase"] == "play"
    assert state.to_act() == (0,)


def test_the_crown_may_be_discarded() -> None:
    hands = [hand.split() for hand in HANDS]
    hands[1][0], hands[3][0] = hands[3][0], hands[1][0]  # seat 3 now holds the Crown
    state = new_game(4, 7, None, {**DEAL, "hands": hands})
    play(state, "pass pass pass bid:50 CR")
    assert state.zones()["stash"] == ["CR"]
    assert "CR" in state.hidden_cards(0)
    assert "CR" not in state.hidden_cards(3)


# -- following and the Crown -------------------------------------------------


def test_only_trump_is_the_crown_so_it_must_be_played() -> None:
    state = game()
    goodge_zero(state, trump="H")
    state.apply(0, "2H")
    assert legal(state) == ["CR"]
    with pytest.raises(
        IllegalAction, match=r"must follow the trump lead \(Hearts or CR\); legal: CR"
    ):
        state.apply(1, "4S")
    play(state, "CR 3H 5H")
    last = state.observation(0)["tricks"][-1]
    assert last["winner"] == 1
    assert last["points"] == 25 + 15
    assert state.to_act() == (1,)


def test_holder_of_a_plain_lead_suit_may_not_play_the_crown() -> None:
    state = game()
    goodge_zero(state, trump="H")
    state.apply(0, "2S")
    assert legal(state) == ["4S", "5S", "6S"]
    with pytest.raises(IllegalAction, match="seat 1 must follow Spades; legal: 4S, 5S, 6S"):
        state.apply(1, "CR")


def test_void_in_a_plain_lead_suit_may_play_anything_and_the_crown_wins() -> None:
    state = game()
    goodge_zero(state, trump="C")
    state.apply(0, "2H")
    assert sorted(legal(state)) == sorted(HANDS[1].split())
    play(state, "CR 4H 7H")
    assert state.observation(0)["tricks"][-1]["winner"] == 1


def test_crown_lead_is_a_trump_lead() -> None:
    state = game()
    goodge_zero(state, trump="S")
    # Seat 1 is void in Hearts and ruffs with a low trump: trump beats the lead suit.
    play(state, "2H 4S 4H 7H")
    assert state.observation(0)["tricks"][-1]["winner"] == 1
    state.apply(1, "CR")
    assert state.observation(2)["lead_suit"] == "S"
    assert legal(state) == ["7S", "8S"]
    play(state, "7S")
    assert legal(state) == ["1S", "9S", "10S"]
    play(state, "1S 2S")
    assert state.observation(0)["tricks"][-1]["winner"] == 1


def test_highest_trump_wins_and_a_ruff_beats_the_lead_suit() -> None:
    state = game()
    goodge_zero(state, trump="S", discards="2D 3D 1D")
    play(state, "2S 4S 8S 1S")
    assert state.observation(0)["tricks"][-1]["winner"] == 3
    # Seat 0 is void in Diamonds and ruffs the 9D with its lowest trump.
    play(state, "9D 3S 4D 6D")
    assert state.observation(0)["tricks"][-1]["winner"] == 0


@pytest.mark.parametrize(("one_high", "winner"), [(True, 3), (False, 2)])
def test_one_high_option_decides_the_lead_suit_winner(one_high: bool, winner: int) -> None:
    state = game(one_high=one_high)
    goodge_zero(state, trump="H")
    play(state, "2S 4S 7S 1S")
    trick = state.observation(0)["tricks"][-1]
    assert trick["cards"] == [[0, "2S"], [1, "4S"], [2, "7S"], [3, "1S"]]
    assert trick["winner"] == winner
    assert state.to_act() == (winner,)


def test_off_suit_card_never_wins_without_trump() -> None:
    state = game()
    goodge_zero(state, trump="C", discards="2D 3D 1D")
    # Seat 0 is void in Diamonds and throws a high Heart: the 9D still wins.
    play(state, "2S 4S 8S 9S")
    play(state, "9D 1H 4D 6D")
    assert state.observation(0)["tricks"][-1]["winner"] == 3


# -- end of round ---------------------------------------------------------------


def test_last_trick_takes_the_stash_and_round_points_sum_to_250() -> None:
    state = game(max_rounds=1)
    goodge_zero(state, discards="1D 1R 10R")
    finish_round(state)
    assert state.is_over()
    zones = state.zones()
    observation = state.observation(0)
    last_winner = observation["tricks"][-1]["winner"]
    assert {"1D", "1R", "10R"} <= set(zones[f"won:{last_winner}"])
    assert zones["stash"] == []
    taken = observation["last_round"]["points"]
    assert sum(taken) == 250
    for seat in range(4):
        assert taken[seat] == sum(POINTS_BY_NAME[c] for c in zones[f"won:{seat}"])


def test_round_points_always_sum_to_250() -> None:
    rng = random.Random(3)
    for players in (3, 4):
        state = new_game(players, 11)
        rounds = 0
        while not state.is_over() and rounds < 6:
            seat = state.to_act()[0]
            state.apply(seat, rng.choice(state.legal_actions(seat)))
            last = state.observation(0)["last_round"]
            if last is not None and last["round"] > rounds:
                rounds = last["round"]
                assert sum(last["points"]) == 250


def points_of_goodge(bid: int) -> tuple[int, dict[str, object]]:
    state = game(max_rounds=1)
    goodge_zero(state, bid=bid)
    finish_round(state)
    last = state.observation(0)["last_round"]
    return state.scores[0], last


def test_goodge_making_and_missing_the_bid() -> None:
    score, last = points_of_goodge(250)
    taken = last["points"][0]
    assert 50 <= taken < 250
    assert last["made"] is False
    # Missing subtracts the bid, points taken are lost, and the score goes negative.
    assert score == -250
    assert last["deltas"][0] == -250
    assert last["deltas"][1:] == last["points"][1:]

    exact = taken - taken % 5
    score, last = points_of_goodge(exact)
    assert last["made"] is True
    assert score == taken
    assert last["deltas"] == last["points"]

    score, last = points_of_goodge(exact + 5)
    assert last["made"] is False
    assert score == -(exact + 5)


# -- end of game ----------------------------------------------------------------


def first_round_deltas() -> list[int]:
    state = game(max_rounds=1)
    goodge_zero(state)
    finish_round(state)
    return list(state.observation(0)["last_round"]["deltas"])


def test_game_ends_after_a_round_reaching_500_highest_wins() -> None:
    deltas = first_round_deltas()
    state = game()
    # Seat 2 ends the round at 510, seat 1 at 505: both past 500, the highest wins.
    state.scores[:] = [0, 505 - deltas[1], 510 - deltas[2], 0]
    goodge_zero(state)
    finish_round(state)
    assert state.is_over()
    assert state.round == 1
    result = state.result()
    assert result.scores[1:3] == (505, 510)
    assert result.ranks[2] == 1
    assert result.ranks[1] == 2


def test_tie_at_the_top_forces_another_round() -> None:
    deltas = first_round_deltas()
    state = game()
    state.scores[:] = [0, 520 - deltas[1], 520 - deltas[2], 0]
    goodge_zero(state)
    finish_round(state)
    assert not state.is_over()
    assert state.round == 2
    assert state.observation(0)["scores"][1:3] == [520, 520]
    while not state.is_over():
        finish_round(state)
    result = state.result()
    assert state.round >= 2
    assert sorted(result.ranks)[:2] == [1, 2]
    assert max(result.scores) >= 500


def test_round_cap_ends_the_game() -> None:
    state = new_game(3, 5, {"max_rounds": 2})
    while not state.is_over():
        finish_round(state)
    assert state.is_over()
    assert state.round == 2
    with pytest.raises(ValueError, match="not over"):
        new_game(3, 5).result()


# -- contract: deal, options, notation, views --------------------------------


@pytest.mark.parametrize(
    ("deal", "message"),
    [
        ({"hands": DEAL["hands"][:3], "stash": DEAL["stash"]}, "list of 4 hands"),
        ({"hands": DEAL["hands"], "stash": ["1D", "1R"]}, "list of 3 card ids"),
        (
            {"hands": [*DEAL["hands"][:3], ["1D", *HANDS[3].split()[1:]]], "stash": DEAL["stash"]},
            "dealt twice",
        ),
        (
            {"hands": [*DEAL["hands"][:3], ["11S", *HANDS[3].split()[1:]]], "stash": DEAL["stash"]},
            "not a card id",
        ),
        (
            {"hands": [*DEAL["hands"][:3], HANDS[3].split()[1:]], "stash": DEAL["stash"]},
            "list of 12 card ids",
        ),
        ({**DEAL, "dealer": 4}, "must be a seat 0..3"),
        ({**DEAL, "extra": 1}, "unknown keys"),
        ("deal", "must be a dict"),
    ],
)
def test_bad_deals_are_refused(deal: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        new_game(4, 1, None, deal)


def test_options_and_players_are_checked() -> None:
    assert SPEC.defaults() == {"one_high": True, "all_pass": "dealer_50", "max_rounds": 200}
    with pytest.raises(ValueError, match="3 to 4 players"):
        new_game(5, 1)
    with pytest.raises(ValueError, match="option all_pass"):
        new_game(4, 1, {"all_pass": "nobody"})
    assert new_game(4, 1, {"one_high": "false"}).options["one_high"] is False


def test_notation_round_trips() -> None:
    for name in ("1S", "10C", "CR", "bid:50", "bid:250", "pass", "trump:R"):
        assert str(SPEC.parse_action(name)) == name
    state = game()
    state.apply(0, SPEC.parse_action("bid:55"))
    state.apply(1, int(SPEC.parse_action("pass")))
    assert state.log()["moves"] == [[0, "bid:55"], [1, "pass"]]


def test_observation_shows_only_what_a_seat_may_know() -> None:
    state = game()
    goodge_zero(state)
    play(state, "2H CR 3H")
    observation = state.observation(3)
    json.dumps(observation)
    assert sorted(observation["hand"]) == sorted(HANDS[3].split())
    assert observation["trick"] == [[0, "2H"], [1, "CR"], [2, "3H"]]
    assert observation["hand_sizes"] == [11, 11, 11, 12]
    assert observation["stash"] is None
    hidden = state.hidden_cards(3)
    assert "CR" not in hidden and "3S" in hidden and "5H" not in hidden
    assert len(hidden) == 11 * 3 + 3


def test_replay_with_a_deal_gives_the_same_game() -> None:
    state = game()
    goodge_zero(state)
    finish_round(state)
    finish_round(state)
    copy = games.replay(json.loads(json.dumps(state.log())))
    assert copy.log() == state.log()
    for seat in range(4):
        assert copy.observation(seat) == state.observation(seat)
