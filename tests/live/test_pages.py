"""The HTML pages in a real browser (headless chromium): they load with no console error,
draw every chart, show and sort their tables, and a screenshot is not blank."""

from __future__ import annotations

import io
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from tests.browser import browser, console_errors, full_page_png
from tests.conftest import SMALL_SCENARIO
from tests.paths import FIXTURES, ROOT

pytestmark = pytest.mark.tools("chromium")
FORMAT1 = FIXTURES / "format1"


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One page of each kind: a run, a comparison, a reproduction (from committed results)."""
    folder = tmp_path_factory.mktemp("pages")
    scenario = folder / "small.toml"
    scenario.write_text(SMALL_SCENARIO, encoding="utf-8")
    assert main(["run", str(scenario), "--out", str(folder), "--no-progress"]) == 0
    assert main(["compare", str(FORMAT1 / "hash-bits-32.json"),
                 str(FORMAT1 / "hash-bits-64.json"), "--out", str(folder / "cmp.md")]) == 0
    shutil.copytree(FORMAT1 / "reproduce", folder / "repro" / "reproduce")
    assert main(["reproduce", "--no-run", "--out", str(folder / "repro")]) == 0
    return {"run": folder / "small.html", "compare": folder / "cmp.html",
            "reproduce": folder / "repro" / "REPRODUCTION.html"}


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    with browser() as session:
        yield session


def _open(driver: Any, page: Path) -> int:
    """Load a page and wait for its charts; return how many were drawn."""
    console_errors(driver)  # drop what earlier pages logged
    driver.get(page.as_uri())
    driver.set_script_timeout(60)
    drawn: int = driver.execute_async_script(
        "const done = arguments[0];"
        "window.chartsReady.then(() => done(window.chartsDrawn), e => done(-1));")
    return drawn


@pytest.mark.parametrize(("kind", "least_charts"), [("run", 6), ("compare", 0),
                                                     ("reproduce", 3)])
def test_page_loads_draws_and_shows_tables(
    kind: str, least_charts: int, pages: dict[str, Path], driver: Any,
) -> None:
    """No console error; every chart placeholder holds a drawn SVG; the tables are there."""
    drawn = _open(driver, pages[kind])
    placeholders = driver.find_elements("css selector", "div.chart")
    assert drawn == len(placeholders) >= least_charts
    assert len(driver.find_elements("css selector", "div.chart svg")) == drawn
    assert driver.find_elements("css selector", "table.sortable tbody tr")
    assert console_errors(driver) == []
    assert "http" not in "".join(e.get_attribute("src") or "" for e in
                                 driver.find_elements("css selector", "script, img, link"))


def test_screenshot_is_not_blank(pages: dict[str, Path], driver: Any) -> None:
    """The rendered page has text and charts: many distinct colours, not one flat fill."""
    from PIL import Image

    _open(driver, pages["run"])
    image = Image.open(io.BytesIO(full_page_png(driver))).convert("RGB")
    assert image.height > 2000
    colours = image.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 50


def test_tables_sort_by_raw_value(pages: dict[str, Path], driver: Any) -> None:
    """Clicking a heading sorts by the cells' values (numbers as numbers), then reverses."""
    _open(driver, pages["run"])
    table = next(t for t in driver.find_elements("css selector", "table.sortable")
                 if "bytes_per_entry" in t.text)
    headings = table.find_elements("css selector", "th")
    column = [h.text for h in headings].index("bytes_per_entry")

    def values() -> list[float]:
        return [float(row.find_elements("css selector", "td")[column]
                      .get_attribute("data-value"))
                for row in table.find_elements("css selector", "tbody tr")]

    headings[column].click()
    assert values() == sorted(values())
    headings[column].click()
    assert values() == sorted(values(), reverse=True)


def test_dark_mode_page_is_dark(pages: dict[str, Path]) -> None:
    """With the reader's dark setting, the page background is dark and text light."""
    with browser(dark=True) as dark:
        _open(dark, pages["run"])
        background = dark.execute_script(
            "return getComputedStyle(document.body).backgroundColor")
        assert background == "rgb(22, 24, 28)"


def test_hostile_keys_page_draws_its_chart(driver: Any) -> None:
    """The committed hostile-keys page loads with no console error and draws every chart,
    its grouped bars of the share on target among them."""
    page = ROOT / "results" / "hostile-keys.html"
    drawn = _open(driver, page)
    assert drawn == len(driver.find_elements("css selector", "div.chart")) >= 1
    assert "Share of the attack's requests on server-0" in driver.page_source
    assert console_errors(driver) == []


def test_the_6gb_process_page_has_its_headline_and_draws_its_charts(driver: Any) -> None:
    """The committed 6 GB process page loads with no console error, opens with its
    headline, shows the process in each layout and after the cut on one table, and draws
    every chart (each sweep point's process memory, the migration's origin load)."""
    page = ROOT / "results" / "process-cloudflare-6gb.html"
    drawn = _open(driver, page)
    assert drawn == len(driver.find_elements("css selector", "div.chart")) >= 3
    body = driver.find_element("css selector", "body").text
    assert "Cloudflare's process at 8 B, at 6 B, bucketed, and after the cut." in body
    assert "The process in each layout, and after the cut" in body
    assert console_errors(driver) == []


@pytest.mark.parametrize("page", ["tutorial.html", "tutorial-migration.html"])
def test_wide_tables_fit_the_page(page: str, driver: Any) -> None:
    """The committed tutorial pages' widest tables (Memory: ten columns; the weighted
    Balance: twelve) fit their column at a 1280-pixel window: nothing behind a scrollbar."""
    _open(driver, ROOT / "results" / page)
    overflowing = driver.execute_script(
        "return [...document.querySelectorAll('.table-wrap')]"
        ".filter(w => w.scrollWidth > w.clientWidth + 1)"
        ".map(w => w.querySelector('th').parentNode.textContent.slice(0, 80));")
    assert overflowing == []


def test_history_index_page(tmp_path: Path, driver: Any) -> None:
    """The run history's index loads with no console error, shows a row per figure with a
    column per kept run, and draws the figures that stepped."""
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL_SCENARIO.split("[[operations]]")[0].replace(
        "count = 5000", "count = 1000"), encoding="utf-8")
    for servers in (10, 11, 11):  # a change of fleet that persists: a step, charted
        scenario.write_text(scenario.read_text().replace("count = 10", f"count = {servers}")
                            .replace("count = 11", f"count = {servers}"))
        assert main(["run", str(scenario), "--no-progress", "--history",
                     str(tmp_path / "h")]) == 0
    assert _open(driver, tmp_path / "h" / "index.html") == 1
    (table,) = driver.find_elements("css selector", "table.sortable")
    headings = [h.text for h in table.find_elements("css selector", "th")]
    assert [h[:4] for h in headings[3:5]] == ["0001", "0002"]
    assert len(table.find_elements("css selector", "tbody tr")) > 10
    assert console_errors(driver) == []


@pytest.mark.parametrize("page", ["fleet-rollout.html", "fleet-cloudflare.html"])
def test_the_fleet_pages_answer_first_and_draw_their_charts(page: str, driver: Any) -> None:
    """The committed fleet pages load with no console error, open the fleet's section with
    its answers (memory before, peak and after; the worst data centre and wave), and draw
    every chart (fetches per window, per wave, and the fleet's memory)."""
    drawn = _open(driver, ROOT / "results" / page)
    assert drawn == len(driver.find_elements("css selector", "div.chart")) >= 3
    body = driver.find_element("css selector", "body").text
    assert "Fleet memory:" in body and "Worst data centre:" in body
    assert console_errors(driver) == []
