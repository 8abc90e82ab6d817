"""Fixtures of the web app's tests: a store filled by playing, and the app on it.

The store is built once for the session by `tests.support.arena.fill`.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

with warnings.catch_warnings():
    # Starlette asks for httpx2 in its test client; httpx works the same for these tests.
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from fastapi.testclient import TestClient

from ladder.store import Store
from ladder.web import create_app
from tests.support.arena import Arena, fill
from tests.support.browser import CHROMEDRIVER, CHROMIUM
from tests.support.services import service_missing


@pytest.fixture(scope="session")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Arena:
    """A SQLite store filled by playing (built once for the whole session)."""
    path: Path = tmp_path_factory.mktemp("web") / "arena.db"
    return fill(f"sqlite:///{path}")


@pytest.fixture(scope="session")
def store(arena: Arena) -> Iterator[Store]:
    opened = Store(arena.url)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture(scope="session")
def client(store: Store) -> Iterator[TestClient]:
    """The app as the tests' many quick requests see it: its API bound is far above
    theirs (one test client stands for every visitor; test_security checks the bound)."""
    with TestClient(create_app(store, api_rate=10_000, api_burst=10_000)) as test_client:
        yield test_client


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    if not CHROMIUM.exists() or not CHROMEDRIVER.exists():
        service_missing(f"{CHROMIUM} or {CHROMEDRIVER} is not installed")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-dev-shm-usage",
        "--window-size=1280,1000",
        f"--user-data-dir={tmp_path / 'chromium'}",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # CSP violations land here
    service = Service(str(CHROMEDRIVER), log_output=str(tmp_path / "chromedriver.log"))
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    """Where screenshots go: $ARENA_SCREENSHOTS if set (to keep them), else a temporary folder."""
    folder = Path(os.environ.get("ARENA_SCREENSHOTS") or tmp_path / "shots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder
