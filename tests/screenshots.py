"""Screenshots for the README and the documentation site (docs/images/), taken by the
tests' own browser: `python -m tests.screenshots`.

Reads `results/default.html` (written by `python -m harness run`) and writes
an explorer page of the simulator's ring to a temporary folder, then saves
`docs/images/report.png` and `docs/images/explorer.png`.
"""

from __future__ import annotations

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
    print(f"wrote {IMAGES / 'report.png'} and {IMAGES / 'explorer.png'}")


if __name__ == "__main__":
    main()
