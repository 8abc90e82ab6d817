"""bench.processes: the bots taken across the replicas that hold them; latency quantiles."""

from __future__ import annotations

from bench.processes import across_replicas, quantile


def test_consecutive_bots_sit_on_as_many_replicas_as_they_can() -> None:
    held = {"a1": "a", "a2": "a", "a3": "a", "a4": "a", "b1": "b", "b2": "b", "c1": "c"}
    order = across_replicas(held)
    assert sorted(order) == sorted(held)
    assert [held[bot] for bot in order[:3]] == ["a", "b", "c"]
    assert {held[bot] for bot in order[3:5]} == {"a", "b"}
    # Once the smaller replicas run out, the rest come from the largest.
    assert [held[bot] for bot in order[5:]] == ["a", "a"]


def test_one_replica_keeps_every_bot() -> None:
    assert across_replicas({"x": "r", "y": "r"}) == ["x", "y"]


def test_a_quantile_is_the_value_at_its_share_of_the_sorted_latencies() -> None:
    ordered = [float(ms) for ms in range(1, 201)]
    assert (quantile(ordered, 0.5), quantile(ordered, 0.99)) == (101.0, 199.0)
    assert quantile([7.0], 0.99) == 7.0
    assert quantile([], 0.99) == 0.0
