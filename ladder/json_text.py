"""JSON text of what the store keeps and the referee replays, written by orjson.

The json module's encoder holds the GIL from a value's start to its end: a game's
events (about 120 kB of JSON for a game of Goodge) took it 2 ms, more under load, on a
thread storing a finished match or on the referee's loop building a replay, while every
running match's move waited; orjson takes an eighth of that (docs/performance.md).
"""

from __future__ import annotations

import json

import orjson


def json_text(value: object) -> str:
    """`value` as JSON text: orjson's, and the json module's for what orjson cannot write
    (an integer beyond 64 bits: the seed in a match's result and in its games' logs)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except orjson.JSONEncodeError:
        return json.dumps(value)
