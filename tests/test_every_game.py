"""Every game has all its parts: a wire adapter, a replay renderer, a rules bot,
and the capabilities its spec declares really work.

The tests run over `games.names()`, so a game added without one of its parts
fails here by name.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator

import orjson
import pytest

import games
from bots import RulesBot
from bots.local import play_game
from bots.random_bot import RandomBot
from bots.rules import CHOOSERS
from games import sampling
from ladder.web.replay import RENDERERS, build_frames
from ladder.web.schemas import BotRefOut
from referee import wire_actions, wire_observations

NAMES = games.names()
SAMPLED = [name for name in NAMES if games.get(name).sample_deal is not None]


def step(state: games.State, rng: random.Random) -> list[tuple[int, str]]:
    """One random move (a whole tick in a simultaneous game); the actions, in resolution order."""
    if isinstance(state, games.TickState) and state.spec.simultaneous:
        actions = {seat: rng.choice(state.legal_actions(seat)) for seat in state.to_act()}
        return [(seat, str(action)) for seat, action, _ in state.apply_tick(actions)]
    seat = state.to_act()[0]
    action = rng.choice(state.legal_actions(seat))
    state.apply(seat, action)
    return [(seat, str(action))]


def replay_moves(state: games.State, moves: list[tuple[int, str]]) -> None:
    """Apply moves as `step` returned them (a tick's in their resolution order)."""
    if isinstance(state, games.TickState) and state.spec.simultaneous:
        state.apply_tick(dict(moves), [seat for seat, _ in moves])
    else:
        for seat, action in moves:
            state.apply(seat, action)


def states_along(name: str, seed: int, every: int, count: int) -> Iterator[games.State]:
    """`count` independent states of a random game (fewest players), `every` moves apart."""
    spec = games.get(name)
    state = spec.new_game(spec.min_players, seed)
    rng = random.Random(seed)
    moves = 0
    while not state.is_over() and moves < count * every:
        if moves % every == 0:
            yield games.replay(state.log())
        step(state, rng)
        moves += 1


def cards(state: games.State) -> Counter[str]:
    return Counter(card for zone in state.zones().values() for card in zone)


@pytest.mark.parametrize("name", NAMES)
def test_the_wire_carries_every_observation_and_action(name: str) -> None:
    spec = games.get(name)
    state = spec.new_game(spec.max_players, 1)
    rng = random.Random(1)
    for _ in range(60):
        if state.is_over():
            break
        for seat in range(state.players):
            observation = state.observation(seat)
            message = wire_observations.observation_message(observation, with_json=True)
            assert message.WhichOneof("detail") == name
            assert orjson.loads(message.json) == orjson.loads(orjson.dumps(observation))
        for seat in state.to_act():
            for action in state.legal_actions(seat):
                typed = wire_actions.action_message(name, str(action), seat)
                assert typed.WhichOneof("game") == name and typed.text == str(action)
        step(state, rng)


@pytest.mark.parametrize("name", NAMES)
def test_a_finished_game_has_a_replay(name: str) -> None:
    assert name in RENDERERS
    spec = games.get(name)
    players = spec.min_players
    state = play_game(name, [RandomBot(seat) for seat in range(players)], seed=2)
    seats = [BotRefOut(id=f"b{seat}", name=f"bot{seat}", version="1") for seat in range(players)]
    frames, _ = build_frames(dict(state.log()), seats)
    assert frames[0].kind == "deal" and frames[-1].kind == "end"


@pytest.mark.parametrize("name", NAMES)
def test_the_rules_bot_plays_every_game(name: str) -> None:
    assert name in CHOOSERS
    spec = games.get(name)
    for players in (spec.min_players, spec.max_players):
        state = play_game(name, [RulesBot(seat) for seat in range(players)], seed=3)
        assert state.is_over()


@pytest.mark.parametrize("name", NAMES)
def test_the_declared_capabilities_match_the_state(name: str) -> None:
    spec = games.get(name)
    state = spec.new_game(spec.min_players, 4)
    assert spec.simultaneous == isinstance(state, games.TickState)
    assert (spec.sample_deal is None) == (spec.state_from_observation is None), (
        "a game that samples deals also rebuilds states from them, and the other way round"
    )
    if spec.sample_deal is None:
        with pytest.raises(ValueError, match="cannot sample"):
            sampling.determinize(state.observation(0), random.Random(0))


@pytest.mark.parametrize("name", NAMES)
def test_a_clone_plays_on_like_the_original_and_leaves_it_alone(name: str) -> None:
    for state in states_along(name, 5, every=37, count=4):
        log = state.log()
        seen = [state.observation(seat) for seat in range(state.players)]
        copy = state.clone()
        twin = state.clone()
        rng = random.Random(6)
        while not copy.is_over():
            replay_moves(twin, step(copy, rng))
        assert twin.log() == copy.log() and twin.result() == copy.result()
        assert state.log() == log
        assert [state.observation(seat) for seat in range(state.players)] == seen


@pytest.mark.parametrize("name", NAMES)
def test_a_round_only_clone_ends_with_the_round(name: str) -> None:
    for state in states_along(name, 7, every=19, count=12):
        start = state.round
        copy = state.clone(this_round_only=True)
        full = state.clone()
        rng = random.Random(8)
        while not copy.is_over():
            replay_moves(full, step(copy, rng))
        assert copy.round == start
        assert full.is_over() or full.round == start + 1
        assert copy.result().scores == tuple(full.observation(0)["scores"])


@pytest.mark.parametrize("name", SAMPLED)
def test_a_sampled_deal_fits_the_observation_and_rebuilds_the_state(name: str) -> None:
    spec = games.get(name)
    assert spec.sample_deal is not None and spec.state_from_observation is not None
    rng = random.Random(9)
    for state in states_along(name, 9, every=5, count=40):
        for seat in range(state.players):
            observation = state.observation(seat)
            deal = spec.sample_deal(observation, rng)
            rebuilt = spec.state_from_observation(observation, deal, 10)
            assert rebuilt.observation(seat) == observation, "the deal fits what the seat saw"
            assert cards(rebuilt) == cards(state), "every card exactly once"
            assert rebuilt.to_act() == state.to_act()
            assert rebuilt.legal_actions(seat) == state.legal_actions(seat)
