"""A real headless browser for the page tests: Debian's chromium, driven by selenium.

Started with the flags this closed-network machine needs (no background
networking, no component updates) and a fresh profile. A test that drives it
carries `pytest.mark.tools("chromium")` (or calls `require_tool("chromium")`):
it skips, naming the tool and its install command, where chromium or its
driver is not installed, and fails instead under RING_HARNESS_REQUIRE_TOOLS.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from harness.core.tools import tool_problem

CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")
#: why no browser can be started here (the tool table's words), or None
MISSING = tool_problem("chromium")


@contextmanager
def browser(width: int = 1280, height: int = 900, dark: bool = False) -> Iterator[Any]:
    """A headless chromium session that records the page's console messages."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    assert CHROMIUM and CHROMEDRIVER
    with tempfile.TemporaryDirectory(prefix="ring-harness-chromium-") as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                     "--no-first-run", "--disable-background-networking",
                     "--disable-component-update", "--disable-sync",
                     "--disable-dev-shm-usage", f"--user-data-dir={profile}",
                     f"--window-size={width},{height}"):
            options.add_argument(flag)
        if dark:
            options.add_argument("--force-dark-mode")
            options.add_argument("--blink-settings=preferredColorScheme=0")
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        try:
            yield driver
        finally:
            driver.quit()


def console_errors(driver: Any) -> list[str]:
    """Console messages of level SEVERE since the last call."""
    return [entry["message"] for entry in driver.get_log("browser")
            if entry["level"] == "SEVERE"]


def full_page_png(driver: Any) -> bytes:
    """A screenshot of the whole page, not only the window (the DevTools protocol's own)."""
    import base64

    width = driver.execute_script("return document.documentElement.scrollWidth")
    height = driver.execute_script("return document.documentElement.scrollHeight")
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}})
    return base64.b64decode(shot["data"])
