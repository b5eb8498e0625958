"""The metric registry: every metric family, in the order the runner measures and reports.

A metric is one module (or, for a family of modules, one package) with one class
following `Metric` (`harness.metrics.base`, which says what it declares: its table,
whether it is on by default, its scenario rules and reference entries); adding a
metric is that module plus one line in `BUILT_IN` below. An installed package adds
metrics the same way through the entry-point group `ring_harness.metrics` (one line
naming its class, which subclasses `MetricBase`); they run and report after ours. A
metric that cannot run on every machine overrides `check()`, returning why not (or
None); the machine check of `run` (`harness.run.machine_check`) asks it before any
work.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.core.errors import UnknownNameError
from harness.metrics.balance import BalanceMetric
from harness.metrics.base import METRIC_DEFAULTS, Metric
from harness.metrics.clients.metric import ClientsMetric
from harness.metrics.collisions import CollisionsMetric
from harness.metrics.comparison.metric import ComparisonMetric
from harness.metrics.counts import CountsMetric
from harness.metrics.equivalence import EquivalenceMetric
from harness.metrics.fleet.metric import FleetMetric, RolloutMetric
from harness.metrics.foreign.metric import ForeignMetric
from harness.metrics.hostile_keys import HostileKeysMetric
from harness.metrics.hot_keys import HotKeysMetric
from harness.metrics.load import LoadMetric
from harness.metrics.memory import MemoryMetric
from harness.metrics.migration.metric import MigrationMetric
from harness.metrics.movement import MovementMetric
from harness.metrics.process import ProcessMetric
from harness.metrics.range_scans import RangeScansMetric
from harness.metrics.removals.metric import RemovalsMetric
from harness.metrics.replication.metric import ReplicationMetric
from harness.metrics.throughput import ThroughputMetric
from harness.recipes.plugins import Contract, Registry, protocol_members

BUILT_IN: list[Metric] = [
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
    RangeScansMetric(),
    MemoryMetric(),
    ThroughputMetric(),
    ForeignMetric(),
    ClientsMetric(),
    CountsMetric(),
    RolloutMetric(),
    FleetMetric(),
]
#: what a plugin's metric must have (its class is instantiated once, as ours are)
CONTRACT = Contract("Metric (harness/metrics/base.py)", protocol_members(Metric),
                    METRIC_DEFAULTS, "harness.metrics.base.MetricBase", per_instance=())


#: our metrics by name, then the installed packages' (instances of their classes), loaded
#: on first use: a plugin failing to load is then a one-line error of the command that
#: needed it, not a traceback on import
BY_NAME: dict[str, Metric] = Registry("ring_harness.metrics",
                                      {metric.name: metric for metric in BUILT_IN}, CONTRACT,
                                      instances=True)
#: the table metrics that came before tables were declared by their metrics, in the order
#: scenarios have always read their tables (results echo the options in that order)
_FIRST_TABLES = ("process", "migration", "comparison", "equivalence", "removals",
                 "hostile_keys", "replication", "hot_keys", "clients")


def metrics() -> list[Metric]:
    """Every metric in the order the runner measures and reports: ours, then plugins'."""
    return list(BY_NAME.values())


def metric_names() -> tuple[str, ...]:
    return tuple(BY_NAME)


def table_metrics() -> tuple[str, ...]:
    """Metrics configured by a scenario table (their `table`), on when that table is
    present: the first ones in their old order, then any other in registry order."""
    return tuple(sorted((metric.name for metric in metrics() if metric.table),
                        key=lambda name: (_FIRST_TABLES.index(name) if name in _FIRST_TABLES
                                          else len(_FIRST_TABLES))))


def default_metrics() -> tuple[str, ...]:
    """Metrics on by default in a scenario: those without a table that say so (counts
    needs valgrind and adds about ten seconds of CPU per layout; foreign is on when a
    foreign peer is named)."""
    return tuple(metric.name for metric in metrics()
                 if metric.on_by_default and not metric.table)


def get_metric(name: str) -> Metric:
    try:
        return BY_NAME[name]
    except KeyError:
        raise UnknownNameError("metric", name, list(BY_NAME)) from None


def unavailable(name: str) -> str | None:
    """Why the named metric cannot run on this machine (its `check()`), or None."""
    return get_metric(name).check()


def record_types() -> dict[str, Any]:
    """The typed record each metric stores, by its name, for reading results: a table
    handed to the results model (which calls nothing above it), in the registry's order."""
    return {name: metric.record_type for name, metric in BY_NAME.items()}


def selected(names: Sequence[str]) -> list[Metric]:
    """The named metrics, in registry order (the order they run and report)."""
    return [metric for metric in metrics() if metric.name in set(names)]
