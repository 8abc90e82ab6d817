"""bench.profile gives each sampled stack to the innermost part it names."""

from __future__ import annotations

from pathlib import Path

from bench.profile import OTHER, START_UP, part_of, read_samples

RUN_ONCE = "BaseEventLoop._run_once (asyncio/base_events.py:1922)"
HANDLE = "Handle._run (asyncio/events.py:80)"
ASK = "MatchRunner._ask (referee/runner.py:330)"
OBSERVE = "GoodgeState.observation (games/goodge.py:923)"
DUMPS = "dumps (json/__init__.py:231)"
WIRE = "referee_message (referee/wire_results.py:60)"


def test_the_innermost_named_frame_takes_the_sample() -> None:
    assert part_of([RUN_ONCE, HANDLE, ASK, OBSERVE]).startswith("engine")
    assert part_of([RUN_ONCE, HANDLE, ASK]) == "runner"
    # A library frame below ours counts in our part that called it.
    assert part_of([RUN_ONCE, HANDLE, WIRE, DUMPS]) == "building the Act (wire)"
    assert part_of([RUN_ONCE, HANDLE]).startswith("callbacks in C")
    assert part_of(["main (x.py:1)"]) == OTHER


def test_raw_samples_are_summed_per_part(tmp_path: Path) -> None:
    raw = tmp_path / "raw.txt"
    raw.write_text(
        f"{RUN_ONCE};{HANDLE};{ASK} 3\n{RUN_ONCE};{HANDLE};{ASK};{OBSERVE} 2\n"
        f"{RUN_ONCE};{HANDLE};{ASK} 4\n",
        encoding="utf-8",
    )
    samples = read_samples(raw)
    assert samples["runner"] == 7
    assert sum(samples.values()) == 9


def test_a_relayed_move_is_split_into_redis_the_relay_and_the_channel() -> None:
    read = "Relay._read (referee/tier/relay.py:354)"
    command = "Redis.execute_command (redis/asyncio/client.py:610)"
    relayed = "RelaySeatChannel._relayed (referee/tier/channel.py:180)"
    wait = "wait (asyncio/tasks.py:427)"
    assert part_of([RUN_ONCE, HANDLE, read, command]).startswith("redis-py")
    assert part_of([RUN_ONCE, HANDLE, read]).startswith("the relay")
    assert part_of([RUN_ONCE, HANDLE, relayed]).startswith("the tier's seat channel")
    assert part_of([RUN_ONCE, HANDLE, relayed, wait]).startswith("waits and deadline timers")
    assert part_of([RUN_ONCE, "_find_and_load (<frozen importlib._bootstrap>:1176)"]) == START_UP
