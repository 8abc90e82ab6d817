"""Play's API: a person's seat against bots, through `arena web` on a real referee.

Real processes over loopback: a referee with the tests' short clocks, two rules bots
(and one whose author refuses challenges), and `arena web --referee` with Play on and
small bounds. The person is an HTTP client from a loopback address of its own. What
the seat's page receives is scanned, at each step, for any card hidden from that seat
(the seat's events and the API's answers), and the public table it reads too.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import random
from collections.abc import AsyncGenerator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from arena_cli.play_host import RefereeSeatHost
from cardarena_api.v1 import arena_pb2 as pb
from ladder.authors import create_author
from ladder.models import RatingHistoryRow, ResultRow
from ladder.store import Seen, Store
from ladder.web import create_app
from ladder.web.play import Bounds, Desk, Play, Seated, SeatEvent, SeatHost, SeatRequest
from ladder.web.views import WebError
from tests.games.test_properties import string_leaves
from tests.support.aio import eventually, run
from tests.support.play import (
    Stream,
    check_seat_received,
    choose,
    client_from,
    html_cards,
    one_line,
    start_web,
    the_replay,
)
from tests.support.processes import Processes, free_port, wait_until
from tests.support.public import check_public_stream, hidden_by_step
from tests.support.referee import BotHandle, RefereeProc, launch_referee

AT_ONCE = 2
DEADLINE_MS = 1500
TICK_MS = 600


@dataclass
class PlayArena:
    ref: RefereeProc
    web: str
    bots: list[BotHandle]
    shy: BotHandle
    """Online, but its author refuses challenges: never offered."""
    log: Path


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlayArena]:
    workdir = tmp_path_factory.mktemp("play")
    procs = Processes(workdir)
    try:
        ref = launch_referee(workdir, procs)
        bots = [ref.run_bot("rules", ref.register("rules", operator=True)) for _ in range(2)]
        shy = ref.register("shy")
        ref.authors.SetBot(
            pb.SetBotRequest(bot=shy.name, challenges=False), metadata=ref.author(), timeout=10
        )
        ref.run_bot("rules", shy)
        ref.wait_connected([*bots, shy])
        web = start_web(
            procs,
            ref,
            "--play-at-once", str(AT_ONCE), "--play-per-address", "1",
            "--play-deadline-ms", str(DEADLINE_MS), "--play-tick-ms", str(TICK_MS),
        )  # fmt: skip
        yield PlayArena(ref, web, bots, shy, workdir / "web.log")
        ref.channel.close()
    finally:
        procs.close()


def offered(person: httpx.Client, bots: list[BotHandle]) -> None:
    """Wait until the web offers these bots (their presence reaches the store)."""

    def listed() -> bool:
        ids = {bot["id"] for bot in person.get("/api/play").json()["opponents"]}
        return {bot.bot_id for bot in bots} <= ids

    wait_until(listed, 30, "the bots to be offered", 0.1)


def ended(person: httpx.Client, play_id: str) -> dict[str, Any]:
    """The game once it is no longer played."""

    def state() -> dict[str, Any] | None:
        got: dict[str, Any] = person.get(f"/api/play/{play_id}").json()
        return got if got["status"] != "playing" else None

    found: dict[str, Any] = wait_until(state, 90, "the game to end", 0.2)
    return found


def start(person: httpx.Client, game: str, bots: list[BotHandle], **extra: Any) -> dict[str, Any]:
    body = {"game": game, "players": 1 + len(bots), "opponents": [b.bot_id for b in bots]}
    response = person.post("/api/play", json={**body, **extra})
    assert response.status_code == 201, response.text
    assert response.headers["cache-control"] == "no-store"
    started: dict[str, Any] = response.json()
    return started


def play_out(
    person: httpx.Client,
    started: dict[str, Any],
    seat: Stream,
    rng: random.Random,
    first: Callable[[dict[str, Any]], list[Any]] | None = None,
    wanted: str = "",
) -> tuple[int, list[tuple[int, Any]]]:
    """Answer each act of the seat with the `wanted` move when legal, else a legal move
    drawn by `rng`, until the match ends (`first` is called on the first act, before it is
    answered). The moves made, and the API's answers the page got, each with how many
    seat events it had then."""
    answers: list[tuple[int, Any]] = [(0, started)]
    moves = 0
    while True:
        wait_until(lambda n=moves: len(seat.of("act")) > n or seat.of("match_end"), 60, "a turn")
        if len(seat.of("act")) == moves:
            return moves, answers
        act = seat.of("act")[moves]
        if moves == 0 and first is not None:
            answers += [(len(seat.events), item) for item in first(act)]
        move = wanted if wanted in act["legal"] else choose(act["legal"], rng)
        body = {"request_id": act["request_id"], "action": move}
        answer = person.post(started["answer"], json=body)
        assert answer.status_code == 200, answer.text
        answers.append((len(seat.events), answer.json()))
        moves += 1


def in_order(events: list[dict[str, Any]], answers: list[tuple[int, Any]]) -> list[Any]:
    """The seat's events and the API's answers in the order the page got them."""
    received: list[Any] = []
    for number, event in enumerate([*events, None]):
        received += [item for at, item in answers if at == number]
        if event is not None:
            received.append(event)
    return received


def test_a_person_plays_golden10_and_the_page_gets_only_the_seats_view(arena: PlayArena) -> None:
    """A whole game of Golden 10 at 3 players through the API, moves drawn among the legal
    ones: the page's every answer and event shows no card hidden from the seat, the public
    table it reads none hidden from anyone; the match is a challenge that rates nobody."""
    rng = random.Random(7)
    person = client_from(arena.web, "127.0.0.1")
    offered(person, arena.bots)
    page = person.get("/play")
    assert page.status_code == 200 and 'id="nav-play"' in page.text
    assert all(bot.bot_id in page.text for bot in arena.bots)
    assert arena.shy.bot_id not in page.text, "a bot that refuses challenges is not offered"
    choices = person.get("/api/play").json()
    assert arena.shy.bot_id not in {bot["id"] for bot in choices["opponents"]}
    assert (choices["at_once"], choices["per_address"]) == (AT_ONCE, 1)

    started = start(person, "golden10", arena.bots, name="Ann \u202e<b>", rounds=1)
    play_id, match_id = started["play_id"], started["match_id"]
    seat_page = person.get(started["url"])
    assert seat_page.status_code == 200 and seat_page.headers["cache-control"] == "no-store"
    assert "Ann \\u202e&lt;b&gt;" in seat_page.text and "<b>" not in seat_page.text
    assert "<script>" not in seat_page.text, "no inline script"
    seat = Stream(person, started["events"]).open()
    public = Stream(person, f"/api/matches/{match_id}/live").open()

    def first_move(act: dict[str, Any]) -> list[Any]:
        """Not a legal move, or not the open request: refused in one line, no strike."""
        body = {"request_id": act["request_id"], "action": "99Z"}
        bad = person.post(started["answer"], json=body)
        assert "is not a legal move now" in one_line(bad, 409)
        body = {"request_id": "nope", "action": act["legal"][0]}
        assert "no open move" in one_line(person.post(started["answer"], json=body), 409)
        state = person.get(f"/api/play/{play_id}").json()
        assert state["status"] == "playing" and state["rated"] is False
        return [bad.json(), state]

    moves, answers = play_out(person, started, seat, rng, first_move)
    end = seat.wait_for("match_end")[0]["result"]
    assert moves == 56 // 3 and not seat.of("seat_strike")
    assert len(seat.of("answered")) == moves
    public.done.wait(30)
    final = person.get(f"/api/play/{play_id}").json()
    assert final["status"] == "finished" and final["result"] == end and final["challenge"]
    answers.append((len(seat.events), final))

    replay = the_replay(arena.ref, match_id)
    kinds = [event["type"] for event in seat.events]
    assert kinds[0] == "seat_start" and kinds[-1] == "match_end"
    received = in_order(seat.events, answers)
    assert check_seat_received(received, replay, final["bot_id"]) == moves
    assert not html_cards(seat_page.text, play_id, replay)
    events = [{**event, "strings": string_leaves(event)} for event in public.events]
    assert check_public_stream(events, hidden_by_step(replay)) > moves

    # Unrated: on the record of each bot, no rating moved.
    store = Store(f"sqlite:///{arena.ref.workdir / 'arena.db'}")
    try:

        def recorded() -> bool:
            with store.session() as session:
                rows = session.scalars(select(ResultRow).where(ResultRow.match_id == match_id))
                return bool(rows.all())

        wait_until(recorded, 30, "the referee to record the challenge")
        with store.session() as session:
            moved = session.scalars(
                select(RatingHistoryRow).where(RatingHistoryRow.match_id == match_id)
            ).all()
        assert not moved
        assert store.match(match_id).request.challenger
    finally:
        store.close()
    # The public pages of the match say challenge, and nothing of the play id.
    for public_page in (f"/matches/{match_id}", f"/api/matches/{match_id}", "/"):
        shown = person.get(public_page)
        assert shown.status_code == 200 and play_id not in shown.text
    assert person.get(f"/api/matches/{match_id}").json()["challenge"] is True


def test_a_person_plays_goodge_and_sees_the_stash_only_as_the_goodge(arena: PlayArena) -> None:
    """Goodge at 3 players, one round, moves drawn: the Stash reaches the seat's page only
    once the seat is the Goodge (its observation's own), and nothing else hidden from it."""
    person = client_from(arena.web, "127.0.0.8")
    offered(person, arena.bots)
    started = start(person, "goodge", arena.bots, rounds=1)
    seat = Stream(person, started["events"]).open()
    public = Stream(person, f"/api/matches/{started['match_id']}/live").open()
    # The top bid: the seat is the Goodge and takes the Stash.
    moves, answers = play_out(person, started, seat, random.Random(3), wanted="bid:250")
    seat.wait_for("match_end")
    views = [(act["seat"], act["view"]) for act in seat.of("act")]
    assert any(view["stash"] for _, view in views), "the Goodge sees the Stash"
    assert all(view["goodge"] == seat_no for seat_no, view in views if view["stash"])
    public.done.wait(30)
    replay = the_replay(arena.ref, started["match_id"])
    bot_id = person.get(f"/api/play/{started['play_id']}").json()["bot_id"]
    assert check_seat_received(in_order(seat.events, answers), replay, bot_id) == moves > 12
    events = [{**event, "strings": string_leaves(event)} for event in public.events]
    assert check_public_stream(events, hidden_by_step(replay)) > moves


def test_the_play_id_is_the_only_key_and_a_person_who_leaves_forfeits(arena: PlayArena) -> None:
    """Goof: while the page is open the tick's clock waits for an idle person (no strike);
    another play id, or the public match id, reaches nothing of the seat; the person who
    leaves is struck, then forfeits as a bot would, and the web records no error."""
    person = client_from(arena.web, "127.0.0.2")
    stranger = client_from(arena.web, "127.0.0.3")
    offered(person, arena.bots)
    started = start(person, "goof", arena.bots, name="Bo", rounds=1)
    play_id, match_id = started["play_id"], started["match_id"]
    seat = Stream(person, started["events"]).open()
    seat.wait_for("answered", 3, timeout_s=30)
    assert [event["by"] for event in seat.of("answered")][:3] == ["clock"] * 3
    assert [event["action"] for event in seat.of("answered")][:3] == ["wait"] * 3
    assert not seat.of("seat_strike"), "a person whose page is open is not struck"

    for key in (match_id, play_id[:-1] + ("A" if play_id[-1] != "A" else "B"), "x" * 300):
        page = stranger.get(f"/play/{key}")
        assert page.status_code == 404 and "no game with this play id" in page.text
        for url in (f"/api/play/{key}", f"/api/play/{key}/events"):
            assert "no game with this play id" in one_line(stranger.get(url), 404), url
        answer = stranger.post(
            f"/api/play/{key}/answer", json={"request_id": "r", "action": "wait"}
        )
        assert "no game with this play id" in one_line(answer, 404)
    # The id is the key, not the address: the stranger holding it reaches the seat.
    assert stranger.get(f"/api/play/{play_id}").status_code == 200
    for public_page in (f"/matches/{match_id}", f"/api/matches/{match_id}"):
        assert play_id not in person.get(public_page).text

    seat.close()  # the person leaves
    seat.done.wait(10)
    state = ended(person, play_id)
    assert state["status"] == "finished", state
    result = state["result"]
    guest = state["bot_id"]
    assert result["forfeits"] == [guest]
    assert result["forfeit_reasons"][guest] == "3 strikes"
    assert result["ranks"][result["bots"].index(guest)] == len(result["bots"])
    # What the page got while it was open shows nothing hidden from the seat either.
    assert check_seat_received(seat.events, the_replay(arena.ref, match_id), guest) >= 3
    log = arena.log.read_text()
    assert "Traceback" not in log and "ERROR" not in log, log[-2000:]


def test_bounds_and_bad_requests_are_refused_in_one_line(arena: PlayArena) -> None:
    first = client_from(arena.web, "127.0.0.4")
    second = client_from(arena.web, "127.0.0.5")
    third = client_from(arena.web, "127.0.0.6")
    offered(first, arena.bots)
    ids = [bot.bot_id for bot in arena.bots]
    good = {"game": "golden10", "players": 3, "opponents": ids}
    for body, status, says in (
        ({**good, "game": "poker"}, 422, "no game called 'poker'"),
        ({**good, "players": 9}, 422, "players"),
        ({**good, "game": "goodge", "players": 4}, 422, "a 4-player game has 3 opponents; 2 given"),
        ({**good, "opponents": [ids[0], ids[0]]}, 422, "each opponent once"),
        ({**good, "opponents": [ids[0], "ghost"]}, 409, "bot 'ghost' is not online"),
        ({**good, "opponents": [ids[0], arena.shy.bot_id]}, 409, "does not accept challenges"),
        ({**good, "rounds": 0}, 422, "rounds"),
        ({**good, "name": "n" * 33}, 422, "name"),
    ):
        assert says in one_line(first.post("/api/play", json=body), status), body
    not_json = first.post(
        "/api/play", content=b"game=golden10", headers={"content-type": "text/plain"}
    )
    assert "send JSON" in one_line(not_json, 415)
    elsewhere = first.post("/api/play", json=good, headers={"origin": "https://evil.example"})
    assert "another site" in one_line(elsewhere, 403)
    assert "bad request" in one_line(
        first.post("/api/play", content=b"{", headers={"content-type": "application/json"}), 422
    )

    # One game at once per address, two on the server.
    games = [start(first, "golden10", arena.bots)]
    assert "at most 1 game at once from one address" in one_line(
        first.post("/api/play", json=good), 429
    )
    games.append(start(second, "golden10", arena.bots))
    assert "holds 2 games at once" in one_line(third.post("/api/play", json=good), 503)
    # Nobody plays them: each seat is struck out, and its place frees up.
    for person, game in ((first, games[0]), (second, games[1])):
        state = ended(person, game["play_id"])
        assert state["status"] == "finished" and state["result"]["forfeits"] == [state["bot_id"]]
    again = start(third, "golden10", arena.bots)
    assert again["play_id"] not in {game["play_id"] for game in games}


def test_a_referee_the_web_cannot_reach_is_a_503_in_one_line(
    arena: PlayArena, tmp_path: Path
) -> None:
    """A web whose referee does not answer: its play bot cannot be registered, said so."""
    procs = Processes(tmp_path)
    try:
        nobody = f"127.0.0.1:{free_port()}"
        web = start_web(procs, arena.ref, "--referee", nobody, name="web-lost")
        person = client_from(web, "127.0.0.7")
        offered(person, arena.bots)  # the store still says they are online
        body = {"game": "golden10", "players": 3, "opponents": [b.bot_id for b in arena.bots]}
        said = one_line(person.post("/api/play", json=body), 503)
        assert said.startswith("the web cannot register its play bot guest:"), said
    finally:
        procs.close()


class LateAnswers:
    """The web's real seat host, but a move's send returns only once the seat's next
    event has been taken by the desk (or after a bound): how a busy event loop may order
    them, the referee's next act coming in before the send's own continuation runs."""

    BOUND_S = 1.0

    def __init__(self, host: RefereeSeatHost) -> None:
        self.host = host
        self.taken = asyncio.Event()

    async def start(self, request: SeatRequest) -> Seated:
        return await self.host.start(request)

    async def seat(self, match_id: str) -> AsyncGenerator[SeatEvent, None]:
        async for event in self.host.seat(match_id):
            yield event
            self.taken.set()  # the desk is done with it and waits for the next

    async def answer(self, match_id: str, request_id: str, action: str) -> None:
        self.taken.clear()
        await self.host.answer(match_id, request_id, action)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.taken.wait(), self.BOUND_S)

    async def close(self) -> None:
        await self.host.close()


def test_a_moves_answer_reaches_the_page_before_the_next_act(arena: PlayArena) -> None:
    """Whatever order the loop runs things in, the page gets a move's "answered" after its
    act and before the next act (a late "answered" would tell the person they just moved
    when the next move is theirs), and a page joining late gets them in the same order."""
    store = Store(f"sqlite:///{arena.ref.workdir / 'arena.db'}")
    bounds = Bounds(at_once=1, per_address=1, deadline_ms=10_000, tick_ms=TICK_MS)
    host = RefereeSeatHost(arena.ref.address, "late-answers", 1, store.retire_bot)
    request = SeatRequest(
        game="golden10",
        opponents=tuple(bot.bot_id for bot in arena.bots),
        deadline_ms=10_000,
        options={"rounds": "1"},
    )

    async def events(
        desk: Desk, play: Play, till: Callable[[list[dict[str, Any]]], bool]
    ) -> list[dict[str, Any]]:
        """What one page gets, until `till` says it has enough."""
        got: list[dict[str, Any]] = []
        async for text in desk.events(play):
            if text:
                got.append(json.loads(text))
            if till(got):
                break
        return got

    async def game() -> None:
        desk = Desk(LateAnswers(host), store, bounds, "late-answers")
        try:
            play = await desk.start(request, 3, "Cy", "127.0.0.8")
            page = asyncio.create_task(
                events(desk, play, lambda got: sum(e["type"] == "answered" for e in got) == 3)
            )
            for _ in range(3):
                act = await eventually(lambda: asyncio.sleep(0, play.act), "the seat's turn", 30)
                await desk.answer(play, act["request_id"], act["legal"][0])
            seen = await asyncio.wait_for(page, 30)
            await eventually(lambda: asyncio.sleep(0, play.act), "the seat's fourth turn", 30)
            kept = len(play.backlog)
            late = await events(desk, play, lambda got: len(got) >= kept)
        finally:
            await desk.close()
        for got in (seen, late):
            order = [(e["type"], e["request_id"]) for e in got if e["type"] in ("act", "answered")]
            for (kind, request_id), (next_kind, next_id) in itertools.pairwise(order):
                if next_kind == "answered":
                    assert (kind, request_id) == ("act", next_id), order
        assert [e["type"] for e in late][-1] == "act", "a late page ends on the open act"

    try:
        run(game, timeout_s=120)
    finally:
        store.close()


def test_play_off_hides_the_link_and_answers_404(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'arena.db'}")
    try:
        with TestClient(create_app(store)) as client:
            assert 'href="/play"' not in client.get("/").text
            for url in ("/play", "/api/play", "/play/abc", "/api/play/abc/events"):
                answer = client.get(url)
                assert answer.status_code == 404 and "Play is off" in answer.text, url
            posted = client.post("/api/play", json={"game": "goof", "players": 2, "opponents": []})
            assert posted.status_code == 404
    finally:
        store.close()


def test_settings_of_play_are_checked(tmp_path: Path) -> None:
    """Bad Play settings stop `arena web` with one line naming the flag."""
    from tests.support.processes import arena

    for flags, says in (
        (["--play-at-once", "65"], "--play-at-once must be 1..64"),
        (["--play-per-address", "9"], "--play-per-address must be 1..--play-at-once (8)"),
        (["--play-deadline-ms", "100"], "--play-deadline-ms must be 1000..60000"),
        (["--play-tick-ms", "100"], "--play-tick-ms must be 500..60000"),
        (["--play", "maybe"], "must be on or off"),
    ):
        done = arena("web", "--db", f"sqlite:///{tmp_path / 'x.db'}", *flags, timeout_s=60)
        assert done.returncode != 0 and says in done.stderr, (flags, done.stderr[-500:])


def test_the_play_bots_author_has_none_of_its_bots_at_a_persons_table(tmp_path: Path) -> None:
    """With an author's token for Play, the play bot is that author's, and its author may
    watch its seats, which are the people's (`WatchSeat`): none of the author's own bots
    is offered as a person's opponent, or it could be told the person's hand. The
    operator's bots are offered whoever owns the play bot."""
    store = Store(f"sqlite:///{tmp_path / 'arena.db'}")
    try:
        alice, _ = create_author(store, "alice")
        bob, _ = create_author(store, "bob")
        store.register_bot("guest", "web", ["golden10"], alice.id)
        mine = store.register_bot("alices-bot", "1", ["golden10"], alice.id)[0].id
        theirs = store.register_bot("bobs-bot", "1", ["golden10"], bob.id)[0].id
        house = store.register_bot("random", "1", ["golden10"])[0].id
        store.mark_seen({mine: "s1", theirs: "s2", house: "s3"}, Seen.OPENED)
        bounds = Bounds(at_once=4, per_address=2, deadline_ms=30_000, tick_ms=2_000)
        unused = cast(SeatHost, object())  # choosing opponents starts no game
        desk = Desk(unused, store, bounds, play_name="guest")
        assert {bot.id for bot in desk.opponents()} == {theirs, house}
        with pytest.raises(WebError, match="not online, or does not accept challenges"):
            desk.check_request("golden10", 3, [theirs, mine], 1)
        desk.check_request("golden10", 3, [theirs, house], 1)
        anyone = Desk(unused, store, bounds, play_name="")
        assert {bot.id for bot in anyone.opponents()} == {mine, theirs, house}
    finally:
        store.close()
