"""One verdict per figure: the old and new values, their ratio, and whether it regressed.

A figure regresses when new / old exceeds its threshold (`GateThresholds`), except:
- agreement, which must not drop at all (exact), and `routes_as_base` (A/B: the share of
  keys the changed build routes as the base does), which must stay 1;
- a timing, judged by its interval: A/B's paired bootstrap interval (a regression when its
  lower end is above the threshold, as the A/B gate of the harness's own suite decides,
  harness.apps.benchgate.ab_decide), or against a baseline only on the same CPU and only
  when the ranges of the two runs' rounds lie apart by more than the threshold (the new
  run's fastest round over the old run's slowest), a threshold of at least the bench
  gate's 1.5x for runs apart (`SLOWDOWN_THRESHOLD`): runs minutes apart on a shared
  machine differ by far more than the pairs of one job (the example's C ring read
  0.23-0.71x our reference in runs of the same code), so only a large change is judged;
  a layout's timing (over the random-access floor) is shown, not judged;
- a figure one side lacks, or whose old value is 0, is `unknown` (named, never 0).
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.apps.benchgate.decide import SLOWDOWN_THRESHOLD
from harness.apps.gate.figures import Observed
from harness.run.gate_table import GateThresholds

PASS, REGRESSION, UNKNOWN, NOT_JUDGED = "pass", "regression", "unknown", "not judged"


@dataclass(frozen=True)
class Check:
    subject: str
    figure: str
    old: float | None
    new: float | None
    #: new over old (A/B timings: the paired median ratio)
    ratio: float | None
    #: the ratio's interval, None for an exact figure
    low: float | None
    high: float | None
    threshold: float | None
    verdict: str
    #: A/B timings: the smallest slowdown this run would have flagged
    detectable: float | None = None
    pairs: int | None = None
    note: str = ""

    def line(self) -> str:
        """The one line a regression prints."""
        shown = f"{self.ratio:.3f}x" if self.ratio is not None else "changed"
        bound = (f" (interval {self.low:.3f}-{self.high:.3f})"
                 if self.low is not None and self.high is not None else "")
        limit = f", threshold {self.threshold:g}x" if self.threshold is not None else ""
        values = ""
        if self.old is not None and self.new is not None:
            values = f": {_value(self.old)} -> {_value(self.new)}"
        note = f"; {self.note}" if self.note else ""
        return f"{self.subject} {self.figure} {shown}{bound}{limit}{values}{note}"


def _value(value: float) -> str:
    return f"{value:.6g}"


def threshold_of(figure: str, thresholds: GateThresholds) -> float | None:
    return getattr(thresholds, figure, None) if figure in GateThresholds.names() else None


def judge_exact(old: Observed | None, new: Observed | None, figure: str, subject: str,
                thresholds: GateThresholds) -> Check:
    """A deterministic figure (bytes, agreement, balance, movement) of one subject."""
    if old is None or new is None:
        missing = "the old run" if old is None else "the new run"
        return Check(subject, figure, old.value if old else None,
                     new.value if new else None, None, None, None,
                     threshold_of(figure, thresholds), UNKNOWN, note=f"not in {missing}")
    if figure in ("agreement", "routes_as_base"):
        verdict = REGRESSION if new.value < old.value else PASS
        ratio = new.value / old.value if old.value else None
        return Check(subject, figure, old.value, new.value, ratio, None, None, None, verdict,
                     note="must stay exact" if verdict == REGRESSION else "")
    limit = threshold_of(figure, thresholds)
    if old.value <= 0:
        return Check(subject, figure, old.value, new.value, None, None, None, limit,
                     PASS if new.value <= old.value else UNKNOWN,
                     note="old value 0: no ratio")
    ratio = new.value / old.value
    verdict = REGRESSION if limit is not None and ratio > limit else PASS
    return Check(subject, figure, old.value, new.value, ratio, None, None, limit, verdict)


def judge_ranges(old: Observed | None, new: Observed | None, subject: str,
                 thresholds: GateThresholds, comparable: bool, why: str) -> Check:
    """A timing against an earlier run (baseline, history): judged only on the same
    machine (`comparable`), and a regression only when the ratio of medians passes the
    threshold and the new run's fastest round is slower than the old run's slowest."""
    # Runs minutes apart on a shared machine: the bench gate's own floor for such a
    # comparison (harness.apps.benchgate.decide), never the A/B threshold of one job.
    limit = max(thresholds.ns_per_key, SLOWDOWN_THRESHOLD)
    if old is None or new is None:
        return judge_exact(old, new, "ns_per_key", subject, thresholds)
    ratio = new.value / old.value if old.value > 0 else None
    low = high = None
    if ratio is not None and None not in (old.low, old.high, new.low, new.high):
        assert old.low and old.high and new.low is not None and new.high is not None
        low, high = new.low / old.high, new.high / old.low
    if not comparable:
        return Check(subject, "ns_per_key", old.value, new.value, ratio, low, high, limit,
                     NOT_JUDGED, note=why)
    if not new.referenced:
        return Check(subject, "ns_per_key", old.value, new.value, ratio, low, high, limit,
                     NOT_JUDGED, note=UNREFERENCED)
    apart = low is not None and low > limit
    verdict = REGRESSION if ratio is not None and ratio > limit and apart else PASS
    return Check(subject, "ns_per_key", old.value, new.value, ratio, low, high, limit,
                 verdict, note="interval: the new run's rounds over the old run's")


UNREFERENCED = ("a layout's time over the random-access floor: shown, not judged (no "
                "in-run reference)")
