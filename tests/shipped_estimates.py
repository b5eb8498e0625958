"""The estimate of every shipped scenario (scenarios/**/*.toml): the bytes a run adds to
this process, the seconds its own work takes, and what sets each, as the memory and time
checks name them. `tests/unit/test_shipped_estimates.py` holds them against the committed
`tests/fixtures/shipped_estimates.json`, so that a change to the cost model shows which
scenarios it moves.

`python -m tests.shipped_estimates` prints them; `--write` rewrites the JSON (after a
change to the model whose reason the commit states).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from harness.run.estimate import estimate, estimated_seconds
from harness.run.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "shipped_estimates.json"


def shipped_estimates() -> dict[str, dict[str, Any]]:
    """{scenario path: its estimate}, for every shipped scenario, in path order. Bytes are
    MiB to two decimals: the layouts' lines are measured on this machine (tracemalloc), so
    the last bytes move between runs."""
    found: dict[str, dict[str, Any]] = {}
    for path in sorted((ROOT / "scenarios").rglob("*.toml")):
        scenario = load_scenario(path)
        memory = estimate(scenario)
        seconds, seconds_culprit = estimated_seconds(scenario)
        found[path.relative_to(ROOT).as_posix()] = {
            "added_mib": round(memory.added_bytes / 2**20, 2),
            "culprit": memory.culprit,
            "seconds": round(seconds, 3),
            "seconds_culprit": seconds_culprit,
        }
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"rewrite {FIXTURE.name}")
    args = parser.parse_args()
    found = shipped_estimates()
    text = json.dumps(found, indent=1) + "\n"
    if args.write:
        FIXTURE.write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
