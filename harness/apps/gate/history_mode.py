"""History mode: the new run against the run history of this machine, with change-point
detection for timings.

Deterministic figures are compared with the newest earlier run of the same scenario. A
timing (ns per key over the in-run reference) is judged over a window of earlier runs:

- the *recent segment* is the newest runs, the new one included, each slower than the
  threshold times the median of the runs before them;
- two runs or more there: a step that persisted, confirmed by a one-sided Mann-Whitney U
  test of the earlier window against the segment (exact: every way of drawing the
  segment's ranks is counted), a regression when p < ALPHA;
- the new run alone: a regression only when its fastest round is slower than every
  earlier run's median (a lone run outside all the history, not yet a confirmed step).

Too short a history (fewer than MIN_RUNS earlier runs) judges no timing, and says so.
"""

from __future__ import annotations

import itertools
import json
import math
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.apps.benchgate.decide import SLOWDOWN_THRESHOLD
from harness.apps.gate.figures import Observed, result_figures
from harness.apps.gate.verdicts import NOT_JUDGED, PASS, REGRESSION, UNREFERENCED, Check
from harness.report.history import entries, machine_name
from harness.run.gate_table import GateThresholds

WINDOW = 12
MIN_RUNS = 3
ALPHA = 0.05
#: past this many ways of drawing the ranks, the normal approximation
EXACT_LIMIT = 50_000


def earlier_runs(history: Path, scenario: str) -> list[dict[str, Any]]:
    """The newest WINDOW results of the scenario in this machine's history, oldest first."""
    found: list[dict[str, Any]] = []
    for entry in reversed(entries(history, machine_name())):
        try:
            document = json.loads(entry.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(document, dict) and isinstance(document.get("scenario"), dict) and (
                document["scenario"].get("name") == scenario):
            found.append(document)
        if len(found) == WINDOW:
            break
    return found[::-1]


def mann_whitney_greater(before: Sequence[float], after: Sequence[float]) -> float:
    """One-sided p that `after` is drawn from larger values than `before` (ties counted
    half), exact by enumeration when small, else by the normal approximation."""
    pooled = sorted([*before, *after])
    ranks = {v: statistics.mean(i + 1 for i, w in enumerate(pooled) if w == v) for v in pooled}
    observed = sum(ranks[v] for v in after)
    all_ranks = [ranks[v] for v in [*before, *after]]
    n, k = len(all_ranks), len(after)
    if math.comb(n, k) <= EXACT_LIMIT:
        sums = [sum(c) for c in itertools.combinations(all_ranks, k)]
        return sum(1 for s in sums if s >= observed - 1e-9) / len(sums)
    mean = k * (n + 1) / 2
    sd = math.sqrt(len(before) * k * (n + 1) / 12)
    return 0.5 * math.erfc((observed - mean) / sd / math.sqrt(2))


def judge_timing(series: Sequence[Observed], new: Observed, subject: str,
                 thresholds: GateThresholds) -> Check:
    limit = max(thresholds.ns_per_key, SLOWDOWN_THRESHOLD)  # runs apart, as a baseline's
    if not new.referenced:
        return Check(subject, "ns_per_key", None, new.value, None, None, None, limit,
                     NOT_JUDGED, note=UNREFERENCED)
    values = [o.value for o in series]
    if len(values) < MIN_RUNS:
        return Check(subject, "ns_per_key", None, new.value, None, None, None, limit,
                     NOT_JUDGED, note=f"{len(values)} earlier runs in the history, "
                                      f"{MIN_RUNS} needed")
    recent = [new.value]
    for at in range(len(values) - 1, MIN_RUNS - 1, -1):
        if values[at] > limit * statistics.median(values[:at]):
            recent.insert(0, values[at])
        else:
            break
    before = values[:len(values) - (len(recent) - 1)]
    level = statistics.median(before)
    ratio = statistics.median(recent) / level if level > 0 else None
    if len(recent) >= 2:
        p = mann_whitney_greater(before, recent)
        regressed = ratio is not None and ratio > limit and p < ALPHA
        note = (f"step over the last {len(recent)} runs against {len(before)} before; "
                f"Mann-Whitney p = {p:.3g}")
    else:
        fastest = new.low if new.low is not None else new.value
        regressed = ratio is not None and ratio > limit and fastest > max(before)
        note = (f"the new run against {len(before)} earlier runs: its fastest round "
                f"{'above' if fastest > max(before) else 'within'} their medians")
    return Check(subject, "ns_per_key", level, new.value, ratio, None, None, limit,
                 REGRESSION if regressed else PASS, note=note)


def series_of(documents: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], list[Observed]]:
    found: dict[tuple[str, str], list[Observed]] = {}
    for document in documents:
        for key, observed in result_figures(document).items():
            found.setdefault(key, []).append(observed)
    return found
