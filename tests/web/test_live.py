"""The live view: `arena web` relays a running match's public stream as server-sent events.

Real processes over loopback: a referee, bots, and `arena web --referee`; the
stream is read over real HTTP and scanned, as the referee's is in
tests/referee/test_public_watch.py, for any card hidden at the moment it was sent.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncGenerator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from arena_cli.live_feed import RefereeFeed
from cardarena_api.v1 import arena_pb2 as pb
from ladder.store import Store
from ladder.web import create_app, live
from tests.games.test_properties import string_leaves
from tests.referee.test_public_watch import check_public_stream, hidden_by_step
from tests.support.browser import PHONE, fits_the_phone, screenshot, view_at
from tests.support.processes import PYTHON, Processes, free_port, wait_until
from tests.support.referee import BotHandle, RefereeProc, launch_referee, result_of


@pytest.fixture(scope="module")
def live_arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RefereeProc, str]]:
    """A referee, a slow bot and two random bots, and `arena web` following the referee."""
    workdir = tmp_path_factory.mktemp("live")
    procs = Processes(workdir)
    try:
        ref = launch_referee(workdir, procs)
        port = free_port()
        procs.start(
            "web",
            [
                PYTHON, "-m", "arena_cli.main", "web", "--port", str(port),
                "--db", f"sqlite:///{workdir / 'arena.db'}", "--referee", ref.address,
            ],
        )  # fmt: skip
        web = f"http://127.0.0.1:{port}"

        def serving() -> bool:
            try:
                return httpx.get(f"{web}/healthz", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(serving, 30, "the web to serve", 0.1)
        yield ref, web
        ref.channel.close()
    finally:
        procs.close()


@pytest.fixture(scope="module")
def seats(live_arena: tuple[RefereeProc, str]) -> list[BotHandle]:
    ref, _ = live_arena
    handles = [
        ref.run_badbot("record", ref.register("slow"), "--delay-ms", "250", "--delay-count", "4"),
        ref.run_bot("random", ref.register("random")),
        ref.run_bot("random", ref.register("random")),
    ]
    ref.wait_connected(handles)
    return handles


def test_a_running_match_is_relayed_live_and_public(
    live_arena: tuple[RefereeProc, str], seats: list[BotHandle]
) -> None:
    ref, web = live_arena
    match_id = f"live-{uuid.uuid4().hex[:8]}"
    ref.start_match(
        match_id, "goodge", seats, seed=5, deadline_ms=2000, options={"max_rounds": "2"}
    )
    page = httpx.get(f"{web}/matches/{match_id}", timeout=10)
    assert page.status_code == 200
    assert 'id="live"' in page.text and "/static/watch.js" in page.text, "the live page"
    assert "<script>" not in page.text, "no inline script"

    events: list[dict[str, Any]] = []
    running_at_first_view: str | None = None
    with httpx.stream("GET", f"{web}/api/matches/{match_id}/live", timeout=60) as stream:
        assert stream.status_code == 200
        assert stream.headers["content-type"].startswith("text/event-stream")
        for line in stream.iter_lines():
            if not line.startswith("data: "):
                continue
            event = json.loads(line[len("data: ") :])
            events.append({**event, "strings": string_leaves(event)})
            if event["type"] == "view" and running_at_first_view is None:
                status = httpx.get(f"{web}/api/matches/{match_id}", timeout=10).json()["status"]
                running_at_first_view = status
    assert running_at_first_view == "running", "updates come while the match is played"
    result_of(ref.wait_match(match_id))
    replay = ref.matches.GetReplay(pb.GetMatchRequest(match_id=match_id), timeout=10)
    assert check_public_stream(events, hidden_by_step(replay)) > 10

    # Finished: the same page is the replay now.
    page = httpx.get(f"{web}/matches/{match_id}", timeout=10)
    assert 'id="viewer"' in page.text and "/static/replay.js" in page.text
    assert httpx.get(f"{web}/api/matches/nope/live", timeout=10).status_code == 404


def test_without_a_referee_the_live_view_says_so(live_arena: tuple[RefereeProc, str]) -> None:
    """No feed, or a referee nobody answers at: 503 with a reason; the rest still works."""
    ref, _ = live_arena
    store = Store(f"sqlite:///{ref.workdir / 'arena.db'}")
    app = create_app(store)
    with TestClient(app) as client:
        assert client.get("/api/matches/anything/live").status_code == 503
        live.attach(app, RefereeFeed(f"127.0.0.1:{free_port()}"))
        answer = client.get("/api/matches/anything/live")
        assert answer.status_code == 503
        assert "cannot be reached" in answer.json()["detail"]
        assert client.get("/api/ladders").status_code == 200
    store.close()


class ScriptedFeed:
    """An upstream feed whose events the test sends: how many streams were opened,
    and how many are open now."""

    def __init__(self) -> None:
        self.opened = 0
        self.open = 0
        self.events: asyncio.Queue[str | None] = asyncio.Queue()

    async def watch(self, match_id: str) -> AsyncGenerator[str, None]:
        self.opened += 1
        self.open += 1
        try:
            while (text := await self.events.get()) is not None:
                yield text
        finally:
            self.open -= 1


def test_pages_on_one_match_share_one_upstream_stream() -> None:
    start, end = json.dumps({"type": "game_start"}), json.dumps({"type": "match_end"})
    views = [json.dumps({"type": "view", "step": step}) for step in range(3)]

    async def scenario() -> None:
        upstream = ScriptedFeed()
        shared = live.SharedFeed(upstream)
        first = shared.watch("m")
        waiting = asyncio.create_task(anext(first))
        for text in (start, *views):
            upstream.events.put_nowait(text)
        assert await waiting == start
        assert [await anext(first) for _ in views] == views
        # A page joining late gets what draws the table now: the events but old views.
        second = shared.watch("m")
        assert [await anext(second), await anext(second)] == [start, views[-1]]
        assert upstream.opened == 1
        upstream.events.put_nowait(end)
        upstream.events.put_nowait(None)
        assert [await anext(first), await anext(second)] == [end, end]
        for page in (first, second):
            with pytest.raises(StopAsyncIteration):
                await anext(page)
        # The last page leaving closes the upstream stream; a new page opens another.
        third = shared.watch("m")
        waiting = asyncio.create_task(anext(third))
        upstream.events.put_nowait(start)
        assert await waiting == start and upstream.opened == 2
        await third.aclose()
        for _ in range(100):  # loop turns for the cancelled upstream task's cleanup
            if upstream.open == 0:
                break
            await asyncio.sleep(0)
        assert upstream.open == 0

    asyncio.run(scenario())


def test_a_browser_watches_the_match_then_sees_its_replay(
    live_arena: tuple[RefereeProc, str], browser: Any, shots: Path
) -> None:
    """watch.js in headless Chromium: the public table drawn as the match goes, under the
    page's Content-Security-Policy, then the page turning into the replay at the end."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    ref, web = live_arena
    slow = ref.run_badbot(
        "record", ref.register("slow"), "--delay-ms", "150", "--delay-count", "40"
    )
    others = [ref.run_bot("random", ref.register("random")) for _ in range(2)]
    ref.wait_connected([slow, *others])
    match_id = f"watched-{uuid.uuid4().hex[:8]}"
    ref.start_match(match_id, "goodge", [slow, *others], seed=9, deadline_ms=2000)
    browser.get(f"{web}/matches/{match_id}")

    def drawn(driver: Any) -> bool:
        state = driver.find_element(By.ID, "live-state").text
        seats = driver.find_elements(By.CSS_SELECTOR, "#live-seats > *")
        return state.startswith("live") and len(seats) == 3

    WebDriverWait(browser, 60).until(drawn)
    assert browser.find_element(By.ID, "m-status").text == "running"
    # A seat shows how many cards it holds, never which.
    seats = browser.find_element(By.ID, "live-seats")
    assert "cards in hand" in seats.text and not seats.find_elements(By.CSS_SELECTOR, ".card")
    screenshot(browser, shots / "live-desktop.png")
    view_at(browser, PHONE)
    fits_the_phone(browser)
    screenshot(browser, shots / "live-phone.png", PHONE)
    WebDriverWait(browser, 180).until(lambda d: d.find_elements(By.ID, "viewer"))
    console = [entry["message"] for entry in browser.get_log("browser")]
    assert not [line for line in console if "Content Security Policy" in line], console
