"""The metric registry: every metric family, in the order the runner measures and reports.

A metric is one module with one class following `Metric` (`harness.metrics.base`,
which says what it declares); adding a metric is one module plus one line below.
A metric that cannot run on every machine overrides `check()`, returning why not
(or None); scenario validation asks it before any work.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.core.errors import UnknownNameError
from harness.metrics.balance import BalanceMetric
from harness.metrics.base import Metric
from harness.metrics.clients import ClientsMetric
from harness.metrics.collisions import CollisionsMetric
from harness.metrics.comparison import ComparisonMetric
from harness.metrics.counts import CountsMetric
from harness.metrics.equivalence import EquivalenceMetric
from harness.metrics.foreign import ForeignMetric
from harness.metrics.hostile_keys import HostileKeysMetric
from harness.metrics.hot_keys import HotKeysMetric
from harness.metrics.load import LoadMetric
from harness.metrics.memory import MemoryMetric
from harness.metrics.migration import MigrationMetric
from harness.metrics.movement import MovementMetric
from harness.metrics.process import ProcessMetric
from harness.metrics.removals import RemovalsMetric
from harness.metrics.replication import ReplicationMetric
from harness.metrics.throughput import ThroughputMetric

METRICS: list[Metric] = [
    CollisionsMetric(),
    BalanceMetric(),
    EquivalenceMetric(),
    LoadMetric(),
    MovementMetric(),
    ReplicationMetric(),
    HotKeysMetric(),
    ProcessMetric(),
    MigrationMetric(),
    ComparisonMetric(),
    RemovalsMetric(),
    HostileKeysMetric(),
    MemoryMetric(),
    ThroughputMetric(),
    ForeignMetric(),
    ClientsMetric(),
    CountsMetric(),
]
BY_NAME: dict[str, Metric] = {metric.name: metric for metric in METRICS}
METRIC_NAMES: tuple[str, ...] = tuple(BY_NAME)
#: metrics configured by a scenario table of their name; on when that table is present
TABLE_METRICS: tuple[str, ...] = ("process", "migration", "comparison", "equivalence",
                                  "removals", "hostile_keys", "replication", "hot_keys",
                                  "clients")
#: metrics on by default in a scenario: all but those, counts (it needs valgrind, and
#: adds about ten seconds of CPU per layout) and foreign (on when a foreign peer is named)
DEFAULT_METRICS: tuple[str, ...] = tuple(
    name for name in METRIC_NAMES if name not in (*TABLE_METRICS, "counts", "foreign"))


def get_metric(name: str) -> Metric:
    try:
        return BY_NAME[name]
    except KeyError:
        raise UnknownNameError("metric", name, list(BY_NAME)) from None


def unavailable(name: str) -> str | None:
    """Why the named metric cannot run on this machine (its `check()`), or None."""
    return get_metric(name).check()


def record_type(name: str) -> Any:
    """The typed record a metric stores, for reading results."""
    return get_metric(name).record_type


def selected(names: Sequence[str]) -> list[Metric]:
    """The named metrics, in registry order (the order they run and report)."""
    return [metric for metric in METRICS if metric.name in set(names)]
