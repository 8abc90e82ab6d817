"""Many bots in one process: one `bots.sdk.BotRunner` per token, on one event loop.

    python -m bench.multibot --referee HOST:PORT --tokens FILE [--bot random]
        [--capacity 4] [--delay-ms 0]

FILE holds a JSON list of bot tokens. Each bot keeps its own session (and
reconnects on its own, as `arena bot run` does). `--delay-ms` makes every
bot of the process think that long per move (a blocking sleep: the bots of
one process then answer one at a time, which is what slow bots in tests
want). SIGTERM or SIGINT stops every session; the process then prints one
JSON line {"bots", "answered", "matches_ended", "sessions", "cpu_s",
"cpu_us_per_move"} and exits 0: the CPU figures are the whole process's
(user + system, from its start), per move its bots answered.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import signal
import time
from pathlib import Path

import bots
from bots.base import Bot, Turn
from bots.sdk import BotRunner
from cardarena_api import event_loop


class Slow(Bot):
    """Another bot that takes `delay_s` per move."""

    def __init__(self, inner: Bot, delay_s: float) -> None:
        super().__init__()
        self.name = f"slow-{inner.name}"
        self.inner = inner
        self.delay_s = delay_s

    def act(self, turn: Turn) -> str:
        time.sleep(self.delay_s)
        return str(self.inner.act(turn))


def make_runners(
    address: str,
    tokens: list[str],
    kind: str,
    capacity: int,
    delay_ms: int = 0,
    every_replica: bool = True,
) -> list[BotRunner]:
    """One runner per token, each with its own bot object."""
    runners = []
    for token in tokens:
        bot = bots.load(kind)
        if delay_ms > 0:
            bot = Slow(bot, delay_ms / 1000)
        runners.append(BotRunner(bot, address, token, capacity, every_replica=every_replica))
    return runners


async def run_all(runners: list[BotRunner]) -> None:
    """Run every runner until SIGTERM/SIGINT (or until they all end)."""
    loop = asyncio.get_running_loop()

    def stop() -> None:
        for runner in runners:
            runner.stop()

    for signum in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(signum, stop)
    await asyncio.gather(*(runner.run() for runner in runners))


def main() -> int:
    """Run the bots; print what they did when stopped."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--referee", required=True, help="the referee's address")
    parser.add_argument("--tokens", required=True, type=Path, help="JSON list of bot tokens")
    parser.add_argument("--bot", default="random", help="random, rules or module:Class")
    parser.add_argument("--capacity", type=int, default=4, help="matches at once per bot")
    parser.add_argument("--delay-ms", type=int, default=0, help="thinking time per move")
    parser.add_argument(
        "--one-session",
        action="store_true",
        help="each bot holds one session, not one per replica of a tier",
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(message)s")
    tokens = [str(token) for token in json.loads(args.tokens.read_text(encoding="utf-8"))]
    runners = make_runners(
        args.referee, tokens, args.bot, args.capacity, args.delay_ms, not args.one_session
    )
    event_loop.run(run_all(runners))
    answered = sum(r.stats.answered for r in runners)
    cpu_s = time.process_time()
    print(
        json.dumps(
            {
                "bots": len(runners),
                "answered": answered,
                "matches_ended": sum(r.stats.matches_ended for r in runners),
                "sessions": sum(r.stats.sessions for r in runners),
                "cpu_s": round(cpu_s, 3),
                "cpu_us_per_move": round(cpu_s * 1e6 / max(1, answered), 1),
            }
        ),
        flush=True,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
