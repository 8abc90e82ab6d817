"""The league's refusals, shared by its pure planning and the functions over the store."""

from __future__ import annotations


class LeagueError(ValueError):
    """A tournament request that cannot be accepted; the message says why."""
