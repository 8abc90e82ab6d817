"""The seat-channel seam: how a match runner talks to the bot in a seat.

The runner never touches a stream. It sends an `ActRequest` through a seat
channel and awaits the answer or a timeout, and sends notices. This process
has two implementations: `sessions.LocalSeatChannel` for a referee alone,
and `referee.tier.channel.RelaySeatChannel` for replicas sharing a Redis relay,
which reaches the bot wherever its stream is held.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ladder.records import Notice


class SeatTimeout(Exception):
    """No answer came before the deadline (and time bank) ran out."""


class SeatGone(Exception):
    """The bot has been disconnected for longer than the grace period."""


class ArenaFault(Exception):
    """A move failed for a fault of the arena's own, not the bot's.

    The match is aborted and played again, never scored with strikes the bot
    did not earn. `what` heads the reason the match is stored aborted with.
    """

    what = "arena fault"


class RelayUnavailable(ArenaFault):
    """The relay (Redis) could not carry a request before its deadline."""

    what = "relay unavailable"


class SessionsRefused(ArenaFault):
    """The bot was away while a referee refused sessions for a fault of its own (its
    database failed to read a token, or did not answer): the bot may have been kept out."""

    what = "sessions refused"


class SentAway(ArenaFault):
    """The bot's replica drained during the move and asked it to reconnect elsewhere, and
    the bot was not back before the move's deadline: the move was cut by the arena."""

    what = "sent away by a drain"


@dataclass(frozen=True)
class ActRequest:
    """A request for one action from one seat of one game of a match."""

    request_id: str
    match_id: str
    game_index: int
    game: str
    seat: int
    players: int
    observation: dict[str, Any]
    legal: tuple[str, ...]
    deadline_ms: int
    time_bank_ms: int
    asked_at: float = 0.0
    """Wall-clock time (Unix seconds) the runner first asked: a request sent again after a
    reconnect carries only what is left of its clock (`clock_left`)."""

    def clock_left(self, now: float) -> tuple[int, int]:
        """What is left at `now` of the move's own time and of the time bank, in ms.

        The move's time runs out first, then the bank pays for the overrun.
        """
        elapsed_ms = max(0.0, (now - self.asked_at) * 1000) if self.asked_at else 0.0
        over_ms = max(0.0, elapsed_ms - self.deadline_ms)
        return (
            round(max(0.0, self.deadline_ms - elapsed_ms)),
            round(max(0.0, self.time_bank_ms - over_ms)),
        )

    def to_json(self) -> dict[str, Any]:
        """The request as JSON, for the relay (the observation is not copied)."""
        return dict(vars(self))

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ActRequest:
        """The request `to_json` wrote."""
        return cls(**{**data, "legal": tuple(data["legal"])})


@dataclass(frozen=True)
class Answer:
    """A bot's answer: the index of a legal action, or an action's notation."""

    request_id: str
    index: int | None = None
    action: str | None = None
    relayed: bool = False
    """True when it came through the relay from another replica."""
    bot_s: float | None = field(default=None, compare=False)
    """The bot's own time, as the replica holding its stream measured it (relayed answers):
    the clock is charged with it, never with what the relay added (a lost answer fetched
    again at the deadline costs the bot nothing)."""


class SeatChannel(Protocol):
    """One bot as the runner sees it."""

    bot_id: str

    async def act(self, request: ActRequest, timeout_s: float) -> Answer:
        """Send `request` and return the bot's answer.

        Raises SeatTimeout when no answer comes within `timeout_s`, and
        SeatGone when the bot stays disconnected past the grace period.
        """
        ...

    async def notify(self, notice: Notice) -> None:
        """Tell the bot something; lost if it is not connected."""
        ...
