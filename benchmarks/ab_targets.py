"""The A/B gate's targets, measured: sensitivity, false alarms, detectable effect, time.

    .venv/bin/python benchmarks/ab_targets.py [--base HEAD] [--runs 10] [--out DIR]

Clones this repository twice at BASE into a temporary folder: one clone unchanged, the
other with `cffi-packed`'s batch lookup made to do 1.25x its work (it looks up the first
quarter of its keys again before answering). Each is built in place. Then, RUNS times,
`ring-bench-gate --against BASE` runs from each clone in turn (unchanged, then slowed),
and in round 1 and every --short-every rounds (default 2) today's short gate (`pytest
benchmarks --bench-mode=short` and `ring-bench-gate` on its report) runs too, for the
time comparison. The base build is
cached after the first run; the first run's time includes it.

Prints, per run, its verdicts and time, then the totals: slowed runs that flagged the
injected layout's batch lookups, unchanged runs that flagged anything, the largest
detectable effect of the C layouts' batch lookups, and the times. Reports go to --out.
Nothing in the checkout is touched. Takes about a minute per A/B run.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SLOWED_FILE = "harness/recipes/layouts/cffi_packed.py"
SLOWED_LAYOUT = "cffi-packed"
#: the injected slowdown: a quarter of the keys looked up again, then all of them
SLOWED_SOURCE = '''"""`cffi-packed`, slowed on purpose for the A/B gate's sensitivity target."""

from harness.recipes.layouts.cffi_struct import CffiStructLayout


class CffiPackedLayout(CffiStructLayout):
    name = "cffi-packed"
    struct_kind = "packed"

    def __init__(self, array):
        super().__init__(array)
        inner = array.lookup_many

        def lookup_many(keys):
            inner(keys[: len(keys) // 4])
            return inner(keys)

        self.lookup_many = lookup_many
'''
C_BATCH = re.compile(r"^\| (batch/cffi-[a-z0-9-]+/\S+) +\| [^|]+\| [^|]+\| ([0-9.]+)x")


def run(command: list[str], cwd: Path, **environment: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, env={**os.environ, **environment},
                          capture_output=True, text=True, check=False)


def clone(base: str, into: Path, slowed: bool) -> None:
    run(["git", "clone", "-q", str(ROOT), str(into)], ROOT).check_returncode()
    run(["git", "checkout", "-q", "--detach", base], into).check_returncode()
    if slowed:
        (into / SLOWED_FILE).write_text(SLOWED_SOURCE)
        run(["git", "-c", "user.name=targets", "-c", "user.email=targets@localhost",
             "commit", "-qam", "cffi-packed batch lookup: 1.25x the work"],
            into).check_returncode()
    run([sys.executable, "setup.py", "build_ext", "--inplace", "-q"], into).check_returncode()


def ab_run(checkout: Path, base: str, out: Path, cache: Path) -> tuple[float, list[str], str]:
    """One A/B gate run from `checkout`: its time, regressions and Markdown report."""
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    done = run([sys.executable, "-m", "harness.cli.gate", "--against", base,
                "--suite", str(checkout / "benchmarks"), "--report-dir", str(out),
                "--regressions-out", str(out / "regressions.txt")], checkout,
               PYTHONPATH=str(checkout), RING_BENCH_AB_CACHE=str(cache))
    seconds = time.monotonic() - started
    (out / "output.txt").write_text(done.stdout + done.stderr)
    if done.returncode not in (0, 1):
        raise SystemExit(f"A/B run in {checkout} failed: {done.stderr.strip()[-300:]}")
    report = (out / "ab-gate.md").read_text()
    return seconds, (out / "regressions.txt").read_text().split(), report


def short_gate(checkout: Path, out: Path) -> float:
    """Today's short gate from `checkout`: the suite's short plan, then the gate."""
    started = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    report = out / "short.json"
    run([sys.executable, "-m", "pytest", "benchmarks", "-q", "-p", "no:cacheprovider",
         "--benchmark-disable-gc", "--bench-mode=short", f"--benchmark-json={report}"],
        checkout, PYTHONPATH=str(checkout), PYTHONHASHSEED="0").check_returncode()
    run([sys.executable, "-m", "harness.cli.gate", str(report), "--baseline-dir",
         str(out / "baseline")], checkout, PYTHONPATH=str(checkout))
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="HEAD")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--short-every", type=int, default=2,
                        help="run the short gate in round 1 and every this many rounds")
    args = parser.parse_args()
    base = run(["git", "rev-parse", "--verify", f"{args.base}^{{commit}}"], ROOT).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="ab-targets-") as scratch:
        work = Path(scratch)
        out = args.out or work / "reports"
        unchanged, slowed, cache = work / "unchanged", work / "slowed", work / "cache"
        clone(base, unchanged, slowed=False)
        clone(base, slowed, slowed=True)
        caught = alarms = 0
        detectable: list[float] = []
        times: dict[str, list[float]] = {"unchanged": [], "slowed": [], "short": []}
        for index in range(1, args.runs + 1):
            for kind, checkout in (("unchanged", unchanged), ("slowed", slowed)):
                seconds, regressions, report = ab_run(checkout, base, out / f"{kind}-{index}",
                                                      cache)
                times[kind].append(seconds)
                detectable += [float(m.group(2)) for m in map(C_BATCH.match,
                                                                report.splitlines()) if m]
                if kind == "slowed":
                    hit = any(r.startswith(f"batch/{SLOWED_LAYOUT}/") for r in regressions)
                    caught += hit
                else:
                    alarms += bool(regressions)
                print(f"{kind} run {index}: {seconds:.0f} s, regressions: "
                      f"{' '.join(regressions) or 'none'}", flush=True)
            if (index - 1) % args.short_every == 0:
                times["short"].append(short_gate(unchanged, out / f"short-{index}"))
                print(f"short gate {index}: {times['short'][-1]:.0f} s", flush=True)
        print(f"\nslowed runs that caught batch/{SLOWED_LAYOUT}: {caught} of {args.runs}")
        print(f"unchanged runs that flagged anything: {alarms} of {args.runs}")
        print(f"largest detectable effect of a C batch lookup: {max(detectable):.3f}x "
              f"(median {sorted(detectable)[len(detectable) // 2]:.3f}x)")
        ab = times["unchanged"] + times["slowed"]
        print(f"A/B run: first (base built) {ab[0]:.0f} s, then {min(ab[1:] or ab):.0f} to "
              f"{max(ab[1:] or ab):.0f} s; short gate {min(times['short']):.0f} to "
              f"{max(times['short']):.0f} s")


if __name__ == "__main__":
    main()
