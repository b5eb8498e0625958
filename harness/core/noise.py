"""Timing noise: is a difference between two timings a finding, or inside the noise?

Timings on a shared machine move from round to round and from run to run. A timing is
kept with the ns per key of each of its rounds (`Timing.samples`), and two timings are
compared by the ratio of their medians (B over A: 1.25 = B is 25% slower) with an
interval:

- `ratio_of_medians`: a percentile bootstrap of median(B) / median(A), resampling each
  side's rounds on its own (two runs are not paired round by round), two-sided at
  `CONFIDENCE`, `BOOTSTRAP_RESAMPLES` resamples from a fixed seed (the same data gives
  the same report);
- `paired_ratio`: the same for (A, B) pairs taken back to back (the A/B bench gate's
  samples, `harness.apps.benchgate.ab_decide`): the median of the pairs' log ratios,
  bootstrapped over the pairs;
- `spread_ratio`: for timings kept without their rounds (results written before rounds
  were kept): the widest ratio their min-max spreads allow, B's min over A's max to B's
  max over A's min. It is no confidence interval, only what the spreads cannot exclude.

The rounds of one run do not see everything that differs between two runs: the load of
the machine at that minute, and where each process's arrays landed in memory (the A/B gate
measured unchanged code 0.96-1.04x between two processes on a small ring and 0.89-1.15x on
a ring larger than the L2 cache, with intervals too narrow to cover 1). So a difference is
a finding only when the whole interval lies beyond `BETWEEN_RUNS` either way (`judge`);
otherwise it is labelled "within noise".

A figure judged against a target (the pipe's cost "at most 5 ns" a key, an algorithm "at
least 5x faster" than another) follows the same rule (`judge_target`): "met" only when the
whole interval is on the target's side, "missed" only when the whole interval is past it,
and "within noise" when the interval holds the target, whichever side its point estimate
falls on. A figure of one run that may be negative (a per-round difference of two timings)
has its median's interval from `median_interval`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

CONFIDENCE = 0.99
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20260501
#: the most rounds a sample may hold: a scenario's repeats go up to 1,000, and a bootstrap
#: holds BOOTSTRAP_RESAMPLES times a sample's rounds (16 MB here); more is no run's
MAX_SAMPLES = 1000
#: a ratio of two runs' timings inside [1 / BETWEEN_RUNS, BETWEEN_RUNS] is never a finding:
#: what separate processes of unchanged code differ by (module doc)
BETWEEN_RUNS = 1.15

Verdict = Literal["slower", "faster", "within noise"]
#: a figure against a target: met, missed, or an interval across the target
TargetVerdict = Literal["met", "missed", "within noise"]
#: which side of its target a figure must be on
Goal = Literal["at most", "at least"]
#: how an interval was made: from both sides' rounds, or from their min-max spreads only
Basis = Literal["rounds", "spread"]


@dataclass(frozen=True)
class Interval:
    """A ratio (B over A) and its interval."""

    ratio: float
    low: float
    high: float
    basis: Basis = "rounds"


@dataclass(frozen=True)
class Estimate:
    """A median in its own unit (ns per key; a difference may be negative) and its
    interval."""

    median: float
    low: float
    high: float
    basis: Basis = "rounds"


def _quantiles(estimates: np.ndarray, confidence: float) -> tuple[float, float]:
    tail = (1 - confidence) / 2
    low, high = np.quantile(estimates, [tail, 1 - tail])
    return float(low), float(high)


def _positive(samples: Sequence[float], side: str) -> np.ndarray:
    if len(samples) > MAX_SAMPLES:
        raise ValueError(f"{side}: {len(samples)} rounds, more than a run takes "
                         f"({MAX_SAMPLES})")
    array = np.asarray(samples, dtype=np.float64)
    if array.ndim != 1 or not len(array) or not (np.isfinite(array).all()
                                                  and (array > 0).all()):
        raise ValueError(f"{side}: a ratio of timings needs one or more finite positive "
                         f"samples (got {len(array)})")
    return array


def ratio_of_medians(a: Sequence[float], b: Sequence[float],
                     confidence: float = CONFIDENCE,
                     resamples: int = BOOTSTRAP_RESAMPLES) -> Interval:
    """median(b) / median(a), with a bootstrap interval resampling each side on its own."""
    first, second = _positive(a, "A"), _positive(b, "B")
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    medians_a = np.median(first[rng.integers(0, len(first), (resamples, len(first)))], axis=1)
    medians_b = np.median(second[rng.integers(0, len(second), (resamples, len(second)))],
                          axis=1)
    low, high = _quantiles(np.log(medians_b / medians_a), confidence)
    ratio = float(np.median(second) / np.median(first))
    # The interval holds the ratio it is given with (a percentile bootstrap's ends may
    # miss an even-sized sample's median by a hair).
    return Interval(ratio, min(math.exp(low), ratio), max(math.exp(high), ratio))


def paired_ratio(pairs: Sequence[tuple[float, float]], confidence: float = CONFIDENCE,
                 resamples: int = BOOTSTRAP_RESAMPLES) -> Interval:
    """The median ratio of (A, B) pairs timed back to back, with its bootstrap interval."""
    then = _positive([a for a, _ in pairs], "A")
    now = _positive([b for _, b in pairs], "B")
    logs = np.log(now / then)
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    medians = np.median(logs[rng.integers(0, len(logs), size=(resamples, len(logs)))], axis=1)
    low, high = _quantiles(medians, confidence)
    return Interval(math.exp(float(np.median(logs))), math.exp(low), math.exp(high))


def spread_ratio(a_median: float, a_min: float, a_max: float,
                 b_median: float, b_min: float, b_max: float) -> Interval:
    """B over A from medians and min-max spreads alone: the widest ratio they allow."""
    values = (a_median, a_min, a_max, b_median, b_min, b_max)
    if not all(math.isfinite(v) and v > 0 for v in values):
        raise ValueError("a ratio of timings needs finite positive medians and spreads")
    ratio = b_median / a_median
    return Interval(ratio, min(b_min / a_max, ratio), max(b_max / a_min, ratio), "spread")


def judge_target(low: float, high: float, goal: Goal, target: float) -> TargetVerdict:
    """A figure whose interval is [low, high] against a target it must be `goal` (at most
    or at least): "met" only when the whole interval is on the target's side (an end on
    the target counts as met), "missed" only when the whole interval is past it, else
    "within noise"."""
    if not (math.isfinite(low) and math.isfinite(high) and math.isfinite(target)):
        raise ValueError(f"a verdict needs a finite interval and target (got {low} to "
                         f"{high} against {target})")
    if low > high:
        raise ValueError(f"an interval's low end {low} is above its high end {high}")
    if goal == "at most":
        return "met" if high <= target else "missed" if low > target else "within noise"
    return "met" if low >= target else "missed" if high < target else "within noise"


def judge(interval: Interval, between_runs: float = BETWEEN_RUNS) -> Verdict:
    """A finding only when the whole interval lies beyond the between-runs noise: a ratio
    that misses "at most `between_runs`" is slower, one that misses "at least its
    inverse" faster."""
    if judge_target(interval.low, interval.high, "at most", between_runs) == "missed":
        return "slower"
    if judge_target(interval.low, interval.high, "at least", 1 / between_runs) == "missed":
        return "faster"
    return "within noise"


def relative_half_width(samples: Sequence[float], confidence: float = CONFIDENCE,
                        resamples: int = BOOTSTRAP_RESAMPLES) -> tuple[float, float]:
    """One run's median's own interval, as fractions of the median: (low, high), e.g.
    (0.97, 1.04). What the history keeps of a timing's rounds."""
    interval = _median_bootstrap(_positive(samples, "rounds"), confidence, resamples)
    return interval.low / interval.median, interval.high / interval.median


def median_interval(samples: Sequence[float], confidence: float = CONFIDENCE,
                    resamples: int = BOOTSTRAP_RESAMPLES) -> Estimate:
    """The median of one run's rounds of a figure of any sign (a per-round difference of
    two timings), with its percentile bootstrap interval over the rounds."""
    if len(samples) > MAX_SAMPLES:
        raise ValueError(f"rounds: {len(samples)}, more than a run takes ({MAX_SAMPLES})")
    array = np.asarray(samples, dtype=np.float64)
    if array.ndim != 1 or not len(array) or not np.isfinite(array).all():
        raise ValueError(f"rounds: a median's interval needs one or more finite samples "
                         f"(got {len(array)})")
    return _median_bootstrap(array, confidence, resamples)


def _median_bootstrap(array: np.ndarray, confidence: float, resamples: int) -> Estimate:
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    medians = np.median(array[rng.integers(0, len(array), (resamples, len(array)))], axis=1)
    low, high = _quantiles(medians, confidence)
    median = float(np.median(array))
    # The interval holds the median it is given with (see ratio_of_medians).
    return Estimate(median, min(low, median), max(high, median))
