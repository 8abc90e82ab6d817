"""The league's refusals, shared by its pure planning and the functions over the store."""

from __future__ import annotations

from datetime import UTC, datetime


class LeagueError(ValueError):
    """A tournament request that cannot be accepted; the message says why."""


class MatchCancelled(LeagueError):
    """A tournament's match cancelled with its tournament before any referee stored it: it
    is not stored, and never will be."""


class QuotaExceeded(RuntimeError):
    """An author's quota is used up: which, its limit, and when it resets (None: it frees
    up when `frees_up` happens)."""

    def __init__(
        self,
        quota: str,
        limit: int,
        resets_at: datetime | None,
        frees_up: str = "a name is transferred to another author",
    ) -> None:
        when = (
            f"it resets at {resets_at.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ}"
            if resets_at is not None
            else f"it frees up when {frees_up}"
        )
        super().__init__(f"the quota {quota!r} ({limit}) is used up; {when}")
        self.quota = quota
        self.limit = limit
        self.resets_at = resets_at
