"""What one bot's seats see of a match: its author's live view (WatchSeat).

`SeatProjector` follows a match's full events as the public projection does
(referee.public: its own copy of the engine, events rebuilt from what may be
shown) and gives, for the seats one bot holds:
- after the game starts and after each move or tick, while the game goes on,
  that seat's own observation (`seat_view`), the one an Act to it carries;
- the bot's own moves (each with its answer time) and its own strikes and
  forfeits with their reasons;
- of the other seats only what the public view shows: the start, their strikes
  and forfeits without reasons, each game's end, the match's end.

Nothing of another seat's hand: another seat's move is never passed on (a
Goodge discard names a card that only its seat sees), another bot's reasons
are cut (a strike quotes that bot's legal actions, its hand), and a finished
game's observation is never shown (at Goodge's end every seat sees the Stash,
which a duplicate match deals again in its next rotation; an Act never carries
a finished game's observation).
"""

from __future__ import annotations

import games
from ladder.records import EventType, MatchRequest
from referee.public import Event, Projector

SEAT_VIEW = "seat_view"
"""The event of one seat's own observation after a move or tick."""
SEAT_STREAMS = "seat"
"""The kind of a tier's streams of what one bot's seats see (referee.tier.public)."""


def seat_stream(match_id: str, bot_id: str) -> str:
    """The name of the stream of what `bot_id`'s seats see of `match_id`."""
    return f"{match_id}|{bot_id}"


def stream_seat(stream: str) -> tuple[str, str]:
    """The match and the bot of a `seat_stream` name (a bot id has no '|')."""
    match_id, _, bot_id = stream.rpartition("|")
    return match_id, bot_id


class SeatProjector(Projector):
    """One match's full events in, what one bot's seats see out, in order."""

    def __init__(self, request: MatchRequest, bot_id: str) -> None:
        super().__init__(request)
        self._bot = bot_id
        self._seats: tuple[int, ...] = ()
        """The bot's seats in the game being played."""

    def project(self, event: Event) -> list[Event]:
        """What the bot's seats see of `event`."""
        kind = event["type"]
        if kind == EventType.GAME_START:
            self._seats = tuple(seat for seat, bot in enumerate(event["seats"]) if bot == self._bot)
        if kind in (EventType.STRIKE, EventType.FORFEIT) and event["bot"] == self._bot:
            return [dict(event)]
        return [*self._own_moves(event), *super().project(event)]

    def _own_moves(self, event: Event) -> list[Event]:
        """The bot's own move in `event`, as the referee logged it; none for another's."""
        if event["type"] == EventType.ACTION and event["seat"] in self._seats:
            return [dict(event)]
        if event["type"] == EventType.TICK:
            own = [list(move) for move in event["moves"] if move[0] in self._seats]
            if own:
                return [{"type": EventType.TICK, "game_index": event["game_index"], "moves": own}]
        return []

    def _views(self, game_index: int) -> list[Event]:
        state = self._state
        if state is None or state.is_over():
            return []
        return [self._seat_view(state, game_index, seat) for seat in self._seats]

    def _seat_view(self, state: games.State, game_index: int, seat: int) -> Event:
        return {
            "type": SEAT_VIEW,
            "game_index": game_index,
            "step": self._step,
            "seat": seat,
            "bot": self._bot,
            "view": state.observation(seat),
        }
