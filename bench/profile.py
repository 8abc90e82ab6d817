"""Where the referee's CPU goes per move: `bench.referee` with py-spy sampling the referee.

Prints one JSON line per part of the referee, {"part", "us_per_move", "share"}, then
the bench's own line (`bench.referee`'s figures) with "sampled_us_per_move"; with
`--table`, a Markdown table instead (what docs/performance.md shows).

py-spy samples the referee's Python stacks `--rate` times a second, only while a
thread holds the GIL (`--gil`), without pausing it (`--nonblocking`, so the bench's
figures are not disturbed). Each sample is given to one part: the innermost frame of
the stack that `PARTS` names, so the parts add up to the sampled time. The CPU the
process spent outside the GIL (gRPC's C core on its own threads, system calls) is
the process's CPU less the sampled time: the "outside the GIL" line.

    python -m bench.profile [--seconds 10] [--rate 250] [--table] [bench.referee options]
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench import referee, relay_cost
from bench.processes import BenchError, Started, start_redis

START_UP = "start-up (imports)"
PARTS: tuple[tuple[str, str], ...] = (
    # (part, regular expression on a py-spy frame "function (file:line)"), innermost first
    (START_UP, r"importlib"),
    ("redis-py (commands and replies)", r"redis/"),
    ("the relay (inbox, outgoing queues, messages)", r"referee/tier/relay"),
    ("the tier's seat channel (following the bot)", r"referee/tier/channel"),
    ("the tier's registry", r"referee/tier/(registry|replica)"),
    ("metrics", r"prometheus_client/"),
    ("logging", r"logging/"),
    ("store (start and finish of matches)", r"sqlalchemy/|ladder/store|ladder/models"),
    ("operator calls (the bench's StartMatch, GetMatch, GetReplay)", r"RefereeService\.|_replay"),
    ("engine (rules, views, legal actions)", r"games/"),
    ("building the Act (wire)", r"referee/wire_"),
    (
        "waits and deadline timers (wait, wait_for, call_later)",
        r"wait_for \(asyncio|wait \(asyncio|call_later|TimerHandle",
    ),
    ("session outbox (asyncio.Queue)", r"asyncio/queues"),
    ("seat channel and session", r"referee/sessions|referee/channels"),
    ("runner", r"referee/runner"),
    ("match manager and events", r"referee/matches|referee/public"),
    ("decode guard (interceptor)", r"referee/decoding"),
    ("session stream (service)", r"referee/service"),
    ("threads (to_thread)", r"concurrent/futures"),
    ("the bot's own choice", r"bots/(random_bot|rules|search|racer)"),
    ("the bench's bot (answers at once)", r"bench/relay_cost"),
    ("the SDK: the typed Turn from the Act", r"bots/observations|turn_from \(bots"),
    ("the SDK: its session (reading, answering)", r"bots/"),
    ("callbacks in C (grpc.aio's reads and writes, futures)", r"Handle\._run \(asyncio"),
    ("event loop", r"asyncio/|selectors"),
)
OUTSIDE_GIL = "outside the GIL (gRPC core threads, system calls)"
OTHER = "other"


def part_of(stack: Sequence[str]) -> str:
    """The part a sampled stack (outermost frame first) is counted in."""
    for frame in reversed(stack):
        for part, pattern in _COMPILED:
            if pattern.search(frame):
                return part
    return OTHER


_COMPILED = tuple((part, re.compile(pattern)) for part, pattern in PARTS)


def read_samples(raw: Path) -> Counter[str]:
    """Samples per part from py-spy's raw output (`stack count` per line)."""
    samples: Counter[str] = Counter()
    for line in raw.read_text(encoding="utf-8").splitlines():
        stack, _, count = line.rpartition(" ")
        if stack:
            samples[part_of(stack.split(";"))] += int(count)
    return samples


def record(raw: Path, rate: int) -> list[str]:
    """py-spy sampling GIL-holding stacks without pausing the target, raw, into `raw`
    (the target, `--pid` or `-- command`, follows)."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    options = ["--rate", str(rate), "--format", "raw", "--output", str(raw)]
    return [spy, "record", *options, "--gil", "--nonblocking"]


@contextmanager
def sampling(raw: Path, rate: int, target: str) -> Iterator[Any]:
    """A window (`bench.referee.Window`) in which py-spy samples the referee, or with
    `target` "bot" the first bot."""
    started: list[subprocess.Popen[bytes]] = []

    @contextmanager
    def window(referee_pid: int, bot_pid: int) -> Iterator[None]:
        pid = bot_pid if target == "bot" else referee_pid
        command = [*record(raw, rate), "--pid", str(pid)]
        started.append(subprocess.Popen(command, stdout=subprocess.DEVNULL))
        yield
        started[-1].send_signal(2)  # py-spy writes its output on SIGINT
        started[-1].wait(60)

    try:
        yield window
    finally:
        for process in started:
            if process.poll() is None:
                process.kill()


WHOSE = {
    "referee": (
        "the referee's",
        "referee_cpu_us_per_move",
        "baseline_server_cpu_us_per_roundtrip",
    ),
    "bot": ("one bot's", "bot_cpu_us_per_move", "baseline_client_cpu_us_per_roundtrip"),
    "relay": ("the relay's (both replicas)", "relay_cpu_us_per_move", None),
}
"""Per target: whose CPU, the figure that is its total, and the bare exchange's figure."""


def table(rows: list[dict[str, Any]], figures: dict[str, Any], target: str) -> str:
    """The Markdown table of docs/performance.md."""
    whose, total, bare = WHOSE[target]
    lines = ["| part | µs per move | share |", "|---|---:|---:|"]
    lines += [f"| {row['part']} | {row['us_per_move']:.1f} | {row['share']:.1%} |" for row in rows]
    lines.append(f"| **{whose} CPU per move** | **{figures[total]:.1f}** | |")
    if bare is not None:
        lines.append(f"| the bare exchange (ping-pong, same side) | {figures[bare]:.1f} | |")
    return "\n".join(lines)


def relay_measure(raw: Path, rate: int, workdir: Path) -> dict[str, Any]:
    """`bench.relay_cost` under py-spy on a private redis-server; its figures."""
    with Started(lambda line: print(line, file=sys.stderr)) as started:
        url, _pid = start_redis(workdir, started)
        command = [*record(raw, rate), "--", sys.executable, "-m", "bench.relay_cost"]
        done = subprocess.run(
            [*command, "--redis", f"{url}/0"], capture_output=True, text=True, check=False
        )
    if done.returncode != 0:
        raise BenchError(f"bench.relay_cost under py-spy exited {done.returncode}:\n{done.stderr}")
    # py-spy writes its own lines to the same output.
    line = [line for line in done.stdout.splitlines() if line.startswith("{")][-1]
    figures: dict[str, Any] = json.loads(line)
    # The samples cover the warm-up's requests too.
    figures["moves"] = figures["requests"] + relay_cost.WARM_UP
    return figures


def main(argv: Sequence[str] | None = None) -> None:
    """Run the bench under py-spy and print the parts."""
    parser = referee.parser()
    parser.description = __doc__.split("\n\n")[0]
    parser.add_argument("--rate", type=int, default=250, help="samples per second (default 250)")
    parser.add_argument("--table", action="store_true", help="print a Markdown table")
    parser.add_argument(
        "--target",
        choices=tuple(WHOSE),
        default="referee",
        help="what to sample: the referee (default), one of the Python SDK's bots, "
        "or a relayed move (bench.relay_cost, both replicas in one process)",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "samples.raw"
        if args.target == "relay":
            figures = relay_measure(raw, args.rate, Path(tmp))
        else:
            with sampling(raw, args.rate, args.target) as window:
                figures = referee.measure(args, window)
        samples = read_samples(raw)
    samples.pop(START_UP, None)
    # A bot answers about 1/bots of the moves; bench.referee's bot figure is per move it answered.
    moves = max(1, figures["moves"]) / (args.bots if args.target == "bot" else 1)
    sampled_us = {part: count * 1e6 / args.rate / moves for part, count in samples.items()}
    total_us = figures[WHOSE[args.target][1]]
    outside = max(0.0, total_us - sum(sampled_us.values()))
    rows = [
        {"part": part, "us_per_move": round(us, 1), "share": round(us / total_us, 3)}
        for part, us in sorted(
            [*sampled_us.items(), (OUTSIDE_GIL, outside)], key=lambda item: -item[1]
        )
    ]
    figures["sampled_us_per_move"] = round(sum(sampled_us.values()), 1)
    if args.table:
        print(table(rows, figures, args.target))
        print(json.dumps(figures))
        return
    for row in rows:
        print(json.dumps(row))
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
