"""The person's seat as text: views drawn from real games, typed moves read."""

from __future__ import annotations

import random
import re

import pytest

import games
from arena_cli import human_view
from arena_cli.human_view import ListActions, Move, Refusal, notation, read_entry

GAMES = {"goodge": 4, "golden10": 4, "goof": 3}


def legal(state: games.State, seat: int) -> list[str]:
    return [str(action) for action in state.legal_actions(seat)]


def step(state: games.State, rng: random.Random) -> None:
    """One random legal step of any game (a whole tick in Goof)."""
    if isinstance(state, games.TickState) and state.spec.simultaneous:
        state.apply_tick({seat: rng.choice(state.legal_actions(seat)) for seat in state.to_act()})
    else:
        seat = state.to_act()[0]
        state.apply(seat, rng.choice(state.legal_actions(seat)))


def state_at(game: str, players: int, steps: int, seed: int = 5) -> games.State:
    state = games.get(game).new_game(players, seed)
    rng = random.Random(seed)
    for _ in range(steps):
        step(state, rng)
    return state


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_table_shows_the_seats_own_cards_and_no_card_hidden_from_it(game: str) -> None:
    state = games.get(game).new_game(GAMES[game], 11)
    rng = random.Random(11)
    for _ in range(120):
        if state.is_over():
            break
        for seat in range(state.players):
            shown = "\n".join(human_view.table(state.observation(seat)))
            words = set(re.findall(r"[\w@]+", shown))
            assert not words & state.hidden_cards(seat), (seat, shown)
            hand = state.observation(seat).get("hand")
            if hand is not None:
                assert f"Your hand ({len(hand)})" in shown and set(hand) <= words
        step(state, rng)


def test_golden10_table_names_the_trick_the_lead_and_the_seat_as_you() -> None:
    state = state_at("golden10", 3, 5)
    seat = state.to_act()[0]
    view = state.observation(seat)
    lines = human_view.table(view)
    assert lines[0].startswith("-- round 1 of 6")
    assert lines[1].startswith("Scores: ") and f"you {view['scores'][seat]}" in lines[1]
    trick = next(line for line in lines if line.startswith("Trick: "))
    colour = human_view.SUIT_NAMES["golden10"][view["led_colour"]]
    assert trick.endswith(f"(led {colour})")
    assert all(card in trick for _, card in view["trick"])
    assert any(line.startswith("Last trick: ") and " -> " in line for line in lines)


def test_goodge_table_shows_the_bidding_then_the_contract_and_the_goodges_stash() -> None:
    state = games.get("goodge").new_game(3, 2)
    bidder = state.to_act()[0]
    state.apply(bidder, "bid:60")
    passer = state.to_act()[0]
    state.apply(passer, "pass")
    bidding = human_view.table(state.observation(bidder))
    assert f"Bids: you bid 60, seat {passer} pass" in bidding
    state.apply(state.to_act()[0], "pass")
    goodge = state.to_act()[0]
    assert goodge == bidder
    state.apply(goodge, legal(state, goodge)[0])
    lines = human_view.table(state.observation(goodge))
    assert "the Goodge discards 3 cards" in lines[0]
    assert not any(line.startswith("Bids: ") for line in lines)
    assert any(line.startswith("The Goodge: you at 60 · trump not named yet") for line in lines)
    assert lines[-1].startswith("Your Stash: ")
    other = (goodge + 1) % 3
    assert not any("Stash: " in line for line in human_view.table(state.observation(other)))


def test_goof_table_lists_piles_the_last_tick_and_every_tableau_the_persons_last() -> None:
    state = state_at("goof", 3, 40)
    view = state.observation(1)
    lines = human_view.table(view)
    assert lines[0].startswith(f"-- round 1 · tick {view['tick']}")
    assert lines[1].startswith("Piles: ")
    assert lines[-1].startswith("You: goof pile ")
    assert [line.split(":")[0] for line in lines[-3:-1]] == ["seat 0", "seat 2"]
    # The person's own cards drop the owner mark; cards on the piles keep it.
    assert "@" not in lines[-1]
    assert all(f"p{pile['id']} {pile['top']}" in lines[1] for pile in view["piles"])


def test_news_tells_each_round_scored_since_the_persons_last_turn() -> None:
    state = games.get("golden10").new_game(3, 7)
    before = state.observation(0)
    rng = random.Random(7)
    while state.round == 1:
        step(state, rng)
    after = state.observation(0)
    (line,) = human_view.news(before, after)
    assert line.startswith("Round 1: red points you ")
    assert line.endswith(f"totals {human_view.by_seat(after['scores'], 0)}")
    assert human_view.news(after, after) == []

    goof = state_at("goof", 2, 0)
    start = goof.observation(0)
    while goof.round == 1:
        step(goof, rng)
    (line,) = human_view.news(start, goof.observation(0))
    assert line.startswith("Round 1: ") and "round scores you " in line


def test_describe_never_names_a_discard_and_words_the_rest() -> None:
    assert human_view.describe("goodge", "discard", "1S") == "discards a card face down"
    assert human_view.describe("goodge", "bid", "bid:55") == "bids 55"
    assert human_view.describe("goodge", "bid", "pass") == "passes"
    assert human_view.describe("goodge", "trump", "trump:R") == "names trump: Stars (R)"
    assert human_view.describe("goodge", "play", "CR") == "plays CR"
    assert human_view.describe("golden10", "play", "10Y") == "plays 10Y"
    assert human_view.goof_move("AS>new") == "AS to a new pile"
    assert human_view.goof_move("7H>p3") == "7H onto pile 3"


def test_numbered_wraps_the_actions_and_numbers_them_from_1() -> None:
    actions = [f"bid:{value}" for value in range(50, 255, 5)]
    lines = human_view.numbered(actions)
    assert all(len(line) <= human_view.WIDTH for line in lines)
    numbers = [int(n) for n in re.findall(r"(\d+)\) ", " ".join(lines))]
    assert numbers == list(range(1, len(actions) + 1))
    assert lines[0].startswith("  1) bid:50")


def test_intro_names_every_other_seat_and_how_to_answer() -> None:
    first, legend, how = human_view.intro("goodge", ["rules", "human", "random"], 1)
    assert first.startswith(
        "The Goodge Rules · 3 players · you are seat 1; seat 0 rules, seat 2 random"
    )
    assert "CR the Crown" in legend and "number" in how
    assert "empty line waits" in human_view.intro("goof", ["human", "rules"], 0)[2]


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("7h", "7H"),
        (" 10y ", "10Y"),
        ("cr", "CR"),
        ("bid 55", "bid:55"),
        ("BID:55", "bid:55"),
        ("Trump r", "trump:R"),
        ("PASS", "pass"),
        ("as > new", "AS>new"),
        ("7h>P3", "7H>p3"),
        ("Turn", "turn"),
    ],
)
def test_notation_reads_any_case_and_blanks(typed: str, meant: str) -> None:
    assert notation(typed) == meant


def test_read_entry_takes_a_number_or_text_and_refuses_the_rest_saying_why() -> None:
    state = state_at("golden10", 3, 4)
    seat = state.to_act()[0]
    view = state.observation(seat)
    moves = legal(state, seat)
    assert read_entry("1", moves, view) == Move(moves[0])
    assert read_entry(moves[-1].lower(), moves, view) == Move(moves[-1])
    assert read_entry(" ? ", moves, view) == ListActions()
    assert read_entry(str(len(moves) + 1), moves, view) == Refusal(
        f"there is no action {len(moves) + 1}: they are numbered 1 to {len(moves)}"
    )
    assert read_entry("0", moves, view) == Refusal(
        f"there is no action 0: they are numbered 1 to {len(moves)}"
    )
    assert read_entry("xyzzy", moves, view) == Refusal(
        "'xyzzy' is neither an action's number nor its text; ? lists them"
    )
    empty = read_entry("", moves, view)
    assert isinstance(empty, Refusal) and f"(1 to {len(moves)})" in empty.reason
    held = set(view["hand"])
    not_held = next(card for card in ("1R", "14G", "7B", "7Y") if card not in held)
    assert read_entry(not_held, moves, view) == Refusal(
        f"you do not hold {not_held}; ? lists the legal actions"
    )
    off_colour = [card for card in view["hand"] if card not in moves]
    if off_colour:
        refusal = read_entry(off_colour[0], moves, view)
        assert isinstance(refusal, Refusal) and "does not follow" in refusal.reason


def test_read_entry_in_goodge_bidding_and_goof_says_what_is_allowed() -> None:
    state = games.get("goodge").new_game(3, 2)
    first = state.to_act()[0]
    state.apply(first, "bid:60")
    seat = state.to_act()[0]
    view = state.observation(seat)
    moves = legal(state, seat)
    assert read_entry("bid 55", moves, view) == Refusal(
        "the lowest bid now is 65; ? lists the legal actions"
    )
    assert read_entry("bid 65", moves, view) == Move("bid:65")
    assert read_entry(view["hand"][0], moves, view) == Refusal(
        "the bidding is on: bid or pass; ? lists the legal actions"
    )
    goof = state_at("goof", 2, 0)
    goof_view = goof.observation(0)
    goof_moves = legal(goof, 0)
    assert read_entry("", goof_moves, goof_view, default="wait") == Move("wait")
    refusal = read_entry("KH>p7", goof_moves, goof_view, default="wait")
    assert isinstance(refusal, Refusal) and refusal.reason.startswith(
        "KH cannot go onto pile 7 now"
    )
