"""Play (`ladder.web.play`) for the tests: `arena web` with Play on a test referee, clients
from chosen loopback addresses, a reader of server-sent events, and the scan of what a
seat's page received for cards hidden from that seat.

`check_seat_received` scans everything a person's page received from the web (the
seat's events and the API's answers, as JSON) against the cards the seat could not
see at that step, rebuilt from the finished match's replay; the public stream the page
also reads is scanned by `tests.support.public.check_public_stream`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from cardarena_api.v1 import arena_pb2 as pb
from tests.games.test_properties import string_leaves
from tests.support.processes import PYTHON, Processes, free_port, wait_until
from tests.support.public import states_by_step
from tests.support.referee import RefereeProc


def start_web(procs: Processes, ref: RefereeProc, *flags: str, name: str = "web") -> str:
    """`arena web` on a free loopback port over `ref`'s database, following `ref` (or
    another address, given with `--referee` among `flags`), Play on with `flags`; its base
    URL once it serves."""
    port = free_port()
    proc = procs.start(
        name,
        [
            PYTHON, "-m", "arena_cli.main", "web", "--port", str(port),
            "--db", f"sqlite:///{ref.workdir / 'arena.db'}", "--referee", ref.address,
            "--poll-seconds", "0.5", *flags,  # a flag given again wins
        ],
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"

    def serving() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"arena web exited:\n{(procs.logs / f'{name}.log').read_text()}")
        try:
            return httpx.get(f"{base}/healthz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    wait_until(serving, 30, "the web to serve", 0.1)
    return base


def client_from(base: str, address: str) -> httpx.Client:
    """A client of the web whose requests come from `address` (any 127.x.y.z is loopback):
    to the web, another person."""
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=base, transport=transport, timeout=30)


def one_line(response: httpx.Response, status: int) -> str:
    """The refusal's detail: `status`, JSON, one line."""
    assert response.status_code == status, (response.status_code, response.text[:300])
    detail = response.json()["detail"]
    assert isinstance(detail, str) and detail and "\n" not in detail, detail
    return detail


@dataclass
class Stream:
    """A server-sent event stream read in a thread: the events so far, as JSON."""

    client: httpx.Client
    url: str
    events: list[dict[str, Any]] = field(default_factory=list)
    status: int = 0
    done: threading.Event = field(default_factory=threading.Event)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def open(self) -> Stream:
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        return self

    def _read(self) -> None:
        try:
            with self.client.stream("GET", self.url, timeout=httpx.Timeout(30, read=120)) as got:
                self.status = got.status_code
                for line in got.iter_lines():
                    if self._stop.is_set():
                        return
                    if line.startswith("data: "):
                        self.events.append(json.loads(line[len("data: ") :]))
        except httpx.HTTPError:
            pass
        finally:
            self.done.set()

    def close(self) -> None:
        """Leave, as a page that is closed: the connection ends at the next event."""
        self._stop.set()

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [event for event in list(self.events) if event["type"] == kind]

    def wait_for(self, kind: str, count: int = 1, timeout_s: float = 60) -> list[dict[str, Any]]:
        """The events of `kind` once there are `count`."""

        def enough() -> list[dict[str, Any]] | None:
            found = self.of(kind)
            if len(found) >= count:
                return found
            if self.done.is_set():
                raise AssertionError(f"{self.url} ended with {self.events[-3:]}")
            return None

        found: list[dict[str, Any]] = wait_until(
            enough, timeout_s, f"{count} {kind} event(s)", 0.02
        )
        return found


def seat_of(replay: pb.Replay, game_index: int, bot_id: str) -> int:
    return list(replay.games[game_index].seats).index(bot_id)


def check_seat_received(received: Sequence[Any], replay: pb.Replay, bot_id: str) -> int:
    """Everything a seat's page received, in order (events and API answers, as JSON):
    no card hidden from the seat at that step. An act's view must be the seat's own
    observation at some step of the game, which gives that step; anything else is
    checked against the step of the last act before it. Returns the acts seen."""
    steps = states_by_step(replay)
    game, step, acts = 0, 0, 0
    for item in received:
        starts = isinstance(item, dict) and item.get("type") in ("seat_start", "act", "game_end")
        if starts and item["game_index"] != game:
            game, step = item["game_index"], 0
        seat = seat_of(replay, game, bot_id)
        if isinstance(item, dict) and item.get("type") == "act":
            assert item["seat"] == seat
            found = [
                number
                for number, state in enumerate(steps[game])
                if not state.is_over() and _json(state.observation(seat)) == item["view"]
            ]
            assert found, f"act {item['request_id']}: the view is no observation of seat {seat}"
            step, acts = found[0], acts + 1
            state = steps[game][step]
            assert set(item["legal"]) == {str(a) for a in state.legal_actions(seat)}
        hidden = steps[game][step].hidden_cards(seat)
        leaked = string_leaves(item) & hidden
        assert not leaked, f"{str(item)[:80]} at game {game} step {step} shows {sorted(leaked)}"
    return acts


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value))


def choose(legal: Sequence[str], rng: Any) -> str:
    """A legal move, drawn."""
    return str(rng.choice(list(legal)))


def the_replay(ref: RefereeProc, match_id: str) -> pb.Replay:
    return ref.matches.GetReplay(pb.GetMatchRequest(match_id=match_id), timeout=30)


def html_cards(html: str, secret: str, replay: pb.Replay) -> set[str]:
    """The cards of the match that a page's HTML names (its secret left out: a random
    play id could hold a card's letters)."""
    words = set(html.replace(secret, " ").replace(">", " ").replace("<", " ").split())
    cards: set[str] = set()
    for steps in states_by_step(replay).values():
        for seat in range(steps[0].players):
            cards |= steps[0].hidden_cards(seat)
    return words & cards
