"""`ring-bench-gate RESULTS.json`: compare one run of `benchmarks/` with the committed baseline.

Exit status: 0 when nothing regressed (or a baseline was recorded), 1 on a
regression, 2 when the results cannot be judged: not the suite's JSON, a mode
the suite does not define, no timings or figures, NaN or non-positive times,
too few samples, nothing in common with a baseline of the same environment, or
a --baseline-dir that is not a directory. A baseline
recorded in another environment has its timings replaced, but its
CPU-independent figures (routing digests, and sizes where Python and the
architecture match) still decide. `--update-baseline` (or RING_BENCH_UPDATE=1
in the environment) rewrites the baseline on purpose.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from tabulate import tabulate

from harness.atomic import write_atomically
from harness.benchgate.baseline import (
    baseline_path,
    check_directory,
    read_baseline,
    write_baseline,
)
from harness.benchgate.decide import (
    ALPHA,
    BUILD_SLOWDOWN_THRESHOLD,
    COUNT_TOLERANCE,
    SLOWDOWN_THRESHOLD,
    FigureVerdict,
    TimingVerdict,
    comparable_figures,
    judge_figures,
    judge_timings,
    unmatched,
)
from harness.benchgate.plan import get_plan
from harness.benchgate.results import UnusableDataError, minimum_samples, read_run
from harness.errors import HarnessError

UPDATE_VARIABLE = "RING_BENCH_UPDATE"
REGRESSIONS_VARIABLE = "RING_BENCH_REGRESSIONS"


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
    parser.add_argument(
        "--regressions-out",
        type=Path,
        default=os.environ.get(REGRESSIONS_VARIABLE) or None,
        help="write the names of the regressions found, one per line (empty when none), so "
        f"that a second run can confirm them (also: {REGRESSIONS_VARIABLE}=FILE)",
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
        (v.figure, v.baseline, v.current, v.verdict)
        for v in verdicts
    ]
    return str(
        tabulate(rows, headers=("figure", "baseline", "current", "verdict"), disable_numparse=True)
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        regressions = _gate(args.results, args.baseline_dir, update=args.update_baseline)
        if args.regressions_out is not None:
            write_atomically(args.regressions_out, "".join(f"{r}\n" for r in regressions))
        return 1 if regressions else 0
    except HarnessError as exc:
        message = f"unusable data: {exc}"
    except OSError as exc:
        message = f"cannot write the baseline or the regressions file: {exc}"
    # Names taken from the file may hold newlines; the message stays one line.
    print(f"ring-bench-gate: {message}".replace("\n", "\\n"), file=sys.stderr)
    return 2


def _nothing_to_judge(path: Path, kind: str) -> UnusableDataError:
    """A run that shares no timing or figure with its baseline would pass without a check."""
    return UnusableDataError(
        f"{path}: this run shares no {kind} with the baseline, so there is "
        "nothing to judge (record it with --update-baseline if that is intended)"
    )


def _gate(results: Path, baseline_dir: Path, *, update: bool) -> list[str]:
    """Judge one run; returns the names of its regressions (none: it passed)."""
    check_directory(baseline_dir)
    run = read_run(results, minimum_samples(ALPHA))
    path = baseline_path(baseline_dir, run.mode)
    if update:
        write_baseline(path, run)
        print(f"baseline rewritten on request: {path}")
        return []
    baseline, why_not = read_baseline(path, run.mode)
    if baseline is None:
        print(
            f"WARNING: {why_not}; recording this run as the new baseline "
            "(nothing to compare against this time)",
            file=sys.stderr,
        )
        write_baseline(path, run)
        print(f"baseline recorded: {path}")
        return []

    same_environment = baseline.environment == run.environment
    if not same_environment:
        print(
            f"WARNING: {path} was recorded on {baseline.environment}, this run is on "
            f"{run.environment}: timings are not comparable and are re-baselined; "
            "figures that do not depend on the CPU are still checked",
            file=sys.stderr,
        )
    timings = judge_timings(run, baseline) if same_environment else []
    counting = get_plan(run.mode).measures == "counts"
    # (In another environment a run with nothing comparable re-baselines, as announced.)
    if same_environment and not timings and not counting:
        raise _nothing_to_judge(path, "timing")
    if same_environment and not comparable_figures(run, baseline):
        raise _nothing_to_judge(path, "figure")
    changed_figures = [
        v for v in judge_figures(run, baseline) if v.regressed or v.baseline != v.current
    ]
    if timings:
        print(
            f"Timings: layout time / reference time per round, medians; regression = "
            f"change > {SLOWDOWN_THRESHOLD}x ({BUILD_SLOWDOWN_THRESHOLD}x for builds) "
            f"and one-sided Mann-Whitney p < {ALPHA}"
        )
        print(timing_table(timings))
    if counting:
        print(f"Counts (callgrind): a figure regresses when it grows by more than "
              f"{COUNT_TOLERANCE:.0%}")
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
        return regressions
    figures_checked = len(comparable_figures(run, baseline))
    if not same_environment:
        write_baseline(path, run)
        print(
            f"\nPASS: {figures_checked} figures within the baseline; timings re-baselined "
            f"for this environment ({path})"
        )
        return []
    print(
        f"\nPASS: {len(timings)} timings and {figures_checked} figures "
        f"within the baseline ({path})"
    )
    return []
