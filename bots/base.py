"""The one class a bot author subclasses, and what a bot is shown each turn."""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any


@dataclass(frozen=True)
class Turn:
    """One request to act: everything the seat may know, and its choices.

    `observation` is the game's per-seat view (see docs/rules/ for its keys;
    to read it typed, `cast` it to the game's TypedDict, such as
    `games.goodge.GoodgeObservation`);
    `legal` holds the notations of the actions allowed now, e.g. `"bid:55"`
    or `"7H>p3"`. The bot answers with one of them. `deadline_s` is what is
    left of this move's own time when the referee sent the request, in
    seconds, and `time_bank_s` what is left of the match's time bank, which
    pays for a move that runs over (both None in local games: no clock).
    `sent_at` is the referee's wall clock when it sent the request (Unix
    seconds): against the bot's own clock it tells transit from thinking.

    `view` is the observation, or what makes it on first use: the SDK decodes
    the referee's message only for a bot that reads `observation`.
    """

    game: str
    seat: int
    players: int
    view: dict[str, Any] | Callable[[], dict[str, Any]] = field(repr=False, compare=False)
    legal: tuple[str, ...]
    deadline_s: float | None = None
    time_bank_s: float | None = None
    sent_at: float | None = None

    @cached_property
    def observation(self) -> dict[str, Any]:
        """All the seat may know now (the engine's observation, as JSON reads it)."""
        return self.view if isinstance(self.view, dict) else self.view()


class Bot(ABC):
    """A bot: implement `act`, which picks one of `turn.legal`.

    Each bot gets its own seeded RNG, `self.rng`, so local games with the
    same seeds repeat exactly.
    """

    name: str = "bot"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    @abstractmethod
    def act(self, turn: Turn) -> str:
        """The notation of the action to play, one of `turn.legal`."""
