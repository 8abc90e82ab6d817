"""Run tests again and again while other work keeps cores busy: do they hold under load?

    python -m tools.loaded [--times 5] [--cores 1] [--json] [-- PYTEST ARGS ...]

Starts `--cores` CPU burners (each a busy loop that ends by itself after `--max-minutes`,
so nothing is left spinning if this process is killed), then runs pytest with the given
arguments up to `--times` times, stopping at the first run that fails. With no pytest
arguments it runs the fault and end-to-end tests (tests/faults, tests/workers,
tests/referee, tests/web) as `make test` does, in two processes. Prints one line a run
(`run 2/5: passed in 412 s`) and at the end a summary; `--json` prints the summary as one
JSON line instead: {"times", "cores", "runs": [{"run", "passed", "seconds"}], "passed"}.
Exits 0 when every run passed, 1 when one failed, 2 on bad arguments. `make test-loaded`
is this with its defaults.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

DEFAULT_TESTS = [
    "-n",
    "2",
    "--dist",
    "loadfile",
    "tests/faults",
    "tests/workers",
    "tests/referee",
    "tests/web",
]


@dataclasses.dataclass(frozen=True)
class Run:
    run: int
    passed: bool
    seconds: float


def burner_code(max_s: float) -> str:
    """A busy loop that stops by itself after `max_s` seconds."""
    return f"import time\nend = time.monotonic() + {max_s}\nwhile time.monotonic() < end: pass\n"


@contextmanager
def burners(cores: int, max_s: float) -> Iterator[None]:
    """`cores` processes that each keep one core busy while the block runs."""
    procs = [subprocess.Popen([sys.executable, "-c", burner_code(max_s)]) for _ in range(cores)]
    try:
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def parse(argv: Sequence[str]) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(
        prog="python -m tools.loaded",
        description="Run pytest several times in a row with CPU burners keeping cores busy.",
        epilog="Arguments after `--` go to pytest (default: "
        + " ".join(DEFAULT_TESTS)
        + "). Exits 1 at the first failed run.",
    )
    parser.add_argument("--times", type=int, default=5, help="runs in a row (default 5)")
    parser.add_argument("--cores", type=int, default=1, help="cores kept busy (default 1)")
    parser.add_argument(
        "--max-minutes",
        type=float,
        default=180.0,
        help="a burner stops by itself after this long (default 180)",
    )
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    argv = list(argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:cut])
    rest = argv[cut + 1 :]
    if args.times < 1 or args.cores < 0 or args.max_minutes <= 0:
        parser.error("--times must be at least 1, --cores at least 0, --max-minutes positive")
    return args, rest or DEFAULT_TESTS


def main(argv: Sequence[str] | None = None) -> int:
    args, pytest_args = parse(sys.argv[1:] if argv is None else argv)
    runs: list[Run] = []
    with burners(args.cores, args.max_minutes * 60):
        for number in range(1, args.times + 1):
            start = time.monotonic()
            status = subprocess.run([sys.executable, "-m", "pytest", *pytest_args]).returncode
            runs.append(Run(number, status == 0, round(time.monotonic() - start, 1)))
            verdict = "passed" if status == 0 else f"FAILED (pytest exit {status})"
            print(
                f"run {number}/{args.times}: {verdict} in {runs[-1].seconds:g} s",
                file=sys.stderr if args.json else sys.stdout,
                flush=True,
            )
            if status != 0:
                break
    passed = len(runs) == args.times and all(run.passed for run in runs)
    if args.json:
        summary = {
            "times": args.times,
            "cores": args.cores,
            "runs": [dataclasses.asdict(run) for run in runs],
            "passed": passed,
        }
        print(json.dumps(summary))
    else:
        print(
            f"{sum(run.passed for run in runs)} of {args.times} runs passed "
            f"with {args.cores} core(s) kept busy"
        )
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
