"""What the SDK makes of an Act request: the Turn a bot is given."""

from __future__ import annotations

import orjson

import games
from bots.sdk import turn_from
from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import cards_pb2
from referee import wire_observations

STATE = games.get("golden10").new_game(4, 5)
SEAT = STATE.to_act()[0]
LEGAL = [str(action) for action in STATE.legal_actions(SEAT)]


def act(deadline_ms: int) -> pb.Act:
    return pb.Act(
        time_bank_ms=4500,
        sent_at_ms=1_700_000_000_250,
        request_id="r1",
        match_id="m1",
        game="golden10",
        seat=SEAT,
        observation=wire_observations.observation_message(STATE.observation(SEAT)),
        legal=[cards_pb2.Action(text=text) for text in LEGAL],
        deadline_ms=deadline_ms,
    )


def test_a_turn_carries_the_observation_the_choices_and_the_deadline() -> None:
    turn = turn_from(act(250))
    assert (turn.game, turn.seat, turn.players, turn.legal) == ("golden10", SEAT, 4, tuple(LEGAL))
    assert turn.observation == orjson.loads(orjson.dumps(STATE.observation(SEAT)))
    assert turn.observation is turn.observation  # decoded once, on first use
    assert (turn.deadline_s, turn.time_bank_s, turn.sent_at) == (0.25, 4.5, 1_700_000_000.25)


def test_a_move_whose_own_time_ran_out_still_has_a_clock() -> None:
    # Sent again after a reconnect, past the move's own time: the bank is what is left.
    turn = turn_from(act(0))
    assert (turn.deadline_s, turn.time_bank_s) == (0.0, 4.5)
