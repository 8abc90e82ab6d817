"""When a replica believes the registry: after Redis failed or stalled, not until it settles."""

from __future__ import annotations

from referee.tier.outages import SLOW_S, Outages
from tests.support.clock import Clock


def test_a_failure_is_an_outage_until_an_answer_and_the_settling_after_it() -> None:
    clock = Clock()
    outages = Outages(clock, settle_s=2.0)
    assert outages.doubt_since(0.0) is None
    outages.failed(ConnectionError("gone"))
    clock.now = 110.0
    assert outages.doubt_since(109.0) == "Redis failed"  # under way: nothing since is clear
    outages.answered()
    assert outages.doubt_since(105.0) == "Redis failed"  # the absence overlapped the outage
    assert outages.doubt_since(111.9) == "Redis failed"  # the registry is still catching up
    assert outages.doubt_since(112.0) is None


def test_a_late_answer_is_a_stall_and_a_prompt_one_is_not() -> None:
    clock = Clock()
    outages = Outages(clock, settle_s=2.0)
    outages.answered(started=clock.now - SLOW_S / 2)
    assert outages.doubt_since(clock.now - 1.0) is None
    outages.answered(started=clock.now - SLOW_S * 2)
    assert outages.doubt_since(clock.now - 1.0) == "Redis stalled"
    assert outages.doubt_since(clock.now + 2.0) is None
