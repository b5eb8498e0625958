"""The rules that call a difference between a run and its baseline a regression.

Timings: per benchmark, the current run's per-round ratios (layout time over
reference time) against the baseline's. A regression needs both
- significance: one-sided Mann-Whitney U (current greater than baseline, the
  test asv uses), p < ALPHA; rank-based, so a few rounds disturbed by another
  tenant cannot carry it; and
- size: the median ratio grew by more than SLOWDOWN_THRESHOLD (builds:
  BUILD_SLOWDOWN_THRESHOLD, see below). Significance
  alone is not enough: with tight rounds, MWU finds a 5% shift significant,
  and a shared machine moves ratios by that much between runs (cache and
  memory-bandwidth contention do not hit a layout and its reference equally).

Figures are deterministic: memory and balance figures where higher is worse
regress when they grow at all; callgrind's counts (instructions and simulated
misses per key or entry, counts plans) when they grow by more than
COUNT_TOLERANCE and by more than COUNT_FLOOR; the set of layouts that agreed regresses when
a layout drops out of it (a newly registered layout joining it is not a
regression); the others (entries, routing digest) regress when they change. A timing
or figure of the baseline that a run in the baseline's environment did not measure
regresses too, unless the run's plan left its layout and ring out (`unmatched`).
Floats get a relative tolerance of FLOAT_TOLERANCE, for summation order
across numpy builds, not for noise.

Which parts of a baseline recorded elsewhere still apply (`comparable_figures`):
timings and counts only on the same environment (Python, architecture, CPU model
and count, and valgrind for counts: numpy picks its SIMD code by CPU); routing
digests, entries, collisions and cv_arcs everywhere (they
depend on the hashes and the plan alone); sizes (and so which layouts fit the
big ring's budget) wherever Python and the architecture match, whatever the CPU.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass

from harness.apps.benchgate.results import BenchRun, Figure, UnusableDataError, smallest_p_value

#: median ratio growth that counts as a slowdown: above the largest change seen between
#: unchanged runs on a busy 2-core machine (1.24x in five runs), below the 2x it must catch
SLOWDOWN_THRESHOLD = 1.5
#: builds are allocation-bound: their ratio to any fixed reference moves with the
#: allocator's and the kernel's page state (up to 1.48x between unchanged short runs,
#: on 16k-entry builds), so only a larger change counts
BUILD_SLOWDOWN_THRESHOLD = 2.0


def threshold_for(benchmark: str) -> float:
    """The median-ratio growth that counts as a slowdown for this benchmark."""
    return BUILD_SLOWDOWN_THRESHOLD if benchmark.startswith("build/") else SLOWDOWN_THRESHOLD
#: one-sided Mann-Whitney U significance level
ALPHA = 0.01
FLOAT_TOLERANCE = 1e-9
#: figure names (last part of the id) where a larger value is worse
HIGHER_IS_WORSE = frozenset({"entry_size", "nbytes", "bytes_per_entry", "collisions", "cv_arcs"})
#: figure names that depend on the interpreter and the architecture (object sizes, struct
#: padding; parity_layouts through the memory budget), not only on the code
PLATFORM_FIGURES = frozenset({"entry_size", "nbytes", "bytes_per_entry", "parity_layouts"})
#: environment entries that sizes depend on (the CPU model and count do not change them)
PLATFORM = ("python", "machine")
#: callgrind's figures (harness.metrics.callgrind), per key of a lookup or per entry of a build
COUNT_FIGURES = frozenset(
    f"{event}_per_{unit}" for event in ("instructions", "l1_misses", "ll_misses")
    for unit in ("key", "entry"))
#: growth of a count that is a regression. Instructions in a C function repeat exactly
#: run after run; whole Python calls and misses move by well under 0.5% (the interpreter
#: seeds its random modules from the OS at start, which shifts a few heap objects), so
#: more than 2% is a change of the code or its build
COUNT_TOLERANCE = 0.02
#: ... and by more than this much per key or entry: a figure of a few thousandths is a
#: handful of misses in the whole run, where one more is already several percent
COUNT_FLOOR = 0.01


@dataclass(frozen=True)
class TimingVerdict:
    benchmark: str
    baseline_ratio: float
    current_ratio: float
    p_value: float

    @property
    def change(self) -> float:
        return self.current_ratio / self.baseline_ratio

    @property
    def regressed(self) -> bool:
        return self.change > threshold_for(self.benchmark) and self.p_value < ALPHA


@dataclass(frozen=True)
class FigureVerdict:
    figure: str
    baseline: Figure
    current: Figure

    @property
    def verdict(self) -> str:
        if self.regressed:
            return "REGRESSION"
        grew = (_is_number(self.baseline) and _is_number(self.current)
                and float(self.current) > float(self.baseline))
        return f"grew, within {COUNT_TOLERANCE:.0%}" if grew else "improved"

    @property
    def regressed(self) -> bool:
        if _same(self.baseline, self.current):
            return False
        name = self.figure.rsplit("/", 1)[-1]
        if name in COUNT_FIGURES and _is_number(self.baseline) and _is_number(self.current):
            growth = float(self.current) - float(self.baseline)
            return growth > COUNT_FLOOR and growth > float(self.baseline) * COUNT_TOLERANCE
        if name == "parity_layouts":
            return not set(str(self.baseline).split(",")) <= set(str(self.current).split(","))
        if name in HIGHER_IS_WORSE and _is_number(self.baseline) and _is_number(self.current):
            return float(self.current) > float(self.baseline)
        return True


def _is_number(value: Figure) -> bool:
    return isinstance(value, int | float)


def _same(a: Figure, b: Figure) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return (
            _is_number(a)
            and _is_number(b)
            and math.isclose(float(a), float(b), rel_tol=FLOAT_TOLERANCE)
        )
    return a == b


def judge_timings(current: BenchRun, baseline: BenchRun) -> list[TimingVerdict]:
    """A verdict for every benchmark present in both runs."""
    # scipy is in the test extra with the suite's pytest-benchmark, not in the base install:
    # imported here, so that the gate's help and flag checks work without it.
    from scipy.stats import mannwhitneyu

    verdicts = []
    for benchmark in sorted(current.ratios.keys() & baseline.ratios.keys()):
        now, then = current.ratios[benchmark], baseline.ratios[benchmark]
        if smallest_p_value(len(now), len(then)) >= ALPHA:
            raise UnusableDataError(
                f"{benchmark}: too few samples to judge ({len(now)} now, {len(then)} in the "
                f"baseline): no ordering of them reaches p < {ALPHA}"
            )
        test = mannwhitneyu(now, then, alternative="greater")
        verdicts.append(
            TimingVerdict(
                benchmark, statistics.median(then), statistics.median(now), float(test.pvalue)
            )
        )
    return verdicts


def comparable_figures(current: BenchRun, baseline: BenchRun) -> set[str]:
    """The figures present in both runs that mean the same in both environments."""
    shared = current.figures.keys() & baseline.figures.keys()
    if current.environment == baseline.environment:
        return set(shared)
    shared = {figure for figure in shared if figure.rsplit("/", 1)[-1] not in COUNT_FIGURES}
    if all(current.environment.get(k) == baseline.environment.get(k) for k in PLATFORM):
        return shared
    return {figure for figure in shared if figure.rsplit("/", 1)[-1] not in PLATFORM_FIGURES}


def judge_figures(current: BenchRun, baseline: BenchRun) -> list[FigureVerdict]:
    """A verdict for every figure of both runs that their environments let us compare."""
    return [
        FigureVerdict(figure, baseline.figures[figure], current.figures[figure])
        for figure in sorted(comparable_figures(current, baseline))
    ]


def skipped_by_plan(benchmark: str, skipped: Iterable[str]) -> bool:
    """Whether `benchmark` (a timing or figure id) belongs to a "layout/ring" the run's plan
    left out: its id holds that layout and ring as consecutive parts (build/tuples/1M,
    tuples/1M/nbytes, counts/batch/tuples/1M/instructions_per_key)."""
    parts = benchmark.split("/")
    pairs = {"/".join(parts[i : i + 2]) for i in range(len(parts) - 1)}
    return not pairs.isdisjoint(skipped)


def unmatched(current: BenchRun, baseline: BenchRun) -> tuple[list[str], list[str], list[str]]:
    """(measured now but not in the baseline; in the baseline but not measured now, the
    run's plan not having left it out; in the baseline and left out by the plan now).

    A benchmark that the baseline has and the run lacks is one the run neither measured
    nor says its plan skipped (`BenchRun.skipped`): a test that was removed, renamed,
    deselected or newly skipped, a layout dropped from the registry, a ring of another
    label. The gate fails on those in the baseline's environment."""
    now = current.ratios.keys() | current.figures.keys()
    then = baseline.ratios.keys() | baseline.figures.keys()
    absent = then - now
    planned = {b for b in absent if skipped_by_plan(b, current.skipped)}
    return sorted(now - then), sorted(absent - planned), sorted(planned)
