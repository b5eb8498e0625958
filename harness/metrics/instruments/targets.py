"""A timing against a target: met, missed, or within noise, judged on the figure's interval.

A table that says whether a timed figure meets a goal (the pipe's cost "at most 5 ns" a
key, an algorithm "at least 5x faster" than another) says it of the figure's interval, not
of its median alone: a median a hair past the target, inside an interval that holds the
target, is noise, not a finding. The rule is `harness.core.noise.judge_target`'s; this
module makes the interval from what a result kept and the cell that shows both:

- a per-round difference (`difference_estimate`): the bootstrap interval of the median of
  its rounds, at `noise.CONFIDENCE`;
- a ratio of two timings of one run (`ratio_estimate`): the bootstrap interval of the ratio
  of their medians, each side's rounds resampled on its own (`noise.ratio_of_medians`:
  the pairing of interleaved rounds is not assumed, so the interval is never narrower
  than the rounds allow);
- a timing kept without its rounds (results written before rounds were kept): the widest
  figure its min-max spread allows, named as such.
"""

from __future__ import annotations

from collections.abc import Callable

from harness.core import noise
from harness.core.tables import Cell
from harness.metrics.instruments.timing import Timing

#: how a verdict cell names where its interval came from
INTERVAL_BASIS = {"rounds": f"{noise.CONFIDENCE:.0%} interval",
                  "spread": "the rounds' range; rounds not kept"}


def difference_estimate(difference: Timing) -> noise.Estimate:
    """A per-round difference's median with its interval: from its rounds where the result
    kept them, else its min-max."""
    if difference.samples:
        return noise.median_interval(difference.samples)
    # The range holds the median it is given with, even from a file that says otherwise.
    return noise.Estimate(difference.median, min(difference.min, difference.median),
                          max(difference.max, difference.median), "spread")


def ratio_estimate(numerator: Timing, denominator: Timing) -> noise.Interval:
    """numerator / denominator, the ratio of their medians, with its interval: from both
    timings' rounds where the result kept them, else from their min-max spreads."""
    if numerator.samples and denominator.samples:
        return noise.ratio_of_medians(denominator.samples, numerator.samples)
    return noise.spread_ratio(denominator.median, denominator.min, denominator.max,
                              numerator.median, numerator.min, numerator.max)


def verdict_cell(low: float, high: float, basis: noise.Basis, goal: noise.Goal,
                 target: float, shown: Callable[[float], str]) -> Cell:
    """"met", "missed" or "within noise" for an interval against a target, followed by
    the interval (each end formatted by `shown`) and where it came from; the cell's value
    is the verdict alone."""
    verdict = noise.judge_target(low, high, goal, target)
    return Cell(f"{verdict} ({shown(low)} to {shown(high)}, {INTERVAL_BASIS[basis]})",
                verdict)
