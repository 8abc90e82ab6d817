"""bench.processes: the bots taken across or within the replicas that hold them; latency
quantiles."""

from __future__ import annotations

from bench.processes import across_replicas, quantile, within_replicas


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


def test_consecutive_bots_sit_on_one_replica_where_they_can() -> None:
    held = {"b2": "b", "a1": "a", "c1": "c", "a2": "a", "b1": "b", "a3": "a"}
    order = within_replicas(held)
    assert order == ["a1", "a2", "a3", "b1", "b2", "c1"]
    # Three seats at a time: only the tables that straddle two replicas mix them.
    tables = [{held[bot] for bot in order[start : start + 3]} for start in range(4)]
    assert tables == [{"a"}, {"a", "b"}, {"a", "b"}, {"b", "c"}]


def test_a_quantile_is_the_value_at_its_share_of_the_sorted_latencies() -> None:
    ordered = [float(ms) for ms in range(1, 201)]
    assert (quantile(ordered, 0.5), quantile(ordered, 0.99)) == (101.0, 199.0)
    assert quantile([7.0], 0.99) == 7.0
    assert quantile([], 0.99) == 0.0
