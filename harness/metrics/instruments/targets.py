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

A table or answer that names the fastest of several timings names it by the same rule
(`leaders`): one form is the fastest only when the runner-up over it (the ratio of their
medians) has an interval entirely above 1; otherwise the leaders tie within noise and
are named together. The form of the lowest median still serves as the base of a "vs"
column, labelled as the lowest median, not as a finding.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

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


def clearly_slower(slower: Timing, faster: Timing) -> tuple[bool, noise.Interval]:
    """Whether `slower` takes longer than `faster` beyond their noise: the ratio of their
    medians (slower over faster) "at most 1" is missed, its whole interval above 1 (an
    end on 1 is not clear). With the interval, to show."""
    interval = ratio_estimate(slower, faster)
    return noise.judge_target(interval.low, interval.high, "at most", 1.0) == "missed", interval


@dataclass(frozen=True)
class Leaders:
    """The fastest of named timings (lower is faster), as far as their noise tells.

    `names[0]` has the lowest median (the first listed of equal medians): the base a "vs"
    column may use. The other names are every timing not clearly slower than it
    (`clearly_slower`), lowest median first: one name is a fastest clear of the rest,
    several a tie within noise. `runner_up` is the second of a tie, else the timing of the
    second lowest median, and `margin` its ratio over the lowest (None when only one was
    timed)."""

    names: tuple[str, ...]
    medians: tuple[float, ...]
    runner_up: str | None = None
    margin: noise.Interval | None = None

    @property
    def clear(self) -> bool:
        """One fastest, clear of every other timing by its interval."""
        return len(self.names) == 1 and self.runner_up is not None

    @property
    def base(self) -> str:
        """The timing of the lowest median."""
        return self.names[0]


def leaders(timings: Sequence[tuple[str, Timing]]) -> Leaders:
    """The fastest of `timings`, or the leaders tied within noise (see `Leaders`)."""
    if not timings:
        raise ValueError("naming a fastest needs one or more timings")
    ranked = sorted(timings, key=lambda pair: pair[1].median)
    (name, lowest), rest = ranked[0], ranked[1:]
    tied = [(name, lowest)] + [(other, timing) for other, timing in rest
                              if not clearly_slower(timing, lowest)[0]]
    # The margin shown: against the second of a tie, else against the runner-up.
    nearest = tied[1] if len(tied) > 1 else rest[0] if rest else None
    runner_up, margin = ((nearest[0], clearly_slower(nearest[1], lowest)[1]) if nearest
                         else (None, None))
    return Leaders(tuple(n for n, _ in tied), tuple(t.median for _, t in tied),
                   runner_up, margin)


def and_list(items: Sequence[str]) -> str:
    """"a", "a and b", "a, b and c"."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def leaders_note(what: str, found: Leaders, shown: Callable[[str], str],
                 unit: str) -> str | None:
    """A table note naming the fastest `what` (e.g. "batch lookup") by `leaders`' rule,
    with the runner-up's ratio and its interval; None when only one was timed. `shown`
    gives a name as the table shows it (escaped); medians are shown to one decimal."""
    if found.runner_up is None or found.margin is None:
        return None
    margin = found.margin
    ratio = (f"{shown(found.runner_up)} / {shown(found.base)} {margin.ratio:,.2f}x, "
             f"{margin.low:,.2f}x to {margin.high:,.2f}x ({INTERVAL_BASIS[margin.basis]})")
    if found.clear:
        return (f"Fastest {what}: {shown(found.base)} ({found.medians[0]:,.1f} {unit}), "
                f"clear of the runner-up by its interval: {ratio}, entirely above 1.")
    medians = and_list([f"{m:,.1f}" for m in found.medians])
    return (f"Fastest {what}: none clear of the rest: "
            f"{and_list([shown(n) for n in found.names])} are within noise of each other "
            f"({medians} {unit}; each one's ratio over the lowest median holds 1 in its "
            f"interval; {ratio}).")
