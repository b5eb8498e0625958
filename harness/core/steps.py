"""Steps in a figure's history: a change that persists over later runs, not one noisy run.

The history of a figure is its value in each run, oldest first. As asv's step detection
does for benchmark histories, a change is flagged only once later runs confirm it: the
series is cut into segments of values alike (within a relative tolerance of the
segment's median), and a new segment begins where a value leaves the current one and at
least `confirm` runs in a row, it included, agree with each other there. A lone outlier
(one run off, the next one back) is not a step; a change in the newest run, with no run
after it yet, is reported as unconfirmed.

A timing also carries each run's noise band (`bands`: the interval of its median over
that run's rounds). There a change of level is a step only when it clears the noise of
the runs around it: the `confirm` runs of the new level lie wholly beyond (band and
all) the last `confirm` runs of the old one. A level that moves inside the runs' own noise
is not a step, however large its relative change.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Step:
    #: index of the first run of the new level
    at: int
    before: float
    after: float
    #: False: only the newest runs differ so far (fewer than `confirm` of them)
    confirmed: bool

    @property
    def relative(self) -> float | None:
        """The change against the old level (None from a level of 0)."""
        return (self.after - self.before) / self.before if self.before else None


def _alike(a: float, b: float, tolerance: float) -> bool:
    return abs(a - b) <= tolerance * max(abs(a), abs(b))


Band = tuple[float, float]


def _clears(before: Sequence[Band], after: Sequence[Band]) -> bool:
    """Whether every band after lies wholly above, or wholly below, every band before."""
    return (min(low for low, _ in after) > max(high for _, high in before)
            or max(high for _, high in after) < min(low for low, _ in before))


def steps(values: Sequence[float], tolerance: float, confirm: int = 2,
          bands: Sequence[Band | None] | None = None) -> list[Step]:
    """The persistent changes of level in `values` (oldest first); with `bands` (one per
    value, None where a run has none: its value alone), only those clearing the noise."""
    spans: list[Band] = [(v, v) if band is None else (min(band[0], v), max(band[1], v))
                         for v, band in zip(values, bands or [None] * len(values),
                                            strict=True)]
    found: list[Step] = []
    start = 0
    i = 1
    while i < len(values):
        level = statistics.median(values[start:i])
        if _alike(values[i], level, tolerance):
            i += 1
            continue
        run = values[i:i + confirm]
        new_level = statistics.median(run)
        agreeing = all(_alike(v, new_level, tolerance) and not _alike(v, level, tolerance)
                       for v in run)
        if agreeing and bands is not None:
            agreeing = _clears(spans[max(start, i - confirm):i], spans[i:i + confirm])
        if agreeing and len(run) == confirm:
            found.append(Step(i, level, new_level, True))
            start = i
        elif agreeing and i + len(run) == len(values):
            found.append(Step(i, level, new_level, False))
            break
        i += 1
    return found
