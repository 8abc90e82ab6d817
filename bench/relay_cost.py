"""What the replica tier's Redis relay itself costs in CPU per relayed move.

bench.scale's relay_cpu_us_per_move: two tiers in this process on the bench's
Redis relay requests to a bot that answers at once, so that nothing but the
relay (and this event loop, the referee's) spends the CPU measured. With
`--in-flight` N, N requests are in flight at all times, so that the
messages of several go in one push and one read of an inbox; with 1, each
relayed move pays its round trips of Redis alone, as one does in a tier
where relayed moves come one by one.

    python -m bench.relay_cost --redis redis://127.0.0.1:6379/9 [--in-flight 32] [--requests 6400]

prints {"relay_cpu_us_per_move", "requests", "in_flight"}; `bench.profile --target
relay` runs it under py-spy.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import time
from collections.abc import Sequence
from dataclasses import replace

from cardarena_api.event_loop import run
from referee.channels import ActRequest, Answer
from referee.metrics import RefereeMetrics
from referee.sessions import SessionHub
from referee.tier.replica import Tier

WARM_UP = 200
"""Requests relayed before the measured ones (connections, caches)."""


def measured(requests: int, in_flight: int) -> int:
    """The requests measured: whole rounds of `in_flight` at once."""
    return requests // in_flight * in_flight


def probe(deadline_ms: int) -> ActRequest:
    """A relayed request of a Golden 10 move's size, with a move's deadline of `deadline_ms`."""
    return ActRequest(
        "probe",
        "relay-cost",
        0,
        "golden10",
        0,
        3,
        {"hand": ["5h", "6c", "Td", "Js", "2d", "3c", "4s", "Kh"], "discard": ["Ah"], "round": 2},
        ("5h", "6c", "Td"),
        deadline_ms,
        0,
    )


async def relay_cost(url: str, in_flight: int, requests: int, deadline_ms: int) -> float:
    """The relay's CPU per relayed move (µs), both sides, `in_flight` requests at once.

    Replicas "a" and "b" are tiers in this process; the bot is a session of b's
    that answers each request at once, so all the CPU measured is the relay's
    (and this loop's).
    """
    a = Tier(url, "relay-cost-a", SessionHub(), 5.0, RefereeMetrics.create())
    b = Tier(url, "relay-cost-b", SessionHub(), 5.0, RefereeMetrics.create())
    await a.start()
    await b.start()
    bot = b.hub.open("relay-cost-bot", in_flight)
    await b.beat()
    await a.beat()  # a knows b live, as every replica of a running tier does

    async def answer() -> None:
        while True:
            message = await bot.outbox.get()
            if isinstance(message, ActRequest):
                bot.answer(Answer(message.request_id, index=0))

    answering = asyncio.create_task(answer())
    channel = a.seats.channel(bot.bot_id)
    template = probe(deadline_ms)
    counter = itertools.count()

    async def asker(count: int) -> None:
        for _ in range(count):
            request = replace(template, request_id=f"probe-{next(counter)}")
            await channel.act(request, 10.0)

    try:
        await asker(WARM_UP)
        started = time.process_time()
        await asyncio.gather(*(asker(requests // in_flight) for _ in range(in_flight)))
        used = time.process_time() - started
    finally:
        answering.cancel()
        b.hub.close_all()
        await a.close()
        await b.close()
    return used * 1e6 / measured(requests, in_flight)


def main(argv: Sequence[str] | None = None) -> None:
    """Measure once and print the JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--redis", required=True, help="the Redis URL, with a database number")
    parser.add_argument("--in-flight", type=int, default=32, help="requests at once (32)")
    parser.add_argument("--requests", type=int, default=6400, help="requests measured (6400)")
    parser.add_argument("--deadline-ms", type=int, default=2000, help="a move's deadline (2000)")
    args = parser.parse_args(argv)
    used = run(relay_cost(args.redis, args.in_flight, args.requests, args.deadline_ms))
    line = {
        "relay_cpu_us_per_move": round(used, 1),
        "requests": measured(args.requests, args.in_flight),
        "in_flight": args.in_flight,
    }
    print(json.dumps(line))


if __name__ == "__main__":
    main()
