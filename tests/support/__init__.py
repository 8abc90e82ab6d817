"""Helpers the test suites share (no fixtures: those are in each suite's conftest.py).

- `processes`: the interpreter and repository, free ports, bounded waits, process groups
- `services`: Redis and PostgreSQL for the tests (skip or fail when missing), a Redis
  server of a test's own, a PostgreSQL schema of a test's own
- `referee`: a referee process, the bots it plays, checks on match results and replays
- `badbot.py`: the misbehaving bot script (run as its own process by `referee`)
- `workers`: the workers' arena of processes (referee, bots, `arena worker`)
- `faults`: the process-fault arena built on it, and the ledger of what a tournament left
- `metrics`: scraping a /metrics page and reading a sample
- `dashboard`: the metric names the Grafana dashboard queries
- `ladder`: registered bots, played matches and counts in a ladder store
- `arena`: a store filled by playing (the web app's tests, the web fuzzer)
"""

import pkgutil

import pytest

# Their assert statements explain a failure the way those of a conftest.py do (each module
# must be marked before it is imported, this package itself is imported already).
pytest.register_assert_rewrite(*(f"{__name__}.{m.name}" for m in pkgutil.iter_modules(__path__)))
