"""bench.coverage, small: the intervals hold at few deals, where the normal quantile did not."""

from __future__ import annotations

import json

import pytest

from bench import coverage


def test_few_deals_keep_their_coverage(capsys: pytest.CaptureFixture[str]) -> None:
    coverage.main(["--simulations", "60", "--deals", "2", "--seed", "4"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(line["format"], line["deals"]) for line in lines] == [
        ("compare", 2),
        ("tournament", 2),
    ]
    for line in lines:
        # 60 simulations: about +/- 3 points of noise around 95%.
        assert 0.88 <= line["coverage"] <= 1.0, line
        # With the normal quantile two deals covered about 70%.
        assert line["normal_coverage"] < line["coverage"] - 0.1, line
