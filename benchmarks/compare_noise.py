"""`compare`'s false findings, measured: runs of unchanged code compared in pairs.

    .venv/bin/python benchmarks/compare_noise.py [--scenario scenarios/tutorial.toml]
                                                 [--runs 20] [--out DIR] [--results DIR]

Runs the scenario RUNS times, one `python -m harness run` process after another (each its
own process, as two runs a user compares are, kept out of the run history), then compares
run 1 with run 2, 3 with 4, ... as `compare` does (`harness.report.compare`). Prints, per
pair, how many timings were judged, how many changed within the noise, and any finding
beyond it (a false finding: the code did not change), with the machine's load average
over the runs; then the totals. The target (issue 39): no finding in any pair of unchanged
code on a loaded machine. Results go to --out (default: a temporary folder, removed);
--results DIR judges the runs an earlier --out kept there again, running nothing.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness.report.compare import compared, paired_runs
from harness.report.results import load_result

ROOT = Path(__file__).resolve().parents[1]


def _run(scenario: Path, out: Path) -> Path:
    subprocess.run([sys.executable, "-m", "harness", "run", str(scenario), "--out", str(out),
                    "--no-history", "--no-progress"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    (result,) = out.glob("*.json")
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", type=Path, default=ROOT / "scenarios" / "tutorial.toml")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--results", type=Path, help="judge the runs kept here again")
    args = parser.parse_args()
    if args.runs < 2 or args.runs % 2:
        parser.error(f"--runs: expected an even number of 2 or more, got {args.runs}")
    with tempfile.TemporaryDirectory(prefix="compare-noise-") as scratch:
        folder = args.out or Path(scratch)
        results, loads = [], [os.getloadavg()[0]]
        started = time.monotonic()
        if args.results:
            results = sorted(args.results.glob("run-*/*.json"))[:args.runs // 2 * 2]
        for number in range(1, 0 if args.results else args.runs + 1):
            results.append(_run(args.scenario.resolve(), folder / f"run-{number:02d}"))
            loads.append(os.getloadavg()[0])
            print(f"run {number}: load average {loads[-1]:.2f}", flush=True)
        pairs = findings = judged = within = 0
        for first, second in zip(results[::2], results[1::2], strict=True):
            pairs += 1
            comparison = compared(paired_runs(load_result(first), load_result(second)))
            findings += bool(comparison.findings)
            judged += comparison.judged
            within += comparison.within_noise
            print(f"pair {pairs} ({first.parent.name} vs {second.parent.name}): "
                  f"{comparison.judged} timings judged, {comparison.within_noise} changed "
                  f"within the noise, {len(comparison.findings)} beyond it"
                  + "".join(f"\n  FINDING {f}" for f in comparison.findings))
        print(f"\n{pairs - findings} of {pairs} pairs of unchanged code with no timing finding "
              f"beyond the noise ({judged} timings judged, {within} changed within it); "
              f"load average {min(loads):.2f}-{max(loads):.2f} on {os.cpu_count()} cores; "
              f"{time.monotonic() - started:.0f} s")
    return 0 if findings == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
