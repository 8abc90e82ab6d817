"""Whether Redis has served this replica well enough for the registry to be believed.

Where a bot is, the tier knows only from Redis: a session opened while Redis failed or
stalled is published late (at its replica's next heartbeat once Redis answers), and a
look-up made meanwhile, or answered late, may find the bot nowhere, or still on the
replica it left. A bot away over such a time is not known to be away, so the verdict
on it is the relay's fault, not the bot's (`RelaySeatChannel`).

Every replica of a tier shares one Redis: what this replica saw of it stands for what
the others could write, but for a replica cut off from it alone. That one opens no
session (it could not make it known); whom it refused, the others ask it at the verdict
on a seat whose bot is away (`RelaySeatChannel`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable

log = logging.getLogger(__name__)

SLOW_S = 0.5
"""A look-up that takes longer than this met a stalled Redis (one round trip takes
milliseconds): what others wrote meanwhile may come after it."""


class Outages:
    """When this replica last found Redis failing or stalled."""

    def __init__(self, clock: Callable[[], float], settle_s: float) -> None:
        """`settle_s`: how long after Redis answers again the registry may still be
        behind (the replicas republish their sessions at their next heartbeat)."""
        self._clock = clock
        self._settle_s = settle_s
        self._down = False
        self._trusted_from = -math.inf
        self._why = ""

    def failed(self, error: BaseException) -> None:
        """A command failed (or timed out)."""
        if not self._down:
            self._down = True
            self._why = "Redis failed"
            log.warning("tier: Redis is unavailable (%r); retrying", error)

    def answered(self, started: float | None = None) -> None:
        """A command answered; one that `started` more than SLOW_S ago met a stall."""
        if self._down:
            log.warning("tier: Redis answers again")
            self._down = False
            self._distrust("Redis failed")
        elif started is not None and self._clock() - started > SLOW_S:
            self._distrust("Redis stalled")

    def doubt_since(self, since: float) -> str | None:
        """Why the registry was not to be believed at some time from `since` to now (the
        catching up after an outage included), or None if it was throughout."""
        if self._down or since < self._trusted_from:
            return self._why
        return None

    def _distrust(self, why: str) -> None:
        self._trusted_from = self._clock() + self._settle_s
        self._why = why
