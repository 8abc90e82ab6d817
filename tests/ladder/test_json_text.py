"""ladder.json_text: the JSON the json module would write, by orjson where it can."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ladder.json_text import json_text


@pytest.mark.parametrize(
    "value",
    [
        {"seed": 2**127 + 12345, "moves": [[0, "3R"]]},  # beyond 64 bits: the json module's
        [{"type": "say", "text": "Ünïcödé ♠ 黒", "at": 0.1 + 0.2, "none": None}] * 100,
        {"nested": {"a": [1, 2.5, True, False]}, "empty": {}},
    ],
)
def test_json_text_reads_back_as_the_json_module_writes_it(value: Any) -> None:
    assert json.loads(json_text(value)) == json.loads(json.dumps(value)) == value


def test_a_key_that_is_a_number_is_its_text_as_in_the_json_module() -> None:
    assert json.loads(json_text({7: "seven"})) == json.loads(json.dumps({7: "seven"}))


def test_what_json_cannot_write_is_refused_by_both() -> None:
    with pytest.raises(TypeError):
        json_text({"set": {1, 2}})
