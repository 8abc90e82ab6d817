"""bench.ladder_sim, small: its lines, the new ladder ahead of today's at equal games, and
the tournament formats' lines (bench.swiss_sim)."""

from __future__ import annotations

import json

import pytest

from bench import ladder_sim, swiss_sim


def test_lines_per_policy_and_budget(capsys: pytest.CaptureFixture[str]) -> None:
    ladder_sim.main(
        [
            *("--bots", "32", "--budgets", "5,10", "--runs", "1", "--seed", "2"),
            # The lines' form, not the issue's field of 64: a sixteenth of the work.
            *("--swiss-runs", "1", "--swiss-bots", "16"),
        ]
    )
    *lines, swiss, robin, last = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert set(last) == {"runtime_s"}
    for line, form in ((swiss, "swiss"), (robin, "round_robin")):
        assert set(line) == {
            "format",
            "bots",
            "order_rounds",
            "kendall_tau",
            "top10_share",
            "games_per_bot_to_clear",
            "runs",
        }
        assert (line["format"], line["bots"], line["runs"]) == (form, 16, 1)
        assert line["order_rounds"] == swiss_sim.ORDER_ROUNDS
        assert 0.0 < line["kendall_tau"] <= 1.0
        assert 0.0 <= line["top10_share"] <= 1.0
        games = line["games_per_bot_to_clear"]
        assert games is None or 0 < games <= swiss_sim.CAP_ROUNDS * 4
    assert [(line["policy"], line["games_per_bot"]) for line in lines] == [
        (policy, budget) for policy in ladder_sim.POLICIES for budget in (5, 10)
    ]
    for line in lines:
        assert set(line) == {
            "policy",
            "games_per_bot",
            "kendall_tau",
            "kendall_tau_se",
            "top10_share",
            "mae_elo",
            "games_to_best",
            "fewest_games",
            "runs",
        }
        assert -1.0 <= line["kendall_tau"] <= 1.0
        assert line["kendall_tau_se"] is None  # one field
        assert 0.0 <= line["top10_share"] <= 1.0
        assert line["mae_elo"] >= 0.0
        assert line["games_to_best"] is None or 0 <= line["games_to_best"] <= line["games_per_bot"]
        assert 0.0 <= line["fewest_games"] <= 1.0
    tau = {(line["policy"], line["games_per_bot"]): line["kendall_tau"] for line in lines}
    for budget in (5, 10):
        assert tau[("new", budget)] > tau[("today", budget)]


def test_the_standard_error_is_over_the_fields() -> None:
    assert ladder_sim.standard_error([0.7]) is None
    # The sample standard deviation, 0.1155, over the square root of 4 fields.
    assert ladder_sim.standard_error([0.6, 0.8, 0.6, 0.8]) == pytest.approx(0.1155 / 2, abs=1e-4)


def test_fields_in_processes_of_their_own_give_the_same_lines(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def lines(jobs: str) -> list[str]:
        ladder_sim.main(
            [
                *("--bots", "32", "--budgets", "5", "--runs", "2", "--seed", "3"),
                *("--policies", "today,new", "--swiss-runs", "0", "--jobs", jobs),
            ]
        )
        return capsys.readouterr().out.splitlines()[:-1]  # all but the runtime

    alone = lines("1")
    assert len(alone) == 2 and '"runs": 2' in alone[0]
    assert lines("2") == alone
