"""Play in headless Chromium: a person plays a whole Golden 10 game at 3 players against two
rules bots on a real referee through `arena web`, by clicking, then a few Goof ticks.

The pages run under the server's Content-Security-Policy (no inline script): the form
is sent and the seat drawn by /static/play.js, the public table by /static/watch.js.
Screenshots of /play and of a seat at desktop and phone width go to docs/screenshots/
with ARENA_SCREENSHOTS (see docs/screenshots/README.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.browser import DESKTOP, PHONE, fits_the_phone, screenshot, view_at
from tests.support.play import start_web
from tests.support.processes import Processes, wait_until
from tests.support.referee import BotHandle, launch_referee


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[BotHandle]]]:
    """`arena web` with Play on, following a referee where two rules bots play."""
    workdir = tmp_path_factory.mktemp("play-browser")
    procs = Processes(workdir)
    try:
        ref = launch_referee(workdir, procs)
        bots = [ref.run_bot("rules", ref.register("rules", operator=True)) for _ in range(2)]
        ref.wait_connected(bots)
        web = start_web(procs, ref, "--play-deadline-ms", "20000", "--play-tick-ms", "3000")

        def offered() -> bool:
            shown = httpx.get(f"{web}/api/play", timeout=10).json()["opponents"]
            return {bot.bot_id for bot in bots} <= {bot["id"] for bot in shown}

        wait_until(offered, 30, "the bots to be offered", 0.1)
        yield web, bots
        ref.channel.close()
    finally:
        procs.close()


def choose_table(browser: Any, web: str, game: str, bots: list[BotHandle], name: str) -> None:
    """On /play: the game, 3 players, both bots, a name; then take the seat."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    browser.get(f"{web}/play")
    Select(browser.find_element(By.ID, "p-game")).select_by_value(game)
    Select(browser.find_element(By.ID, "p-players")).select_by_value("3")
    for bot in bots:
        browser.find_element(By.CSS_SELECTOR, f'#p-opponents input[value="{bot.bot_id}"]').click()
    field = browser.find_element(By.ID, "p-name")
    field.clear()
    field.send_keys(name)
    assert browser.find_element(By.ID, "p-start").is_enabled()


def moves(browser: Any) -> list[Any]:
    """The move buttons a person may click now."""
    from selenium.webdriver.common.by import By

    return [
        button
        for button in browser.find_elements(By.CSS_SELECTOR, "#s-actions button.move")
        if button.is_enabled()
    ]


def test_a_person_plays_golden10_by_clicking_then_goof_ticks(
    table: tuple[str, list[BotHandle]], browser: Any, shots: Path
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    web, bots = table
    wait = WebDriverWait(browser, 30)
    browser.get(f"{web}/")
    browser.find_element(By.ID, "nav-play").click()
    wait.until(ec.presence_of_element_located((By.ID, "play-form")))
    choose_table(browser, web, "golden10", bots, "Ann <b>")
    screenshot(browser, shots / "play-form-desktop.png")
    view_at(browser, PHONE)
    fits_the_phone(browser)
    screenshot(browser, shots / "play-form-phone.png", PHONE)
    view_at(browser, DESKTOP)
    browser.find_element(By.ID, "p-start").click()
    wait.until(lambda d: "/play/" in d.current_url and moves(d))
    seat = browser.find_element(By.ID, "seat")
    match_id = seat.get_attribute("data-match")
    assert "Ann <b>" in browser.find_element(By.TAG_NAME, "h1").text
    assert not browser.find_elements(By.CSS_SELECTOR, "h1 b"), "the name is text, not markup"
    hand = browser.find_elements(By.CSS_SELECTOR, '#s-view [data-zone="your hand"] [data-card]')
    assert len(hand) == 56 // 3, "the seat's hand, face up"

    clicked = 0
    while not browser.find_element(By.ID, "s-result").is_displayed():
        wait.until(lambda d: moves(d) or d.find_element(By.ID, "s-result").is_displayed())
        buttons = moves(browser)
        if not buttons:
            continue
        card = buttons[0].get_attribute("data-action")
        assert (
            buttons[0].find_element(By.CSS_SELECTOR, "[data-card]").get_attribute("data-card")
            == card
        )
        buttons[0].click()
        clicked += 1
        wait.until(ec.staleness_of(buttons[0]))
        if clicked == 4:
            # The public table as the live page draws it, and the clock of the next move.
            wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#live-seats > .seat")) == 3)
            wait.until(lambda d: moves(d))
            assert browser.find_element(By.ID, "s-clock").text.endswith("s bank")
            screenshot(browser, shots / "play-desktop.png")
            view_at(browser, PHONE)
            fits_the_phone(browser)
            screenshot(browser, shots / "play-phone.png", PHONE)
            view_at(browser, DESKTOP)
    assert clicked == 56 // 3
    assert browser.find_element(By.ID, "s-place").text.startswith("You placed #")
    rows = browser.find_elements(By.CSS_SELECTOR, "#s-result-rows tr")
    assert (
        len(rows) == 3 and len(browser.find_elements(By.CSS_SELECTOR, "#s-result-rows tr.me")) == 1
    )
    assert (
        browser.find_element(By.ID, "s-replay").get_attribute("href") == f"{web}/matches/{match_id}"
    )
    assert not browser.find_element(By.ID, "s-strikes").text
    screenshot(browser, shots / "play-result-desktop.png")

    # Goof: a few ticks, each within its clock, then the person leaves.
    choose_table(browser, web, "goof", bots, "Bo")
    browser.find_element(By.ID, "p-start").click()
    wait.until(lambda d: "/play/" in d.current_url and moves(d))
    line = browser.find_elements(By.CSS_SELECTOR, '#s-view [data-zone="goof line"] [data-card]')
    assert len(line) == 4
    ticks = []
    for _ in range(3):
        wait.until(lambda d: moves(d))
        ticks.append(browser.find_element(By.ID, "s-state").text)
        buttons = moves(browser)
        chosen = next((b for b in buttons if b.get_attribute("data-action") != "wait"), buttons[0])
        chosen.click()
        wait.until(ec.staleness_of(chosen))
        assert not browser.find_element(By.ID, "s-state").text.startswith("the move was not taken")
    assert all(text.startswith("tick ") for text in ticks) and len(set(ticks)) == 3
    assert not browser.find_element(By.ID, "s-strikes").text
    screenshot(browser, shots / "play-goof-desktop.png")
    browser.get(f"{web}/")

    console = [entry["message"] for entry in browser.get_log("browser")]
    assert not [line for line in console if "Content Security Policy" in line], console
    for png in shots.glob("play-*.png"):
        assert 10_000 < png.stat().st_size < 1_500_000, png
