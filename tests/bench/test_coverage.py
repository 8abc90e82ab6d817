"""bench.coverage, small: the intervals hold at few deals, where the normal quantile did not;
a deal's games tell the luck each entry had."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bench import coverage


def test_few_deals_keep_their_coverage(capsys: pytest.CaptureFixture[str]) -> None:
    coverage.main(["--simulations", "60", "--deals", "2,3", "--seed", "4"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(line["format"], line["deals"]) for line in lines] == [
        ("compare", 2),
        ("compare", 3),
        ("tournament", 2),
        ("tournament", 3),
    ]
    for line in lines:
        # 60 simulations: about +/- 3 points of noise around 95%.
        assert 0.88 <= line["coverage"] <= 1.0, line
        # With the normal quantile two deals covered about 70%.
        assert line["normal_coverage"] < line["coverage"] - 0.1, line
        # No interval is on more than deals - 1 degrees of freedom.
        assert line["coverage"] >= line["common_df_coverage"], line
    # At three deals three of the five entrants play in only two: their own
    # degrees of freedom widen what t on deals - 1 left short (92% at 1000 simulations).
    assert lines[3]["coverage"] > lines[3]["common_df_coverage"], lines[3]


def test_a_deal_gives_every_entrant_every_seat_s_luck_once() -> None:
    games = coverage.lucky_deal(np.random.default_rng(3), np.zeros(6), [5, 1, 3, 0], 0.8)
    assert len(games) == 4
    had: dict[int, list[float]] = {}
    for ranking, luck in games:
        assert sorted(bot for bot, _ in ranking) == [0, 1, 3, 5]
        assert len(luck) == 4
        for (bot, _), advantage in zip(ranking, luck, strict=True):
            had.setdefault(bot, []).append(advantage)
    seats = sorted(had[5])
    assert all(sorted(advantages) == seats for advantages in had.values())
    assert len(set(seats)) == 4
    # Luck far above the game's own noise decides the order: each game's luck, read in
    # its ranking's order, falls.
    for _ranking, luck in coverage.lucky_deal(
        np.random.default_rng(4), np.zeros(6), [5, 1, 3, 0], 50.0
    ):
        assert list(luck) == sorted(luck, reverse=True)
