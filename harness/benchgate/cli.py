"""`ring-bench-gate RESULTS.json`: compare one run of `benchmarks/` with the committed baseline.

Exit status: 0 when nothing regressed (or a baseline was recorded), 1 on a
regression, 2 when the results file is unusable. `--update-baseline` (or
RING_BENCH_UPDATE=1 in the environment) rewrites the baseline on purpose.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from tabulate import tabulate

from harness.benchgate.baseline import baseline_path, read_baseline, write_baseline
from harness.benchgate.decide import (
    ALPHA,
    BUILD_SLOWDOWN_THRESHOLD,
    SLOWDOWN_THRESHOLD,
    FigureVerdict,
    TimingVerdict,
    judge_figures,
    judge_timings,
    unmatched,
)
from harness.benchgate.results import read_run
from harness.errors import HarnessError

UPDATE_VARIABLE = "RING_BENCH_UPDATE"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ring-bench-gate", description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="the suite's --benchmark-json file")
    parser.add_argument("--baseline-dir", type=Path, default=Path("benchmarks/baseline"))
    parser.add_argument(
        "--update-baseline",
        action="store_true",
        default=os.environ.get(UPDATE_VARIABLE, "") not in ("", "0"),
        help=f"rewrite the baseline with this run (also: {UPDATE_VARIABLE}=1)",
    )
    return parser


def timing_table(verdicts: Sequence[TimingVerdict]) -> str:
    rows = [
        (
            v.benchmark,
            f"{v.baseline_ratio:.4g}",
            f"{v.current_ratio:.4g}",
            f"{v.change:.2f}x",
            f"{v.p_value:.2g}",
            "REGRESSION" if v.regressed else "ok",
        )
        for v in sorted(verdicts, key=lambda v: (not v.regressed, v.benchmark))
    ]
    headers = ("benchmark", "baseline ratio", "current ratio", "change", "p-value", "verdict")
    return str(tabulate(rows, headers=headers, disable_numparse=True))


def figure_table(verdicts: Sequence[FigureVerdict]) -> str:
    rows = [
        (v.figure, v.baseline, v.current, "REGRESSION" if v.regressed else "improved")
        for v in verdicts
    ]
    return str(
        tabulate(rows, headers=("figure", "baseline", "current", "verdict"), disable_numparse=True)
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        run = read_run(args.results)
    except HarnessError as exc:
        print(f"ring-bench-gate: {exc}", file=sys.stderr)
        return 2
    path = baseline_path(args.baseline_dir, run.mode)
    if args.update_baseline:
        write_baseline(path, run)
        print(f"baseline rewritten on request: {path}")
        return 0
    baseline, why_not = read_baseline(path, run)
    if baseline is None:
        print(
            f"WARNING: {why_not}; recording this run as the new baseline "
            "(nothing to compare against this time)",
            file=sys.stderr,
        )
        write_baseline(path, run)
        print(f"baseline recorded: {path}")
        return 0

    timings = judge_timings(run, baseline)
    changed_figures = [
        v for v in judge_figures(run, baseline) if v.regressed or v.baseline != v.current
    ]
    print(
        f"Timings: layout time / reference time per round, medians; regression = "
        f"change > {SLOWDOWN_THRESHOLD}x ({BUILD_SLOWDOWN_THRESHOLD}x for builds) "
        f"and one-sided Mann-Whitney p < {ALPHA}"
    )
    print(timing_table(timings))
    if changed_figures:
        print("\nDeterministic figures that changed:")
        print(figure_table(changed_figures))
    new, missing = unmatched(run, baseline)
    if new:
        print(f"\nnot in the baseline (not judged; record with --update-baseline): {new}")
    if missing:
        print(f"\nin the baseline but not measured in this run: {missing}")
    regressions = [v.benchmark for v in timings if v.regressed] + [
        v.figure for v in changed_figures if v.regressed
    ]
    if regressions:
        print(f"\nFAIL: {len(regressions)} regression(s): {', '.join(regressions)}")
        return 1
    print(
        f"\nPASS: {len(timings)} timings and {len(run.figures)} figures "
        f"within the baseline ({path})"
    )
    return 0
