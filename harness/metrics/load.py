"""Load: how the scenario's requests spread over servers (uniform keys or zipf traffic).

Each request goes to its key's owner; a server's load is its requests per
unit of weight. Under uniform keys this is key balance; under zipf traffic a
few hot keys dominate, so the hottest server can carry far more than its
share whatever the ring's arcs are (the reason for bounded loads).

- `cv`: population std / mean of load per unit weight.
- `max_over_mean`: the hottest server's load per unit weight over the mean
  (peak-to-mean, the Maglev paper's figure).
- `hottest_server`, `hottest_share`: the server with the most requests per unit
  weight (the one that sets the peak-to-mean) and its fraction of all requests.
  Results written before `requests_per_server` was recorded named the server with
  the most requests, whatever its weight; with equal weights the two are the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from harness.core.servers import Server
from harness.core.stats import PerWeight, is_weighted, per_weight
from harness.core.tables import Answer, Section, Table, count, literal, number, pct, text
from harness.metrics.base import MetricBase, answered_runs

if TYPE_CHECKING:  # the metric's interface; the measuring code needs none of these
    from harness.core.model import Result
    from harness.metrics.context import RunContext, RunPlan, Scope


@dataclass
class Load:
    #: "uniform" or "zipf": the traffic the requests were drawn from
    distribution: str
    requests: int
    servers: int
    cv: float
    max_over_mean: float
    hottest_share: float
    hottest_server: str
    #: requests each server received, and its weight (None in older results)
    requests_per_server: tuple[int, ...] | None = None
    weights: tuple[float, ...] | None = None

    def per_weight(self) -> PerWeight | None:
        """Requests per unit weight (min, max, mean, peak, hottest), where counts are known."""
        if self.requests_per_server is None:
            return None
        return per_weight(self.requests_per_server, self.weights or [1.0] * self.servers)


def load_of(owners: npt.NDArray[np.uint16], servers: Sequence[Server],
            distribution: str) -> Load:
    """The load of requests routed to `owners` (indexes into `servers`)."""
    weights = np.array([s.weight for s in servers], dtype=np.float64)
    requests = np.bincount(owners, minlength=len(weights))
    spread = per_weight(requests, weights)
    return Load(
        distribution=distribution, requests=int(requests.sum()),
        servers=len(weights), cv=spread.cv, max_over_mean=spread.peak_to_mean,
        hottest_share=spread.hottest_share, hottest_server=servers[spread.hottest].name,
        requests_per_server=tuple(int(r) for r in requests),
        weights=tuple(float(w) for w in weights),
    )


class LoadMetric(MetricBase):
    """Per-server request load under the scenario's traffic."""

    name: ClassVar[str] = "load"
    scope: ClassVar[Scope] = "run"
    needs: ClassVar[frozenset[str]] = frozenset()
    record_type: ClassVar[Any] = Load

    def steps(self, plan: RunPlan) -> int:
        return 0

    def measure(self, context: RunContext) -> Load:
        return load_of(context.owners, context.servers, context.settings.distribution)

    def answers(self, result: Result) -> list[Answer]:
        """Per sweep point under skewed traffic: the hottest server's share of requests and
        the peak load (under uniform traffic the Balance line already says it)."""
        lines = []
        skewed = [r for r in result.runs
                  if r.figure(self.name) and r.figure(self.name).distribution != "uniform"]
        for run in answered_runs(skewed):
            load: Load = run.figure(self.name)
            share, peak = pct(load.hottest_share).text, number(load.max_over_mean).text
            lines.append(Answer(
                "Load", f"{literal(run.label)}, {literal(load.distribution)} traffic: the "
                f"hottest server, {literal(load.hottest_server)}, takes {share} of requests, "
                f"{peak}x the mean load per unit weight.", (share, peak)))
        return lines

    def sections(self, result: Result) -> list[Section]:
        measured = [(run, load) for run in result.runs
                    if (load := run.figure(self.name)) is not None]
        if not measured:
            return []
        if not any(is_weighted(load.weights) for _, load in measured):
            return [Section("Load", tables=[Table.of(
                ["ring", "traffic", "requests", "cv of load", "peak-to-mean",
                 "hottest share", "hottest server"],
                [[text(run.label), text(load.distribution), count(load.requests),
                  pct(load.cv), number(load.max_over_mean), pct(load.hottest_share),
                  text(load.hottest_server)] for run, load in measured])])]
        rows = []
        for run, load in measured:
            spread = load.per_weight()
            assert spread is not None, "weights are recorded with the counts"
            raw = load.requests_per_server or ()
            rows.append([text(run.label), text(load.distribution), count(load.requests),
                         pct(load.cv), number(spread.min, 1), number(spread.max, 1),
                         number(spread.mean, 1), number(load.max_over_mean),
                         text(load.hottest_server), pct(load.hottest_share),
                         count(min(raw)), count(max(raw))])
        return [Section("Load", tables=[Table.of(
            ["ring", "traffic", "requests", "cv of load", "requests/weight min",
             "requests/weight max", "requests/weight mean", "peak-to-mean",
             "hottest server", "hottest share", "min requests (raw)", "max requests (raw)"],
            rows, notes=["Load is judged per unit of weight: a server's requests divided "
                         "by its weight. The hottest server is the one with the most "
                         "requests per unit weight, the one that sets the peak-to-mean; "
                         "its share is of all requests. The raw columns are the fewest "
                         "and most requests any server received, whatever its weight."])])]
