"""Whether Redis has served this replica well enough for the registry to be believed.

Where a bot is, the tier knows only from Redis: a session opened while Redis failed or
stalled is published late (at its replica's next heartbeat once Redis answers), and a
look-up made meanwhile, or answered late, may find the bot nowhere, or still on the
replica it left. A bot away over such a time is not known to be away, so the verdict
on it is the relay's fault, not the bot's (`RelaySeatChannel`).

Every replica of a tier shares one Redis: what this replica saw of it stands for what
the others could write.
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

    def failed(self, error: BaseException) -> None:
        """A command failed (or timed out)."""
        if not self._down:
            self._down = True
            log.warning("tier: Redis is unavailable (%r); retrying", error)

    def answered(self, started: float | None = None) -> None:
        """A command answered; one that `started` more than SLOW_S ago met a stall."""
        now = self._clock()
        if self._down:
            log.warning("tier: Redis answers again")
        if self._down or (started is not None and now - started > SLOW_S):
            self._trusted_from = now + self._settle_s
            self._down = False

    def clear_since(self, since: float) -> bool:
        """Whether Redis served well from `since` to now, the registry's catching up
        after an outage included."""
        return not self._down and since >= self._trusted_from
