"""`arena web` as a process, and one headless Chromium run through its pages.

The database is filled by playing real matches (see conftest); the web
process serves it on a free loopback port. The browser opens the standings,
watches them update as a new match is recorded, follows a bot link to its
rating chart, then steps through a match replay, checking each frame's
cards against the engine replaying the stored log. The pages run under the
server's Content-Security-Policy (no inline script), so all this working,
with no violation in the browser's console, shows the policy holds.

A second run checks what organisers and bot authors look for first (a
tournament's settings and matches, a bot's presence, strikes and forfeits,
the replay's legend, the provisional rule) at desktop and at phone width,
with a screenshot of each page at both (see docs/screenshots/README.md).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import games
from ladder import queries, recording, standings_fit
from ladder.store import MatchRequest, Seen, Store
from ladder.web.security import SECURITY_HEADERS
from tests.support.arena import BOT_KINDS, Arena, fill, play_and_store
from tests.support.browser import DESKTOP, PHONE, fits_the_phone, screenshot, view_at
from tests.support.processes import Processes, free_port, wait_until
from tests.web.clumsy import register_clumsy


@dataclass
class Served:
    """An `arena web` process over a filled database."""

    base: str
    arena: Arena
    proc: Any
    log: Path

    def get(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(self.base + path, timeout=10) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def headers(self, path: str) -> dict[str, str]:
        """The response's headers, by lowercase name."""
        try:
            with urllib.request.urlopen(self.base + path, timeout=10) as response:
                return {name.lower(): value for name, value in response.headers.items()}
        except urllib.error.HTTPError as error:
            return {name.lower(): value for name, value in error.headers.items()}

    def json(self, path: str) -> Any:
        status, body = self.get(path)
        assert status == 200, (path, status, body[:300])
        return json.loads(body)


def start_web(procs: Processes, url: str, name: str = "web") -> tuple[str, Any, Path]:
    port = free_port()
    proc = procs.start(
        name,
        [
            sys.executable,
            "-m",
            "arena_cli.main",
            "web",
            "--port",
            str(port),
            "--db",
            url,
            "--poll-seconds",
            "0.5",
        ],
    )
    base = f"http://127.0.0.1:{port}"
    log = procs.logs / f"{name}.log"

    def healthy() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"arena web exited ({proc.returncode}):\n{log.read_text()}")
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=1) as response:
                return bool(response.status == 200)
        except OSError:
            return False

    wait_until(healthy, 30, "arena web to serve /healthz", 0.1)
    return base, proc, log


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    workdir = tmp_path_factory.mktemp("served")
    arena = fill(f"sqlite:///{workdir / 'arena.db'}")
    procs = Processes(workdir)
    try:
        base, proc, log = start_web(procs, arena.url)
        yield Served(base, arena, proc, log)
    finally:
        procs.close()


def test_arena_web_serves_pages_api_and_metrics(served: Served) -> None:
    ladders = served.json("/api/ladders")["ladders"]
    assert {ladder["id"] for ladder in ladders} == {
        "goodge-4p",
        "golden10-4p",
        "golden10-3p",
        "goof-3p",
    }
    status, html = served.get("/")
    assert status == 200 and "ada" in html and "Standings" in html
    assert served.get("/matches/nope")[0] == 404
    assert served.get("/api/matches/goodge-1/frames?game=3")[0] == 200
    status, metrics = served.get("/metrics")
    assert status == 200
    assert 'arena_web_requests_total{method="GET",route="/api/ladders",status="200"}' in metrics
    assert served.json("/openapi.json")["info"]["title"] == "Card Arena standings"
    for path in ("/", "/matches/goodge-1", "/api/ladders", "/static/live.js", "/metrics", "/nope"):
        headers = served.headers(path)
        assert {name: headers.get(name.lower()) for name in SECURITY_HEADERS} == SECURITY_HEADERS


def test_arena_match_verify_checks_a_match_from_the_web(served: Served) -> None:
    """`arena match verify --web` replays a finished match from the seed and logs the
    web publishes; a running match's seed is not published, so it cannot be checked."""

    def verify(match_id: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "arena_cli.main", "match", "verify", match_id]
        return subprocess.run(
            [*command, "--web", served.base], capture_output=True, text=True, timeout=120
        )

    for match_id in ("goodge-1", served.arena.golden10_match, served.arena.goof_match):
        done = verify(match_id)
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"match {match_id} verified" in done.stdout
    running = verify(served.arena.running_match)
    assert running.returncode == 1, running.stdout + running.stderr
    assert "is running" in running.stdout


def test_arena_web_stops_cleanly_on_sigterm(tmp_path: Path, served: Served) -> None:
    procs = Processes(tmp_path)
    try:
        _, proc, log = start_web(procs, served.arena.url, "web-stop")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0, log.read_text()
        assert "Shutting down" in log.read_text() or "Finished server process" in log.read_text()
    finally:
        procs.close()


def test_arena_web_rejects_bad_flags(tmp_path: Path) -> None:
    procs = Processes(tmp_path)
    try:
        proc = procs.start(
            "bad", [sys.executable, "-m", "arena_cli.main", "web", "--port", "70000"]
        )
        assert proc.wait(30) == 2
        assert "--port must be 1..65535" in (tmp_path / "bad.log").read_text()
    finally:
        procs.close()


# The browser -------------------------------------------------------------------------------------


def table_text(driver: Any, rows: str) -> list[list[str]]:
    """The text of each cell of the rows matching `rows`, read at one instant."""
    return list(
        driver.execute_script(
            "return Array.from(document.querySelectorAll(arguments[0])).map("
            "r => Array.from(r.cells).map(c => c.textContent.trim()));",
            rows,
        )
    )


def standing_cells(line: queries.Standing) -> list[str]:
    """The first cells of a standings row as the page shows `line`: rank, bot, version,
    rating +- error (no error before the bot's first fit), live Elo, games."""
    rating = f"{line.rating:.0f}" + ("" if line.se is None else f" \u00b1 {line.se:.0f}")
    return [str(line.rank), line.bot, line.version, rating, f"{line.elo:.1f}", str(line.games)]


def expected_golden10_tricks(log: dict[str, Any]) -> list[dict[str, Any]]:
    """Each trick of a Golden 10 log, from the engine: its plays, the winner if the
    engine shows it (the next leader), and every seat's hand once the trick is complete."""
    n = log["players"]
    state = games.get("golden10").new_game(n, log["seed"], log["options"], log["deal"])
    tricks = []
    moves = log["moves"]
    for start in range(0, len(moves), n):
        plays = [tuple(move) for move in moves[start : start + n]]
        for seat, card in plays[:-1]:
            state.apply(seat, card)
        last_seat, last_card = plays[-1]
        zones = state.zones()
        hands = [
            [c for c in zones[f"hand:{s}"] if (s, c) != (last_seat, last_card)] for s in range(n)
        ]
        before = state.round
        state.apply(last_seat, last_card)
        leader = state.to_act()[0] if state.round == before and not state.is_over() else None
        tricks.append({"plays": plays, "hands": hands, "winner": leader, "round": before})
    return tricks


def test_browser_standings_bot_chart_and_replay(served: Served, browser: Any, shots: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import Select, WebDriverWait

    wait = WebDriverWait(browser, 15)
    arena = served.arena
    store = Store(arena.url)
    try:
        # Standings: every ladder's bots with the ratings stored by the recorded matches.
        browser.get(served.base + "/")
        wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, "table.standings tbody tr")))
        for ladder_id in queries.ladders(store):
            shown = table_text(browser, f'table[data-ladder="{ladder_id}"] tbody tr')
            expected = [standing_cells(s) for s in queries.standings(store, ladder_id)]
            assert [line[:6] for line in shown] == expected, ladder_id
        screenshot(browser, shots / "standings.png")

        # A match recorded now appears without reloading the page (the poller).
        browser.execute_script("window.__notReloaded = 42;")
        players = {bot_id: BOT_KINDS[name](seed=7) for name, bot_id in arena.bots.items()}
        order = [arena.bots[name] for name in ("dot", "cy", "bea", "ada")]
        request = MatchRequest("goodge-3", "goodge", 4, tuple(order), 13, {}, False, 1000)
        play_and_store(store, request, players)
        assert recording.record_match(store, "goodge-3")
        wait.until(
            lambda d: (
                [line[5] for line in table_text(d, 'table[data-ladder="goodge-4p"] tbody tr')]
                == ["3"] * 4
            )
        )
        assert browser.execute_script("return window.__notReloaded;") == 42
        shown = table_text(browser, 'table[data-ladder="goodge-4p"] tbody tr')
        assert [line[:6] for line in shown] == [
            standing_cells(s) for s in queries.standings(store, "goodge-4p")
        ]
        # The workers refit the standings next: the poller shows the new fit too.
        assert standings_fit.refresh_fit(store, "goodge-4p")
        fitted = [standing_cells(s) for s in queries.standings(store, "goodge-4p")]
        wait.until(
            lambda d: (
                [line[:6] for line in table_text(d, 'table[data-ladder="goodge-4p"] tbody tr')]
                == fitted
            )
        )

        # A bot page: its rating chart, with one dot per rated match plus the start.
        browser.find_element(By.LINK_TEXT, "ada").click()
        wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, "svg.chart")))
        assert "ada" in browser.title
        goodge_chart = browser.find_element(
            By.CSS_SELECTOR, '.chart-block[data-ladder="goodge-4p"] svg.chart'
        )
        assert len(goodge_chart.find_elements(By.CSS_SELECTOR, "circle.dot")) == 3 + 1
        assert goodge_chart.size["width"] > 300 and goodge_chart.size["height"] > 100
        screenshot(browser, shots / "bot.png")

        # A match page from the bot's recent matches: step through the replay.
        browser.find_element(By.LINK_TEXT, arena.golden10_match).click()
        wait.until(lambda d: d.find_element(By.ID, "viewer").get_attribute("data-ready") == "1")
        log = store.replays(arena.golden10_match)[0].log
        tricks = expected_golden10_tricks(log)
        names = {bot_id: name for name, bot_id in arena.bots.items()}
        seats = store.replays(arena.golden10_match)[0].seats
        assert "Round 1: the deal" in browser.find_element(By.ID, "frame-title").text
        next_button = browser.find_element(By.ID, "next")
        per_round = 56 // log["players"]
        checked = 0
        for number, trick in enumerate(tricks[: per_round + 2]):
            next_button.click()
            if number == per_round:  # the round's scoring frame comes after its last trick
                wait.until(lambda d: "scored" in d.find_element(By.ID, "frame-title").text)
                next_button.click()
            title = f"Round {trick['round']}: trick {number % per_round + 1}"
            wait.until(ec.text_to_be_present_in_element((By.ID, "frame-title"), title))
            assert browser.find_element(By.ID, "frame-title").text == title
            plays = browser.find_elements(By.CSS_SELECTOR, "#plays .play")
            played = [
                (int(p.get_attribute("data-seat") or -1), p.get_attribute("data-action"))
                for p in plays
            ]
            assert played == trick["plays"]
            assert [
                p.find_element(By.CSS_SELECTOR, "[data-card]").get_attribute("data-card")
                for p in plays
            ] == [card for _, card in trick["plays"]]
            if trick["winner"] is not None:
                winners = [
                    int(p.get_attribute("data-seat"))
                    for p in plays
                    if "winner" in (p.get_attribute("class") or "")
                ]
                assert winners == [trick["winner"]]
            for seat, hand in enumerate(trick["hands"]):
                box = browser.find_element(By.CSS_SELECTOR, f'#seats .seat[data-seat="{seat}"]')
                cards = box.find_elements(By.CSS_SELECTOR, '[data-zone="hand"] [data-card]')
                assert [c.get_attribute("data-card") for c in cards] == hand
                assert names[seats[seat]] in box.find_element(By.CLASS_NAME, "seat-bot").text
            checked += 1
        assert checked == per_round + 2
        screenshot(browser, shots / "replay-golden10.png")

        # The prev button and the slider move back through the same frames.
        browser.find_element(By.ID, "prev").click()
        wait.until(lambda d: d.find_element(By.ID, "frame-title").text == "Round 2: trick 1")
        browser.execute_script(
            "var s = document.getElementById('slider'); s.value = 0;"
            "s.dispatchEvent(new Event('input'));"
        )
        wait.until(lambda d: d.find_element(By.ID, "frame-title").text == "Round 1: the deal")

        # Goodge: bids are frames of their own; another rotation loads the other seating.
        browser.get(served.base + "/matches/goodge-1")
        wait.until(lambda d: d.find_element(By.ID, "viewer").get_attribute("data-ready") == "1")
        goodge = store.replays("goodge-1")
        state = games.get("goodge").new_game(
            4, goodge[0].log["seed"], goodge[0].log["options"], goodge[0].log["deal"]
        )
        for seat, action in goodge[0].log["moves"][:3]:
            assert state.observation(seat)["phase"] == "bid"
            state.apply(seat, action)
            browser.find_element(By.ID, "next").click()
            wait.until(
                ec.text_to_be_present_in_element_attribute(
                    (By.CSS_SELECTOR, "#plays .play"), "data-action", action
                )
            )
            shown = browser.find_elements(By.CSS_SELECTOR, "#plays .play")
            assert [p.get_attribute("data-action") for p in shown] == [action]
            actor = browser.find_element(By.CSS_SELECTOR, "#seats .seat.actor")
            assert actor.get_attribute("data-seat") == str(seat)
            hand = actor.find_elements(By.CSS_SELECTOR, '[data-zone="hand"] [data-card]')
            assert [c.get_attribute("data-card") for c in hand] == state.zones()[f"hand:{seat}"]
        screenshot(browser, shots / "replay-goodge.png")
        Select(browser.find_element(By.ID, "game-select")).select_by_value("1")
        wait.until(lambda d: d.find_element(By.ID, "frame-title").text == "Round 1: the deal")
        bots = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#seats .seat .seat-bot")]
        assert bots == [names[bot_id] for bot_id in goodge[1].seats]

        # A finished Goof match steps tick by tick.
        browser.get(served.base + f"/matches/{arena.goof_match}")
        wait.until(lambda d: d.find_element(By.ID, "viewer").get_attribute("data-ready") == "1")
        browser.find_element(By.ID, "next").click()
        wait.until(lambda d: "tick" in d.find_element(By.ID, "frame-title").text)
        assert browser.find_elements(By.CSS_SELECTOR, '#seats [data-zone="line"] [data-card]')
        screenshot(browser, shots / "replay-goof.png")

        # A match still being played has no replay at all, and only its seed's commitment.
        browser.get(served.base + f"/matches/{arena.running_match}")
        assert browser.find_element(By.ID, "m-status").text == "running"
        assert not browser.find_elements(By.ID, "viewer")
        assert "[data-card]" not in browser.page_source
        running = store.match(arena.running_match)
        shown = browser.find_element(By.ID, "m-commitment")
        assert shown.text == running.seed_commitment[:16] + "\u2026"
        assert shown.get_attribute("title") == running.seed_commitment
        assert str(running.seed) not in browser.page_source
        assert not browser.find_elements(By.ID, "m-seed")

        # A bot named with a right-to-left override: the scripts show its escape, in the
        # standings they re-render and in the replay viewer, and never the raw character.
        odd, _ = store.register_bot("good\u202ebot", "1", ["golden10"])
        players[odd.id] = BOT_KINDS["ada"](seed=3)
        seats = (odd.id, arena.bots["bea"], arena.bots["cy"], arena.bots["dot"])
        play_and_store(
            store, MatchRequest("odd-1", "golden10", 4, seats, 17, {}, False, 1000), players
        )
        browser.get(served.base + "/")
        wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, "table.standings tbody tr")))
        assert recording.record_match(store, "odd-1")
        wait.until(
            lambda d: any(
                line[1] == "good\\u202ebot"
                for line in table_text(d, 'table[data-ladder="golden10-4p"] tbody tr')
            )
        )
        assert "\u202e" not in browser.page_source
        browser.get(served.base + "/matches/odd-1")
        wait.until(lambda d: d.find_element(By.ID, "viewer").get_attribute("data-ready") == "1")
        browser.find_element(By.ID, "next").click()
        wait.until(lambda d: "trick 1" in d.find_element(By.ID, "frame-title").text)
        bots = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#seats .seat .seat-bot")]
        assert "good\\u202ebot" in bots
        assert "\u202e" not in browser.page_source
        screenshot(browser, shots / "replay-odd-name.png")

        # Every page above ran under the policy: the browser refused nothing.
        console = [entry["message"] for entry in browser.get_log("browser")]
        assert not [m for m in console if "Content Security Policy" in m], console
    finally:
        store.close()
    assert all((shots / name).stat().st_size > 10_000 for name in ("standings.png", "bot.png"))


def test_browser_pages_show_settings_conduct_presence_and_legends(
    served: Served, browser: Any, shots: Path
) -> None:
    """Each page's new elements hold what the store says, at desktop and at phone width,
    with a screenshot of each page at both widths."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 30)
    arena = served.arena
    store = Store(arena.url)

    def text(css: str) -> str:
        return str(browser.find_element(By.CSS_SELECTOR, css).text)

    def ready(d: Any) -> bool:
        return bool(d.find_element(By.ID, "viewer").get_attribute("data-ready") == "1")

    try:
        ids = register_clumsy(store, {"steady": 0, "slip": 2, "quits": 3})
        store.retire_bot(ids["quits"])
        clumsy = "clumsy-steady-slip-quits"
        planned = queries.tournament_matches(store, arena.tournament)
        steady = f'table[data-ladder="golden10-3p"] tr[data-bot="{ids["steady"]}"]'
        slip = f'table[data-ladder="golden10-3p"] tr[data-bot="{ids["slip"]}"]'
        for width in (DESKTOP, PHONE):
            view_at(browser, width)
            name = "desktop" if width == DESKTOP else "phone"

            # Standings: who is online (a referee holds `steady` now and `slip` has left),
            # and the provisional rule; the retired bot is left out.
            store.mark_seen({ids["steady"]: "s1"}, Seen.OPENED)
            store.mark_seen({ids["slip"]: "s1"}, Seen.CLOSED)
            browser.get(served.base + "/")
            assert text(f"{steady} .presence.on") == "online"
            assert text(f"{slip} .presence.off") == "offline"
            assert not browser.find_elements(By.CSS_SELECTOR, f'tr[data-bot="{ids["quits"]}"]')
            assert text("#provisional-rule") == f"\u00b1{queries.PROVISIONAL_SE:.0f} Elo"
            # slip's one match came after the ladder's last fit: no error yet.
            badge = browser.find_element(By.CSS_SELECTOR, f"{slip} .badge.prov")
            assert badge.get_attribute("title") == "not in the ladder's fit yet"
            if width == PHONE:
                fits_the_phone(browser)
            screenshot(browser, shots / f"standings-{name}.png", width)
            # The poller redraws presence in place when the bot leaves its session.
            store.mark_seen({ids["steady"]: "s1"}, Seen.CLOSED)
            wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, f"{steady} .presence.off"))
            assert text(f"{steady} .presence") == "offline"

            browser.get(served.base + "/tournaments")
            assert browser.find_element(
                By.CSS_SELECTOR, f'tr[data-tournament="{arena.tournament}"]'
            )
            if width == PHONE:
                fits_the_phone(browser)
            screenshot(browser, shots / f"tournaments-{name}.png", width)

            # A tournament: its settings, and each planned match linking to its page.
            browser.get(served.base + f"/tournaments/{arena.tournament}")
            assert text("#t-game") == "Golden 10 golden10"
            assert text("#t-players") == "3 a match, ladder golden10-3p"
            assert text("#t-entrants") == "ada, bea, cy, dot"
            assert text("#t-duplicate").startswith("yes: every deal is played once per rotation")
            assert text("#t-deadline") == "500 ms"
            assert text("#t-options") == "the game's defaults"
            assert text("#t-schedule") == "none: played once"
            assert text("#t-parent") == "no template"
            assert not browser.find_element(By.ID, "t-failed").is_displayed()
            shown = table_text(browser, "#t-matches tbody tr")
            assert shown == [
                [str(m.number), m.match_id, ", ".join(m.bots), m.status] for m in planned
            ]
            links = browser.find_elements(By.CSS_SELECTOR, "#t-matches tbody a")
            assert [link.get_attribute("href") for link in links] == [
                f"{served.base}/matches/{m.match_id}" for m in planned
            ]
            if width == PHONE:
                fits_the_phone(browser)
            screenshot(browser, shots / f"tournament-{name}.png", width)
            links[0].click()
            wait.until(ready)
            assert planned[0].match_id in browser.title

            # A bot's page: presence, last seen, strikes and forfeits, labelled chart axes.
            store.mark_seen({ids["slip"]: "s1"}, Seen.OPENED)
            browser.get(served.base + "/bots/slip")
            assert text("#b-presence .presence.on") == "online"
            assert text("#b-last-seen").endswith(" UTC")
            assert text("#b-strikes") == "2 strikes" and text("#b-forfeits") == "0 forfeits"
            row = browser.find_element(By.XPATH, f'//a[@href="/matches/{clumsy}"]/ancestor::tr')
            entries = [e.text for e in row.find_elements(By.CSS_SELECTOR, ".entry")]
            assert [e.split()[0] for e in entries] == ["steady", "slip", "quits"]
            assert entries[1].endswith("2 strikes") and entries[2].endswith("3 strikes forfeit")
            assert text(".chart-block svg.chart .x-title") == "rated matches played"
            assert text(".chart-block svg.chart .y-title") == "rating (Elo)"
            assert text(".chart-block .prov-rule") == (
                f"while its error is above \u00b1{queries.PROVISIONAL_SE:.0f} Elo"
            )
            assert not browser.find_elements(By.ID, "b-retired")
            if width == PHONE:
                fits_the_phone(browser)
            screenshot(browser, shots / f"bot-{name}.png", width)
            # The bot leaves its session: the open page says so without being reloaded by hand.
            store.mark_seen({ids["slip"]: "s1"}, Seen.CLOSED)
            wait.until(lambda d: text("#b-presence .presence") == "offline")
            store.mark_seen({ids["slip"]: "s1"}, Seen.OPENED)
            wait.until(lambda d: text("#b-presence .presence") == "online")

            # Its author's page (the operator's: it registered every bot here): each bot
            # name with its versions and ladders, and the recent matches of them all.
            browser.find_element(By.CSS_SELECTOR, "#b-author a.author").click()
            wait.until(lambda d: d.current_url == served.base + "/authors/operator")
            shown_names = browser.find_elements(By.CSS_SELECTOR, "#a-bots .author-bot")
            assert {e.get_attribute("data-name") for e in shown_names} >= {"ada", "slip"}
            slip_row = f'#a-bots tr[data-bot="{ids["slip"]}"]'
            assert text(f"{slip_row} .presence") == "online"
            assert text(f'{slip_row} .ladder-rating[data-ladder="golden10-3p"]').startswith(
                "golden10-3p rank "
            )
            assert browser.find_element(By.CSS_SELECTOR, f'#a-matches tr[data-match="{clumsy}"]')
            if width == PHONE:
                fits_the_phone(browser)
            screenshot(browser, shots / f"author-{name}.png", width)

            # A retired bot's page still answers, and says so.
            browser.get(served.base + "/bots/quits")
            assert text("#b-retired").startswith("This version is retired")
            assert "unranked (retired)" in text(".chart-block h3")
            assert text("#b-strikes") == "3 strikes" and text("#b-forfeits") == "1 forfeit"
            if width == PHONE:
                fits_the_phone(browser)

            # Legends: each game's suits or colours as its cards show them, and card points.
            for match_id, suits, points in (
                (
                    arena.goof_match,
                    ["S", "H", "D", "C"],
                    "\u22122 for each card left in your goof pile",
                ),
                (clumsy, ["R", "Y", "B", "G"], "red 5 = 5 · red 10 = 10 (27 a round)"),
                ("goodge-1", ["S", "D", "R", "H", "C", "CR"], "every 1 = 20 · every 5 = 15"),
            ):
                browser.get(served.base + f"/matches/{match_id}")
                wait.until(ready)
                legend = browser.find_elements(By.CSS_SELECTOR, "#legend .legend-suit")
                assert [e.get_attribute("data-suit") for e in legend] == suits, match_id
                assert points in text("#legend .legend-points")
                if width == PHONE:
                    fits_the_phone(browser)
            assert [" ".join(e.text.split()) for e in legend] == [
                "S ♠ Spades",
                "D ♦ Diamonds",
                "R ★ Stars",
                "H ♥ Hearts",
                "C ♣ Clubs",
                "♛ the Crown (CR)",
            ]
            assert "the Crown = 25" in text("#legend .legend-points")
            for _ in range(5):  # the bids and the Stash on the table
                browser.find_element(By.ID, "next").click()
            wait.until(lambda d: d.find_element(By.ID, "viewer").get_attribute("data-frame") == "5")
            if width == PHONE:
                fits_the_phone(browser)
            screenshot(browser, shots / f"replay-{name}.png", width)

        console = [entry["message"] for entry in browser.get_log("browser")]
        assert not [m for m in console if "Content Security Policy" in m], console
    finally:
        store.close()
    for png in shots.glob("*-*.png"):
        assert 10_000 < png.stat().st_size < 1_500_000, png
