"""Properties of every game under random legal play, at every allowed player count."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import games
from games.core import Action

# Goof games are long (every seat acts each tick); one round per game keeps the
# property runs short without skipping any rule, since rounds repeat the set-up.
PLAY_OPTIONS: dict[str, dict[str, object]] = {"goof": {"rounds": 2}}

CASES = [
    (name, players)
    for name in games.names()
    for players in range(games.get(name).min_players, games.get(name).max_players + 1)
]


def string_leaves(value: Any) -> set[str]:
    """Every string inside a JSON value, keys included."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set(value).union(*(string_leaves(item) for item in value.values()))
    if isinstance(value, list):
        return set().union(*(string_leaves(item) for item in value))
    return set()


def all_actions(sample: Action) -> list[Action]:
    """Every action of the game that `sample` belongs to."""
    cls = type(sample)
    return [cls(number) for number in range(len(cls.NAMES))]


def check_step(state: games.State, deck: Counter[str]) -> None:
    """Invariants that hold after every action."""
    zones = state.zones()
    cards = Counter(card for zone in zones.values() for card in zone)
    assert cards == deck, "every card is in exactly one place"
    assert all(count == 1 for count in cards.values())
    if state.is_over():
        assert state.to_act() == ()
        return
    assert state.to_act(), "some seat must act until the game is over"
    for seat in range(state.players):
        observation = state.observation(seat)
        json.dumps(observation)
        leaked = string_leaves(observation) & state.hidden_cards(seat)
        assert not leaked, f"seat {seat} sees hidden cards {sorted(leaked)}"


def random_playout(state: games.State, rng: random.Random, checks: bool) -> None:
    """Play random legal actions to the end, checking invariants at every step."""
    deck = Counter(card for zone in state.zones().values() for card in zone)
    while not state.is_over():
        if isinstance(state, games.TickState) and state.spec.simultaneous:
            state.apply_tick(
                {seat: rng.choice(state.legal_actions(seat)) for seat in state.to_act()}
            )
        else:
            seat = state.to_act()[0]
            state.apply(seat, rng.choice(state.legal_actions(seat)))
        if checks:
            check_step(state, deck)


def check_actions_exhaustively(state: games.State) -> None:
    """Every legal action applies; every other action raises IllegalAction and changes nothing."""
    log = state.log()
    for seat in state.to_act():
        legal = state.legal_actions(seat)
        assert legal, f"seat {seat} must act but has no legal action"
        for action in legal:
            games.replay(log).apply(seat, action)
        # A refused action changes nothing, so one copy serves every refusal.
        copy = games.replay(log)
        before = copy.observation(seat)
        for action in set(all_actions(legal[0])) - set(legal):
            with pytest.raises(games.IllegalAction):
                copy.apply(seat, action)
        assert copy.observation(seat) == before
        assert copy.log() == log
    waiting = [seat for seat in range(state.players) if seat not in state.to_act()]
    sample = state.legal_actions(state.to_act()[0])[0]
    for seat in waiting:
        assert state.legal_actions(seat) == []
        with pytest.raises(games.IllegalAction):
            games.replay(log).apply(seat, sample)


@pytest.mark.parametrize(("game", "players"), CASES)
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_random_play_keeps_invariants_and_replays(game: str, players: int, seed: int) -> None:
    spec = games.get(game)
    state = spec.new_game(players, seed, PLAY_OPTIONS.get(game))
    random_playout(state, random.Random(seed), checks=True)
    result = state.result()
    assert sorted(result.ranks)[0] == 1
    assert len(result.scores) == players

    replayed = games.replay(json.loads(json.dumps(state.log())))
    assert replayed.is_over()
    assert replayed.result() == result
    assert replayed.log() == state.log()
    for seat in range(players):
        assert replayed.observation(seat) == state.observation(seat)

    again = spec.new_game(players, seed, PLAY_OPTIONS.get(game))
    random_playout(again, random.Random(seed), checks=False)
    assert again.log() == state.log(), "same seed and same actions give the same game"


@pytest.mark.parametrize(("game", "players"), CASES)
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), stop=st.integers(0, 400))
def test_every_action_is_legal_or_raises(game: str, players: int, seed: int, stop: int) -> None:
    state = games.get(game).new_game(players, seed, PLAY_OPTIONS.get(game))
    rng = random.Random(seed)
    for _ in range(stop):
        if state.is_over():
            break
        if isinstance(state, games.TickState) and state.spec.simultaneous:
            state.apply_tick(
                {seat: rng.choice(state.legal_actions(seat)) for seat in state.to_act()}
            )
        else:
            seat = state.to_act()[0]
            state.apply(seat, rng.choice(state.legal_actions(seat)))
    if not state.is_over():
        check_actions_exhaustively(state)
