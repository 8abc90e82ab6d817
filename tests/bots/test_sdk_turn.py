"""What the SDK makes of an Act request: the Turn a bot is given."""

from __future__ import annotations

import json

from bots.sdk import turn_from
from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import cards_pb2


def act(deadline_ms: int) -> pb.Act:
    observation = {"game": "golden10", "seat": 2, "players": 4, "hand": ["3R", "14Y"]}
    return pb.Act(
        request_id="r1",
        match_id="m1",
        game="golden10",
        seat=2,
        observation=cards_pb2.Observation(
            game="golden10", seat=2, players=4, json=json.dumps(observation)
        ),
        legal=[cards_pb2.Action(text="3R"), cards_pb2.Action(text="14Y")],
        deadline_ms=deadline_ms,
    )


def test_a_turn_carries_the_observation_the_choices_and_the_deadline() -> None:
    turn = turn_from(act(250))
    assert (turn.game, turn.seat, turn.players, turn.legal) == ("golden10", 2, 4, ("3R", "14Y"))
    assert turn.observation["hand"] == ["3R", "14Y"]
    assert turn.deadline_s == 0.25


def test_no_deadline_is_none() -> None:
    assert turn_from(act(0)).deadline_s is None
