"""The `racer` bot for Goof: never waits when it can act, plays its goof line first."""

from __future__ import annotations

import bots
import games
from bots.local import turn_for
from bots.racer import RacerBot


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


def test_other_games_play_like_rules() -> None:
    state = games.get("golden10").new_game(3, 2)
    seat = state.to_act()[0]
    turn = turn_for(state, seat)
    assert RacerBot(1).act(turn) == bots.reference("rules", 1).act(turn)


def test_registered() -> None:
    assert isinstance(bots.reference("racer", 1), RacerBot)
    assert "search" in bots.REFERENCE_BOTS
