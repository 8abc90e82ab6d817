"""The `random` reference bot: any legal action, uniformly."""

from __future__ import annotations

from bots.base import Bot, Turn


class RandomBot(Bot):
    """Plays a uniformly random legal action; the floor of every ladder."""

    name = "random"

    def act(self, turn: Turn) -> str:
        return self.rng.choice(turn.legal)
