"""The rules of the A/B gate: a ratio and its interval per benchmark, and what regresses.

Each pair is one sample of the base and one of the candidate, taken back to back
(ab_session.py); its log ratio log(candidate / base) is what noise mostly cancels from.
Per benchmark:
- `ratio`: exp of the median of the pairs' log ratios (candidate time over base time;
  1.25 = 25% slower). The median, because a pair that one busy moment hit on one side
  only is an outlier, and the median ignores a few of those;
- its interval: a percentile bootstrap of that median (BOOTSTRAP_RESAMPLES resamples of
  the pairs, a fixed seed so that the same data gives the same report), two-sided at
  CONFIDENCE;
- REGRESSION when the interval's lower end is above the threshold (THRESHOLD; builds
  BUILD_THRESHOLD; anything on a ring bigger than the L2 cache MEMORY_BOUND_THRESHOLD):
  the run is confident the candidate is slower by more than that. The threshold is there
  because two processes of the same code do not time exactly alike: where their arrays
  land in memory differs, and unchanged code measured 0.96-1.04x between the two sides on
  the 16k ring and 0.89-1.15x on the 1M ring, with intervals too narrow to cover 1
  (docs/guide/ab-gate.md);
- `detectable`: the minimum detectable effect of the run, the smallest slowdown that this
  run's interval width would still have flagged: a ratio r whose interval keeps this one's
  shape has its lower end at r * lower / ratio, above the threshold once
  r > threshold * ratio / lower.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.apps.benchgate.plan import MEMORY_BOUND_POINTS, PLANS
from harness.core import noise
from harness.core.noise import paired_ratio

#: a ratio and its interval (the gate's reports and tests name it from here)
Interval = noise.Interval

#: a lower interval end above this is a regression (lookups and the random-access floor)
THRESHOLD = 1.05
#: builds allocate and free megabytes per round: the allocator's and the kernel's page
#: state move their times more than a lookup's between two processes
BUILD_THRESHOLD = 1.10
CONFIDENCE = noise.CONFIDENCE
BOOTSTRAP_RESAMPLES = noise.BOOTSTRAP_RESAMPLES


#: anything timed on a ring too big for the L2 cache (its id ends with that ring's label):
#: where the ring's pages land in physical memory (which L3 sets they share with the other
#: side's and the neighbours', whether numpy got huge pages for them) is fixed per process
#: and differs between the two, so unchanged code read 0.89-1.15x there, with tight
#: intervals (scalar/cffi-aligned-64/1M 1.146x [1.101, 1.199], batch/numpy-aligned-64/1M
#: 1.101x [1.054, 1.151]), pinned to one CPU or not. More pairs narrow the interval around that
#: offset without removing it; only the threshold can absorb it
MEMORY_BOUND_THRESHOLD = 1.15
MEMORY_BOUND_RINGS = frozenset(
    ring.label for plan in PLANS.values() for ring in plan.rings
    if ring.points >= MEMORY_BOUND_POINTS)


def threshold_for(benchmark: str) -> float:
    if benchmark.rsplit("/", 1)[-1] in MEMORY_BOUND_RINGS:
        return MEMORY_BOUND_THRESHOLD
    return BUILD_THRESHOLD if benchmark.startswith("build/") else THRESHOLD


def paired_interval(pairs: list[tuple[float, float]]) -> Interval:
    """The median ratio of (base, candidate) pairs, with its bootstrap interval (the one
    bootstrap of timings, `harness.core.noise`, which `compare` and the history use too)."""
    return paired_ratio(pairs, CONFIDENCE, BOOTSTRAP_RESAMPLES)


def detectable_effect(benchmark: str, interval: Interval) -> float:
    """The smallest slowdown (as a ratio) this run's interval width would have flagged."""
    return threshold_for(benchmark) * interval.ratio / interval.low


def sampling_need(interval: Interval) -> float:
    """The detectable effect this interval would give at the lookups' threshold: what the
    sampler compares with the wanted sensitivity, so that a build (threshold 1.10x) stops
    at the same interval width as a lookup instead of never reaching 1.10x itself."""
    return THRESHOLD * interval.ratio / interval.low


@dataclass(frozen=True)
class PairedVerdict:
    benchmark: str
    interval: Interval
    pairs: int
    #: the two sides' round scales, where they differ (compared per key all the same)
    scales: tuple[int, int]

    @property
    def threshold(self) -> float:
        return threshold_for(self.benchmark)

    @property
    def detectable(self) -> float:
        return detectable_effect(self.benchmark, self.interval)

    @property
    def regressed(self) -> bool:
        return self.interval.low > self.threshold

    @property
    def verdict(self) -> str:
        if self.regressed:
            return "REGRESSION"
        if self.interval.high < 1 / self.threshold:
            return "faster"
        if self.interval.low > 1:
            return "slower, within the threshold"
        return "ok"


def judge_pairs(benchmark: str, pairs: list[tuple[float, float]],
                scales: tuple[int, int]) -> PairedVerdict:
    return PairedVerdict(benchmark, paired_interval(pairs), len(pairs), scales)
