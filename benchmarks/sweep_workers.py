"""A sweep's points as tasks: one local worker against two, in the same session.

    .venv/bin/python benchmarks/sweep_workers.py [--rounds 2] [--keys 4000000]

Writes a sweep of four points of deterministic tables (200 weighted servers at 100, 200,
300 and 400 points per weight; collisions, balance, load and movement over `--keys`
zipf keys), then runs it as `python -m harness run --executor local --workers N` with
N = 1 and N = 2,
alternated for `--rounds` rounds, each with an empty task folder (every point computed).
Prints each run's wall time, the load average beside it, and the speed-up as the median
of one worker's times over the median of two's; a shared machine's load shows as the
spread. Also checks the two runs' figures are the same bits. Everything is written to a
temporary folder, removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from time import perf_counter
from typing import Any

SWEEP = """\
format_version = 1
name = "sweep-workers"
description = "Four sweep points of deterministic tables, run as tasks."

[servers]
count = 200
weights = {{ values = [1, 2, 4], shares = [2, 1, 1] }}

[generator]
hash = "blake2b-32"
points_per_weight = [100, 200, 300, 400]

[keys]
count = {keys}
distribution = "zipf"

[measure]
layouts = ["numpy-aligned", "cffi-packed"]
metrics = ["collisions", "balance", "load", "movement"]

[[operations]]
kind = "remove"
server = "server-3"
"""

#: what differs from run to run by nature
NOT_DETERMINISTIC = ("started_at", "duration_s", "wall_s", "peak_rss_bytes", "machine",
                     "git_commit", "executor", "estimated_peak_bytes")


def _deterministic(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _deterministic(v) for k, v in value.items() if k not in NOT_DETERMINISTIC}
    if isinstance(value, list):
        return [_deterministic(v) for v in value]
    return value


def _run(folder: Path, workers: int, name: str) -> tuple[float, str]:
    start = perf_counter()
    subprocess.run([sys.executable, "-m", "harness", "run", str(folder / "sweep.toml"),
                    "--no-history", "--no-progress", "--out", str(folder / name),
                    "--task-dir", str(folder / f"tasks-{name}"), "--executor", "local",
                    "--workers", str(workers)],
                   check=True, stdout=subprocess.DEVNULL)
    seconds = perf_counter() - start
    result = json.loads((folder / name / "sweep-workers.json").read_text())
    return seconds, json.dumps(_deterministic(result), sort_keys=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--keys", type=int, default=4_000_000)
    args = parser.parse_args()
    times: dict[int, list[float]] = {1: [], 2: []}
    with tempfile.TemporaryDirectory(prefix="sweep-workers-") as scratch:
        folder = Path(scratch)
        (folder / "sweep.toml").write_text(SWEEP.format(keys=f"{args.keys:_}"))
        figures = set()
        for round_ in range(args.rounds):
            for workers in (1, 2):
                seconds, figures_text = _run(folder, workers, f"r{round_}-w{workers}")
                figures.add(figures_text)
                times[workers].append(seconds)
                print(f"round {round_ + 1}, {workers} worker(s): {seconds:6.2f} s "
                      f"(load average {os.getloadavg()[0]:.2f})")
    one, two = statistics.median(times[1]), statistics.median(times[2])
    print(f"speed-up, median of 1 worker over median of 2: {one / two:.2f}x")
    print("figures: the same bits" if len(figures) == 1 else "figures: DIFFER")
    if len(figures) != 1:
        sys.exit(1)


if __name__ == "__main__":
    main()
