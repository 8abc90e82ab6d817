"""The public view of a match: what anyone may watch, and nothing else.

A match's events are its full log: actions show private cards (a Goodge
discard goes to the Stash), strike reasons quote the legal actions, that is
the hand. `Projector` follows those events with its own copy of the engine
and turns them into public events: each built field by field from what is
public (a new private field of an event never leaks by default), each move
replaced by the engine's `public_observation()` after it.

`PublicMatch` is one running match's public events for all its public
watchers: projected once, however many watch, and only while someone does
(the match manager creates it for the first public watcher and drops it
after the last). `Watchers` is its fan-out alone, which a replica of a tier
also uses for the public events of a match another replica plays
(referee.tier.public).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, Protocol

import games
from ladder.records import EventType, MatchRequest

Event = dict[str, Any]
"""An event as JSON, as `referee.runner.Event`."""

VIEW = "view"
"""The public event type that stands for a move or tick: the public view after it."""

MAX_WATCHERS_PER_MATCH = 256
"""Public watchers of one match at once, on one replica (the web relays its viewers'
streams, so one watcher may stand for one browser)."""
MAX_WATCHERS_PER_ADDRESS = 64
"""Public streams one client address may hold open at once (admin-token callers exempt)."""


class TooManyWatchers(Exception):
    """A public watch over the bound of one match's or one address's watchers."""


class WatchUnavailable(Exception):
    """A public watch of a match played by another replica that the relay cannot carry."""


StoredEnd = Callable[[], Awaitable[Event | None]]
"""The stored end of a match as a public event; None while the store says it runs."""


class RemoteMatches(Protocol):
    """Public watching of the matches another replica plays (a tier's, referee.tier.public)."""

    def watch(self, match_id: str, ended: StoredEnd) -> AsyncGenerator[Event, None]:
        """The match's public events as its owner publishes them, until it ends.

        Raises WatchUnavailable when they cannot be read.
        """
        ...


PUBLIC_KEYS: dict[str, tuple[str, ...]] = {
    # No reason: a strike's quotes the answer and the legal actions, that is, the hand.
    EventType.STRIKE: ("game_index", "seat", "bot", "strikes"),
    # No reason either: a forfeit's may quote a bot's action.
    EventType.FORFEIT: ("game_index", "seat", "bot"),
    EventType.GAME_END: ("game_index", "scores", "ranks"),
}
"""What of the events copied as they are anyone may see: only these keys."""


def _kept(event: Event, *keys: str) -> Event:
    """The event's type and only these of its keys (lists copied: events stay unshared)."""
    kept: Event = {"type": event["type"]}
    for key in keys:
        value = event[key]
        kept[key] = list(value) if isinstance(value, list | tuple) else value
    return kept


class Projector:
    """One match's full events in, its public events out, in order."""

    def __init__(self, request: MatchRequest) -> None:
        if request.seed is None:
            raise ValueError(f"match {request.id} has no seed: it was never stored")
        self._request = request
        self._seed = request.seed
        self._spec = games.get(request.game)
        self._options = self._spec.resolve_options(request.options, request.players)
        self._state: games.State | None = None
        self._step = 0

    def project(self, event: Event) -> list[Event]:
        """The public events that `event` gives (none for a move of a game not started)."""
        kind = event["type"]
        if kind == EventType.GAME_START:
            self._state = self._spec.new_game(self._request.players, self._seed, self._options)
            self._step = 0
            start = _kept(event, "game_index", "seats", "seed_commitment")
            return [start, *self._views(event["game_index"])]
        if kind == EventType.ACTION or kind == EventType.TICK:
            return self._moved(event)
        if kind in PUBLIC_KEYS:
            return [_kept(event, *PUBLIC_KEYS[kind])]
        if kind == EventType.MATCH_END:
            # The result publishes the seed: the match is over, as GetMatch shows it to anyone.
            return [{"type": kind, "result": event["result"]}]
        # match_aborted, or a stored match's status (match_running): the referee's own words.
        return [{"type": str(kind), "reason": str(event.get("reason", ""))}]

    def _moved(self, event: Event) -> list[Event]:
        state = self._state
        if state is None:
            return []
        if event["type"] == EventType.TICK and isinstance(state, games.TickState):
            moves = event["moves"]
            state.apply_tick({move[0]: move[1] for move in moves}, [move[0] for move in moves])
        else:
            state.apply(event["seat"], event["action"])
        self._step += 1
        return self._views(event["game_index"])

    def _views(self, game_index: int) -> list[Event]:
        """What stands for the game as it is now: the public view (a seat's own view,
        for referee.seat_view, which follows the game with this engine copy)."""
        return [self._view(game_index)]

    def _view(self, game_index: int) -> Event:
        assert self._state is not None
        return {
            "type": VIEW,
            "game_index": game_index,
            "step": self._step,
            "view": self._state.public_observation(),
        }


class Watchers:
    """One match's public events, kept and handed to each of its public watchers.

    What is kept for a watcher who comes late is every public event but the
    views, of which only the latest: it shows the table as it stands.
    """

    def __init__(self) -> None:
        self._backlog: list[Event] = []
        self._queues: list[asyncio.Queue[Event | None]] = []
        self._closed = False

    @property
    def watched(self) -> bool:
        """True while some public watcher follows the match."""
        return bool(self._queues)

    def put(self, public: Event) -> None:
        """Keep one more public event and hand it to every watcher."""
        if public["type"] == VIEW and self._backlog and self._backlog[-1]["type"] == VIEW:
            self._backlog[-1] = public
        else:
            self._backlog.append(public)
        for queue in self._queues:
            queue.put_nowait(public)

    def join(self) -> asyncio.Queue[Event | None]:
        """A new watcher's queue: the public events so far, then each as it comes."""
        if len(self._queues) >= MAX_WATCHERS_PER_MATCH:
            raise TooManyWatchers(
                f"this match has {MAX_WATCHERS_PER_MATCH} public watchers already; try again later"
            )
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        for public in self._backlog:
            queue.put_nowait(public)
        if self._closed:
            # Joined between the end and the watchers' removal: nothing more will come.
            queue.put_nowait(None)
        else:
            self._queues.append(queue)
        return queue

    def leave(self, queue: asyncio.Queue[Event | None]) -> None:
        """The watcher of `queue` has gone."""
        if queue in self._queues:
            self._queues.remove(queue)

    def close(self) -> None:
        """The match has ended: every watcher's stream ends after what it was given."""
        self._closed = True
        for queue in self._queues:
            queue.put_nowait(None)


class PublicMatch(Watchers):
    """A running match's public events, projected here from its full events."""

    def __init__(self, request: MatchRequest, events: list[Event]) -> None:
        super().__init__()
        self._projector = Projector(request)
        for event in events:
            self.follow(event)

    def follow(self, event: Event) -> None:
        """Project one more event of the match and hand its public events to every watcher."""
        for public in self._projector.project(event):
            self.put(public)
