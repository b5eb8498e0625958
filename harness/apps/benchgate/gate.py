"""Judging one run of `benchmarks/` against the committed baseline: what `ring-bench-gate`
prints and which regressions it returns (`harness.cli.gate` sets the exit code)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from tabulate import tabulate

from harness.apps.benchgate.baseline import (
    baseline_path,
    check_directory,
    read_baseline,
    write_baseline,
)
from harness.apps.benchgate.decide import (
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
from harness.apps.benchgate.plan import get_plan
from harness.apps.benchgate.results import UnusableDataError, minimum_samples, read_run


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


def _nothing_to_judge(path: Path, kind: str) -> UnusableDataError:
    """A run that shares no timing or figure with its baseline would pass without a check."""
    return UnusableDataError(
        f"{path}: this run shares no {kind} with the baseline, so there is "
        "nothing to judge (record it with --update-baseline if that is intended)"
    )


def judge_run(results: Path, baseline_dir: Path, *, update: bool) -> list[str]:
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
    new, missing, planned = unmatched(run, baseline)
    if new:
        print(f"\nnot in the baseline (not judged; record with --update-baseline): "
              f"{', '.join(new)}")
    if planned:
        print("\nin the baseline, left out by this run's plan (not judged): "
              + ", ".join(planned))
    if missing:
        # Deterministic: a second run lacks them too, so .ci/bench.sh confirms the failure.
        judged = "" if same_environment else " (not judged in another environment)"
        print(f"\nin the baseline but not measured in this run{judged}: {', '.join(missing)}")
    regressions = [v.benchmark for v in timings if v.regressed] + [
        v.figure for v in changed_figures if v.regressed
    ] + (missing if same_environment else [])
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
