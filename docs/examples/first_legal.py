"""A complete bot: never bids in Goodge, plays low in Golden 10, plays first in Goof."""

from bots import Bot, Turn


class FirstLegal(Bot):
    name = "first-legal"

    def act(self, turn: Turn) -> str:
        if "pass" in turn.legal:  # Goodge bidding: never bid
            return "pass"
        if turn.game == "golden10":  # the lowest card we may play
            return min(turn.legal, key=lambda card: int(card[:-1]))
        return turn.legal[0]  # Goodge discards and plays; Goof: a play if any, else "turn"
