"""Prometheus /metrics pages: scrape one, read a sample from it."""

from __future__ import annotations

import urllib.request


def scrape(port: int) -> str:
    """The text of http://127.0.0.1:PORT/metrics."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
        return str(reply.read().decode())


def metric(text: str, name: str, **labels: str) -> float:
    """The value of one sample in a Prometheus text page (0 if absent)."""
    wanted = ",".join(f'{key}="{value}"' for key, value in sorted(labels.items()))
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        key, _, value = line.rpartition(" ")
        sample, _, rest = key.partition("{")
        if sample != name:
            continue
        found = ",".join(sorted(part for part in rest.rstrip("}").split(",") if part))
        if found == wanted:
            return float(value)
    return 0.0
