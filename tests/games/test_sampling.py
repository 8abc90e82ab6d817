"""Cloning, sampling hidden cards and rebuilding states from one seat's observation."""

from __future__ import annotations

import random
from collections import Counter

import pytest

import games
from games import golden10, goodge, hidden, sampling

TRICK_GAMES = [("goodge", 3), ("goodge", 4), ("golden10", 3), ("golden10", 4), ("golden10", 7)]


def states_along_a_game(game: str, players: int, seed: int, every: int = 7) -> list[games.State]:
    """Copies of a random game every few actions, through every phase of a round."""
    state = games.get(game).new_game(players, seed)
    rng = random.Random(seed)
    out = []
    step = 0
    while not state.is_over() and state.round <= 2:
        if step % every == 0:
            out.append(games.replay(state.log()))
        seat = state.to_act()[0]
        state.apply(seat, rng.choice(state.legal_actions(seat)))
        step += 1
    return out


def deck_of(game: str) -> list[str]:
    module = goodge if game == "goodge" else golden10
    return list(module.TABLE.cls.NAMES[: module.DECK_SIZE])


def voids(observation: dict[str, object], game: str) -> dict[int, set[str]]:
    """Per seat, the cards it cannot hold, from its failures to follow (rules as in the docs)."""
    lacks: dict[int, set[str]] = {}
    tricks = [t["cards"] for t in observation["tricks"]]  # type: ignore[attr-defined]
    if observation["trick"]:
        tricks.append(observation["trick"])
    for cards in tricks:
        first = cards[0][1]
        if game == "goodge":
            trump = observation["trump"]
            lead = trump if first == "CR" else first[-1]
            follow = {f"{r}{lead}" for r in range(1, 11)} | ({"CR"} if lead == trump else set())
        else:
            follow = {f"{r}{first[-1]}" for r in range(1, 15)}
        for who, name in cards[1:]:
            if name not in follow:
                lacks.setdefault(who, set()).update(follow)
    return lacks


@pytest.mark.parametrize(("game", "players"), TRICK_GAMES)
def test_clone_is_independent_and_equal(game: str, players: int) -> None:
    rng = random.Random(1)
    for state in states_along_a_game(game, players, 11, every=9):
        copy = state.clone()  # type: ignore[attr-defined]
        for seat in range(players):
            assert copy.observation(seat) == state.observation(seat)
            assert copy.legal_actions(seat) == state.legal_actions(seat)
        before = {seat: state.observation(seat) for seat in range(players)}
        log = state.log()
        zones = state.zones()
        # Play the copy to the end of the game: the original does not move.
        while not copy.is_over():
            seat = copy.to_act()[0]
            copy.apply(seat, rng.choice(copy.legal_actions(seat)))
        assert state.log() == log
        assert state.zones() == zones
        assert {seat: state.observation(seat) for seat in range(players)} == before


def test_clone_has_the_same_future() -> None:
    state = games.get("golden10").new_game(4, 3, {"rounds": 2})
    copy = state.clone()
    for one in (state, copy):
        while not one.is_over():
            seat = one.to_act()[0]
            one.apply(seat, one.legal_actions(seat)[-1])
    assert copy.log() == state.log()
    assert copy.result() == state.result()


@pytest.mark.parametrize(("game", "players"), TRICK_GAMES)
def test_a_round_only_clone_ends_with_the_round_and_tells_its_outcome(
    game: str, players: int
) -> None:
    rng = random.Random(2)
    for state in states_along_a_game(game, players, 13, every=11):
        if state.is_over():
            continue
        start = state.round
        copy = state.clone(this_round_only=True)  # type: ignore[attr-defined]
        full = state.clone()  # type: ignore[attr-defined]
        while not copy.is_over():
            seat = copy.to_act()[0]
            action = rng.choice(copy.legal_actions(seat))
            copy.apply(seat, action)
            full.apply(seat, action)
        # The same round, played the same way, with the same outcome; only
        # the full copy goes on to a next round.
        assert copy.round == start
        assert full.round == start + 1 or full.is_over()
        assert copy.last_round == full.last_round
        assert copy.last_round is not None and copy.last_round["round"] == start
        assert copy.result().scores == tuple(full.observation(0)["scores"])


@pytest.mark.parametrize(("game", "players"), TRICK_GAMES)
def test_sampled_deals_fit_what_the_seat_saw(game: str, players: int) -> None:
    rng = random.Random(5)
    deck = Counter(deck_of(game))
    for state in states_along_a_game(game, players, 21):
        for seat in range(players):
            observation = state.observation(seat)
            for _ in range(3):
                deal = sampling.sample_deal(observation, rng)
                hands = deal["hands"]
                rest = deal["stash"] if game == "goodge" else deal["left_over"]
                played = [name for t in observation["tricks"] for _, name in t["cards"]]
                played += [name for _, name in observation["trick"]]
                everything = Counter([c for hand in hands for c in hand] + rest + played)
                assert everything == deck, "every card exactly once"
                assert sorted(hands[seat]) == sorted(observation["hand"])
                assert [len(hand) for hand in hands] == observation["hand_sizes"]
                if game == "goodge":
                    assert len(rest) == observation["stash_size"]
                    if observation["stash"] is not None:
                        assert sorted(rest) == sorted(observation["stash"])
                else:
                    assert len(rest) == observation["left_over_count"]
                for who, lacking in voids(observation, game).items():
                    assert not lacking & set(hands[who]), f"seat {who} holds a suit it lacks"


@pytest.mark.parametrize(("game", "players"), TRICK_GAMES)
def test_determinized_state_matches_the_real_one_for_the_seat(game: str, players: int) -> None:
    rng = random.Random(8)
    for state in states_along_a_game(game, players, 31):
        for seat in range(players):
            observation = state.observation(seat)
            rebuilt = sampling.determinize(observation, rng)
            assert rebuilt.observation(seat) == observation
            assert rebuilt.to_act() == state.to_act()
            assert rebuilt.legal_actions(seat) == state.legal_actions(seat)
            assert Counter(c for z in rebuilt.zones().values() for c in z) == Counter(deck_of(game))
        # The real deal rebuilds the real state exactly, and it plays on by the rules.
        seat = state.to_act()[0]
        truth = {"hands": [state.zones()[f"hand:{s}"] for s in range(players)]}
        truth["stash" if game == "goodge" else "left_over"] = state.zones()[
            "stash" if game == "goodge" else "left_over"
        ]
        if game == "golden10":
            truth["left_over"] = golden10._names(state._set_aside)  # type: ignore[attr-defined]
        exact = sampling.state_from_observation(state.observation(seat), truth)
        for other in range(players):
            assert exact.legal_actions(other) == state.legal_actions(other)
        while not exact.is_over():
            who = exact.to_act()[0]
            exact.apply(who, rng.choice(exact.legal_actions(who)))


def test_an_impossible_observation_is_refused() -> None:
    with pytest.raises(ValueError, match="no assignment"):
        hidden.assign_hidden([1, 2], [1, 1], {1: 0b01, 2: 0b01}, random.Random(0))


def test_constrained_cards_go_where_they_must() -> None:
    for seed in range(30):
        held = hidden.assign_hidden(
            [1, 2, 3], [1, 2], {1: 0b11, 2: 0b11, 3: 0b01}, random.Random(seed)
        )
        assert held[0] == [3]


def test_assignment_is_found_whenever_one_exists() -> None:
    rng = random.Random(4)
    for _ in range(300):
        owners = rng.randrange(2, 5)
        cards = list(range(rng.randrange(owners, 16)))
        truth = {card: rng.randrange(owners) for card in cards}
        capacities = [sum(1 for o in truth.values() if o == owner) for owner in range(owners)]
        allowed = {
            card: (1 << truth[card]) | (rng.randrange(1 << owners) & rng.randrange(1 << owners))
            for card in cards
        }
        held = hidden.assign_hidden(cards, capacities, allowed, rng)
        assert [len(h) for h in held] == capacities
        assert all(allowed[card] >> owner & 1 for owner, h in enumerate(held) for card in h)
        assert sorted(c for h in held for c in h) == cards
