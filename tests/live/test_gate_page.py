"""The gate's HTML report in a real headless chromium: names that are markup (a scenario, a
subject, a note, the base's command) show as written, and nothing in them runs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.apps.gate.report import GateReport, html_page
from harness.apps.gate.verdicts import PASS, REGRESSION, Check
from tests.browser import browser, console_errors

pytestmark = pytest.mark.tools("chromium")

HOSTILE = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>'


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    with browser() as session:
        yield session


def test_the_gate_page_shows_hostile_names_as_text_and_runs_nothing(
        tmp_path: Path, driver: Any) -> None:
    checks = [Check(f"k=1/{HOSTILE}", "ns_per_key", 10.0, 13.0, 1.3, 1.2, 1.4, 1.05,
                    REGRESSION, detectable=1.07, pairs=12, note=HOSTILE),
              Check("k=1/ring", "cv", 0.05, 0.05, 1.0, None, None, 1.1, PASS)]
    report = GateReport(HOSTILE, "ab", checks, f"the base command {HOSTILE}", "judged")
    page = tmp_path / "gate.html"
    page.write_text(html_page(report), encoding="utf-8")
    console_errors(driver)
    driver.get(page.as_uri())
    state: dict[str, Any] = driver.execute_script(
        "return {pwned: window.pwned === undefined ? null : window.pwned,"
        " scripts: document.scripts.length, images: document.images.length,"
        " text: document.body.innerText, title: document.title,"
        " rows: document.querySelectorAll('tbody tr').length,"
        " failed: document.querySelectorAll('tr.regression').length};")
    assert state["pwned"] is None
    assert (state["scripts"], state["images"]) == (0, 0)
    assert state["title"] == f"Gate: {HOSTILE}"
    assert HOSTILE in state["text"] and "REGRESSION" in state["text"]
    assert (state["rows"], state["failed"]) == (2, 1)
    assert "1.200 to 1.400" in state["text"] and "exact" in state["text"]
    assert console_errors(driver) == []
