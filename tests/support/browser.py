"""Headless Chromium for the web's tests: viewport widths, full-page screenshots, and the
phone-width check (the `browser` and `shots` fixtures are in tests/web/conftest.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")

DESKTOP = 1280
PHONE = 375
SHOT_HEIGHT = 2400
"""Full-page screenshots stop here: enough to see a page, and each PNG stays small."""


def view_at(driver: Any, width: int, height: int = 1000) -> None:
    """Lay the page out in a viewport `width` wide; below 500 px as a phone (touch, the
    page's viewport meta applies)."""
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 500},
    )


def screenshot(driver: Any, path: Path, width: int = DESKTOP) -> None:
    """A full-page screenshot at `width` (the viewport grown to the page's height)."""
    height = driver.execute_script("return document.documentElement.scrollHeight")
    view_at(driver, width, min(int(height), SHOT_HEIGHT))
    driver.save_screenshot(str(path))
    view_at(driver, width)


def fits_the_phone(driver: Any) -> None:
    """Nothing makes the page itself wider than the phone (wide tables scroll in their box)."""
    width = driver.execute_script("return document.documentElement.scrollWidth")
    assert width <= PHONE, (driver.current_url, width)
