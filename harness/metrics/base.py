"""What every metric is: the `Metric` protocol, and `MetricBase` with its defaults.

A metric is one module with one class following `Metric`: its `name`, what
it `needs` (a ring, layouts or another form to time, a fresh process), its
`record_type` (the typed figure stored in results), `steps` (its share of
the progress bar, known before work starts), `measure`, and `sections` (the
tables it contributes to reports). Two members are optional, with their
default in `MetricBase`, which every metric subclasses: `check()`, why the
metric cannot run on this machine (None: it can; scenario validation asks
before any work), and `parse_options(table)`, the options of a metric
configured by a scenario table of its name (`TABLE_METRICS` in the registry).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from harness.core.errors import HarnessError

if TYPE_CHECKING:  # the metric's interface; the measuring code needs none of these
    from harness.core.fields import Fields
    from harness.core.model import Result
    from harness.core.tables import Section
    from harness.metrics.context import RunContext, RunPlan, Scope

#: "ring": the algorithm must hold a ring (collisions); "forms": something to measure
#: (a layout, an algorithm or a peer); "process": runs in fresh processes
Need = Literal["ring", "forms", "process"]


class Metric(Protocol):
    name: ClassVar[str]
    #: "run": one figure per sweep point; "subject": one per measured form or peer
    scope: ClassVar[Scope]
    needs: ClassVar[frozenset[str]]
    record_type: ClassVar[Any]

    def steps(self, plan: RunPlan) -> int: ...

    def measure(self, context: RunContext) -> Any:
        """The run's record ("run" scope) or {subject name: record} ("subject" scope)."""
        ...

    def sections(self, result: Result) -> list[Section]: ...

    def check(self) -> str | None:
        """Why the metric cannot run on this machine, or None if it can (default: None)."""
        ...

    def parse_options(self, table: Fields) -> Any:
        """The options its scenario table gives, checked (default: an error, the metric takes
        no table)."""
        ...


#: the members of `Metric` with a default in `MetricBase`
METRIC_DEFAULTS: tuple[str, ...] = ("check", "parse_options")


class MetricBase:
    """The defaults of the `Metric` protocol's optional members."""

    name: ClassVar[str]

    def check(self) -> str | None:
        """None: the metric runs on any machine."""
        return None

    def parse_options(self, table: Fields) -> Any:
        """An error naming the metric: only the metrics of `TABLE_METRICS` take a table."""
        raise HarnessError(f"{table.file}: metric {self.name!r} takes no table of options")
