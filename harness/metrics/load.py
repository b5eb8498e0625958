"""Load: how the scenario's requests spread over servers (uniform keys or zipf traffic).

Each request goes to its key's owner; a server's load is its requests per
unit of weight. Under uniform keys this is key balance; under zipf traffic a
few hot keys dominate, so the hottest server can carry far more than its
share whatever the ring's arcs are (the reason for bounded loads).

- `cv`: population std / mean of load per unit weight.
- `max_over_mean`: the hottest server's load per unit weight over the mean
  (peak-to-mean, the Maglev paper's figure).
- `hottest_share`: the fraction of all requests the busiest server receives.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from harness.core.servers import Server
from harness.core.tables import Section, Table, count, number, pct, text
from harness.metrics.base import MetricBase

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


def load_of(owners: npt.NDArray[np.uint16], servers: Sequence[Server],
            distribution: str) -> Load:
    """The load of requests routed to `owners` (indexes into `servers`)."""
    weights = np.array([s.weight for s in servers], dtype=np.float64)
    requests = np.bincount(owners, minlength=len(weights))
    per_weight = requests / weights
    hottest = int(np.argmax(requests))
    return Load(
        distribution=distribution, requests=int(requests.sum()),
        servers=len(weights), cv=float(per_weight.std() / per_weight.mean()),
        max_over_mean=float(per_weight.max() / per_weight.mean()),
        hottest_share=float(requests[hottest] / requests.sum()),
        hottest_server=servers[hottest].name,
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

    def sections(self, result: Result) -> list[Section]:
        rows = [[text(run.label), text(load.distribution), count(load.requests),
                 pct(load.cv), number(load.max_over_mean),
                 pct(load.hottest_share), text(load.hottest_server)]
                for run in result.runs if (load := run.figure(self.name)) is not None]
        if not rows:
            return []
        return [Section("Load", tables=[Table.of(
            ["ring", "traffic", "requests", "cv of load", "peak-to-mean", "hottest share",
             "hottest server"], rows)])]
