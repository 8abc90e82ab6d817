"""How counts read in messages and tables: "1 match", "2 matches"."""

from __future__ import annotations


def plural(count: int, one: str, many: str) -> str:
    """`count` and the word that goes with it."""
    return f"{count} {one if count == 1 else many}"
