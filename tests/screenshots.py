"""Screenshots for the README and the documentation site (docs/images/), taken by the
tests' own browser: `python -m tests.screenshots`.

Reads `results/default.html` (written by `python -m harness run`) and writes
an explorer page of the simulator's ring to a temporary folder, then saves
`docs/images/report.png` and `docs/images/explorer.png`; from `results/clients.html`, the
first agreement heat map as `docs/images/clients-heat-map.png`.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from harness.cli import main as harness

from .browser import MISSING, browser

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "docs" / "images"


def main() -> None:
    if MISSING:
        raise SystemExit(MISSING)
    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, browser(1200, 1500) as driver:
        driver.set_script_timeout(60)
        driver.get((ROOT / "results" / "default.html").as_uri())
        driver.execute_async_script("window.chartsReady.then(arguments[0]);")
        driver.save_screenshot(str(IMAGES / "report.png"))
        page = Path(tmp) / "explorer.html"
        assert harness(["explore", "--out", str(page)]) == 0
        driver.set_window_size(1200, 820)
        driver.get(page.as_uri())
        driver.execute_script("window.ringExplorer.addServer();")
        time.sleep(1)  # the shares chart redraws after the change
        driver.save_screenshot(str(IMAGES / "explorer.png"))
    clients_heat_map()
    print(f"wrote {IMAGES / 'report.png'}, {IMAGES / 'explorer.png'} and "
          f"{IMAGES / 'clients-heat-map.png'}")


def clients_heat_map() -> None:
    """The agreement heat map of the clients scenario's first fleet, as it is."""
    with browser(1200, 1500) as driver:
        driver.set_script_timeout(60)
        driver.get((ROOT / "results" / "clients.html").as_uri())
        driver.execute_async_script("window.chartsReady.then(arguments[0]);")
        # vega-embed relabels the chart's element: find it by its spec's title.
        specs = json.loads(driver.find_element("id", "chart-specs").get_attribute(
            "textContent"))
        first = next(i for i, spec in enumerate(specs) if spec["title"].startswith("Agreement"))
        chart = driver.find_element("id", f"chart-{first}")
        chart.screenshot(str(IMAGES / "clients-heat-map.png"))


if __name__ == "__main__":
    main()
