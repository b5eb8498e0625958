"""A result's page opens with its answers (headless chromium at 1400x900): the whole
answers block of a migration is on the first screen, above the first chart, and the table
of contents links to a heading for each section."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser import browser, console_errors
from tests.paths import ROOT

pytestmark = pytest.mark.tools("chromium")
#: the issue's two pages: the tutorial's migration and a 120-server one
PAGES = ("tutorial-migration", "migration-120")
WIDTH, HEIGHT = 1400, 900


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    with browser(WIDTH, HEIGHT) as session:
        yield session


def _open(driver: Any, name: str) -> None:
    console_errors(driver)
    driver.get((ROOT / "results" / f"{name}.html").as_uri())
    driver.set_script_timeout(60)
    driver.execute_async_script("window.chartsReady.then(arguments[0]);")


def _box(driver: Any, element: Any) -> dict[str, float]:
    box: dict[str, float] = driver.execute_script(
        "const r = arguments[0].getBoundingClientRect();"
        "return {top: r.top + window.scrollY, bottom: r.bottom + window.scrollY};", element)
    return box


@pytest.mark.parametrize("name", PAGES)
def test_every_answer_is_on_the_first_screen_above_the_first_chart(
        name: str, driver: Any) -> None:
    """Every answer line ends within the first 900 px, and the block above the first chart."""
    _open(driver, name)
    block = driver.find_element("css selector", "section.answers")
    lines = block.find_elements("css selector", "li")
    assert len(lines) >= 3  # keys moved, peak origin rates, extra fetches at least
    for line in lines:
        assert _box(driver, line)["bottom"] <= HEIGHT, line.text
    first_chart = driver.find_elements("css selector", "div.chart")[0]
    assert _box(driver, block)["bottom"] < _box(driver, first_chart)["top"]
    assert "Extra origin fetches" in block.text and "all at once" in block.text
    assert console_errors(driver) == []


@pytest.mark.parametrize("name", PAGES)
def test_contents_and_answers_link_to_headings_on_the_page(name: str, driver: Any) -> None:
    """Each link of the contents and of the answers lands on a heading the page has; the
    measurement notes come last, under "How this was measured"."""
    _open(driver, name)
    links = driver.find_elements("css selector", "nav.toc a, section.answers a")
    assert len(links) >= 4
    for link in links:
        target = link.get_attribute("href").rsplit("#", 1)[1]
        heading = driver.find_elements("id", target)
        assert heading and heading[0].tag_name in ("h2", "h3"), target
    headings = [h.text for h in driver.find_elements("css selector", "main h2")]
    assert headings[-1] == "How this was measured"
    folded = driver.find_element("css selector", "details summary")
    assert "servers" in folded.text
