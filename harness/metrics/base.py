"""What every metric is: the `Metric` protocol, and `MetricBase` with its defaults.

A metric is one module with one class following `Metric`: its `name`, what
it `needs` (a ring, layouts or another form to time, a fresh process), its
`record_type` (the typed figure stored in results), `steps` (its share of
the progress bar, known before work starts), `measure`, and `sections` (the
tables it contributes to reports). The other members are optional, with their
default in `MetricBase`, which every metric subclasses: `table`, the scenario table
that configures it and turns it on (none by default); `on_by_default`, whether a
scenario without `measure.metrics` measures it (default: when it has no table);
`check()`, why the metric cannot run on this machine (None: it can; scenario
validation asks before any work); `parse_options(table)`, the options its table
gives; `check_scenario(scenario, options, top)`, its rules across the scenario's
sections (its table against the servers, recipes and peers), asked once the whole
file is read; `reference`, its tables' entries in the scenario reference (what each
table is for, and specimens covering its branches);
`estimated_bytes(options, servers)` with `cost_fields`, the peak memory its
own work adds (the estimate checks it before any work) and the fields that set it;
`working(shape)`, what it takes beyond what a sweep point holds (the shape carries the
scenario's metric options too): the bytes it holds while it measures that point (the
throughput floor's array, a fresh process measuring one form) and the rings of the run's
recipe it builds beside the run's own (hostile keys' rings of another hash);
`estimated_seconds`, the time its own work adds; and `reference_lookups(options)`, the
keys it routes through the algorithm's reference, which the algorithm prices.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from harness.core.cost import Cost
from harness.core.errors import HarnessError
from harness.recipes.layouts.costs import LayoutCost

if TYPE_CHECKING:  # the metric's interface; the measuring code needs none of these
    from harness.core.fields import Fields
    from harness.core.model import Result
    from harness.core.servers import Server
    from harness.core.tables import Answer, Section
    from harness.core.workload import KeysSpec
    from harness.metrics.context import RunContext, RunPlan, Scope
    from harness.recipes.peers.foreign import ForeignPeerSpec

#: "ring": the algorithm must hold a ring (collisions); "forms": something to measure
#: (a layout, an algorithm or a peer); "process": runs in fresh processes
Need = Literal["ring", "forms", "process"]


@dataclass(frozen=True)
class RunShape:
    """What one sweep point holds, as the memory estimate sees it before any work."""

    #: entries of its largest structure over the fleets it is measured on
    entries: int
    #: keys routed
    keys: int
    #: bytes of one key hash
    key_hash_bytes: int
    #: the sorted positions and owners of its ring (0 for an algorithm without one)
    ring_array_bytes: float
    #: the reference structure held all along: its ring arrays and its own layout
    reference_bytes: float
    #: the measured layouts' costs (none for an algorithm without a ring)
    layouts: tuple[LayoutCost, ...]
    #: bytes held by one built algorithm form (for an algorithm without a ring)
    form_bytes: float
    #: keys per round of the scalar timing
    scalar_keys: int
    #: bytes the largest of its peers holds (0 without peers)
    peer_bytes: float
    #: operations (adds, removes) it is measured through
    operations: int
    #: characters of the longest key name (a metric holding names again prices them)
    longest_key_name: int = 0
    #: options of the metrics configured by their own table (what their work holds per
    #: entry may depend on them: [replication]'s copies)
    options: Mapping[str, Any] = field(default_factory=dict)
    #: the sweep point's recipe (a migration scales its new ring from it)
    params: Mapping[str, Any] = field(default_factory=dict)
    #: the sweep point's algorithm ("" where unknown): a recipe a metric builds from the
    #: run's (a migration's `to`) is named by it
    algorithm: str = ""
    #: the most the point holds before any metric's own rings: the more costly of
    #: generating its ring and holding it with its forms, peers and working bytes; a metric
    #: that builds rings of the run's recipe beside the run's own prices each at this
    point_bytes: float = 0.0
    #: seconds one build of the point's recipe takes (`Algorithm.estimated_build_seconds`,
    #: on the largest of its fleets), and what sets them: what each ring a metric builds
    #: of the run's recipe costs in time
    build_seconds: float = 0.0
    build_why: str = ""
    #: each server's capabilities, in the order of the servers (a process's rings are the
    #: servers holding each set of them)
    capabilities: tuple[tuple[str, ...], ...] = ()
    #: timed rounds after the first (`measure.repeats`)
    repeats: int = 0
    #: forms measured (a ring's layouts, an algorithm's forms) and peers of ours: each
    #: probed alone in a fresh process by the memory metric
    forms: int = 0
    peers: int = 0

    def largest_build_and_lookup_bytes(self) -> float:
        """The costliest measured layout built and then looking up every key (0 without
        layouts): what a probe process holds of its form."""
        return max((cost.built_and_looked_up_bytes(self.entries, self.keys)
                    for cost in self.layouts), default=0.0)

    def largest_lookup_bytes(self) -> float:
        """What the most expensive batch lookup of every key adds."""
        return max((cost.lookup_bytes(self.entries, self.keys) for cost in self.layouts),
                   default=4.0 * self.keys)


@dataclass(frozen=True)
class Working:
    """What a metric takes beyond what a sweep point holds, as the estimate prices it."""

    #: bytes it holds while it measures a point (its own arrays, any process it starts);
    #: the costliest metric's add to the point's own
    bytes: float = 0.0
    #: rings of the run's recipe it holds at once beside the run's own, each priced as the
    #: run's ring is (the more costly of generating and holding it)
    rings: int = 0
    #: rings of the run's recipe it builds over its work, one after another (movement's
    #: fleet after each operation), each priced at `RunShape.build_seconds`; at least
    #: `rings`, which it builds too
    builds: int = 0


NOTHING_MORE = Working()


class RecipeView(Protocol):
    """One sweep point of a scenario, as a metric's rules read it."""

    @property
    def algorithm(self) -> str: ...

    @property
    def params(self) -> dict[str, Any]: ...

    @property
    def label(self) -> str: ...


class ServerView(Protocol):
    @property
    def name(self) -> str: ...


class MeasureView(Protocol):
    """What a scenario measures, as a metric's rules read it."""

    @property
    def peers(self) -> tuple[str, ...]: ...

    @property
    def foreign_peers(self) -> tuple[ForeignPeerSpec, ...]: ...

    @property
    def options(self) -> dict[str, Any]: ...


class ScenarioView(Protocol):
    """A scenario read whole (`harness.run.scenario.Scenario`), as a metric's
    `check_scenario` sees it: the metrics sit below the scenario code, and read it
    through this."""

    @property
    def servers(self) -> Sequence[ServerView]: ...

    @property
    def measure(self) -> MeasureView: ...

    @property
    def keys(self) -> KeysSpec: ...

    def recipes(self) -> Sequence[RecipeView]: ...

    def ring_servers(self) -> list[Server]: ...

    def ring_zones(self) -> list[str]: ...

    def ring_capabilities(self) -> list[tuple[str, ...]]: ...


@dataclass(frozen=True)
class Reference:
    """A metric's entries in the scenario reference (`harness.run.reference`), which parses
    specimens with every key recorded: its tables and what each is for, in the order the
    page gives them; tables read under a second path; tables of free names, described;
    and small valid scenarios for branches the shipped scenarios leave out."""

    tables: Mapping[str, str] = field(default_factory=dict)
    aliases: Mapping[str, str] = field(default_factory=dict)
    free_form: Mapping[str, str] = field(default_factory=dict)
    specimens: tuple[str, ...] = ()


NO_REFERENCE = Reference()


class Metric(Protocol):
    name: ClassVar[str]
    #: the scenario table that configures the metric and turns it on ("": none)
    table: ClassVar[str]
    #: measured when a scenario does not list `measure.metrics`
    on_by_default: ClassVar[bool]
    #: "run": one figure per sweep point; "subject": one per measured form or peer
    scope: ClassVar[Scope]
    needs: ClassVar[frozenset[str]]
    record_type: ClassVar[Any]

    def steps(self, plan: RunPlan) -> int: ...

    def measure(self, context: RunContext) -> Any:
        """The run's record ("run" scope) or {subject name: record} ("subject" scope)."""
        ...

    def sections(self, result: Result) -> list[Section]: ...

    def answers(self, result: Result) -> list[Answer]:
        """Its lines of the result's answers block, each figure as its section shows it
        (default: none, a metric whose tables are measurement notes)."""
        ...

    def check(self) -> str | None:
        """Why the metric cannot run on this machine, or None if it can (default: None)."""
        ...

    def parse_options(self, table: Fields) -> Any:
        """The options its scenario table gives, checked (default: an error, the metric takes
        no table)."""
        ...

    def check_scenario(self, scenario: ScenarioView, options: Any, top: Fields) -> None:
        """Raise a ScenarioError naming the field when its options do not fit the rest of
        the scenario (servers, recipes, peers); asked once the whole file is read, before
        any work (default: nothing to check)."""
        ...

    #: its entries in the scenario reference
    reference: ClassVar[Reference]

    #: the fields of its table that set `estimated_bytes`, as an error names them
    cost_fields: ClassVar[str]

    def estimated_bytes(self, options: Any, servers: Sequence[Server]) -> float:
        """Peak bytes its own work adds to the ring and keys a run holds, from its table's
        options, before any work (default: 0, a metric measuring what the run holds)."""
        ...

    def estimated_seconds(self, options: Any, servers: Sequence[Server]) -> tuple[float, str]:
        """Seconds its own work adds beyond what the run's recipes cost, and what sets them
        (default: 0, none)."""
        ...

    def working(self, shape: RunShape) -> Working:
        """What it takes beyond what the sweep point holds (its forms, keys and reference),
        on this machine, from the point's shape and the scenario's options
        (`shape.options`): the bytes it holds while measuring the point, and the rings of
        the run's recipe it builds beside the run's own (default: nothing)."""
        ...

    def reference_lookups(self, options: Any) -> int:
        """Keys its own work routes through the algorithm's vectorised reference, which the
        time estimate prices by the algorithm (rendezvous scores every server for each);
        default: 0, none."""
        ...

    def cost(self, shape: RunShape, servers: Sequence[Server],
             working: Working | None = None) -> Cost:
        """What measuring one sweep point adds, the one value the estimate folds (default:
        composed from the methods above; `working`, when the estimate has asked for it
        already, is not asked again)."""
        ...


#: the members of `Metric` with a default in `MetricBase`
METRIC_DEFAULTS: tuple[str, ...] = ("table", "on_by_default", "answers", "check",
                                    "parse_options",
                                    "check_scenario", "reference", "cost_fields",
                                    "estimated_bytes", "estimated_seconds", "working",
                                    "reference_lookups", "cost")


class MetricBase:
    """The defaults of the `Metric` protocol's optional members."""

    name: ClassVar[str]
    table: ClassVar[str] = ""
    #: a table metric is on when its table is present; the others whenever metrics are
    #: not listed, unless they say otherwise
    on_by_default: ClassVar[bool] = True
    reference: ClassVar[Reference] = NO_REFERENCE

    def answers(self, result: Result) -> list[Answer]:
        """None: the metric's sections answer nothing on the first screen."""
        return []

    def check(self) -> str | None:
        """None: the metric runs on any machine."""
        return None

    def parse_options(self, table: Fields) -> Any:
        """An error naming the metric: only a metric with a `table` takes one."""
        raise HarnessError(f"{table.file}: metric {self.name!r} takes no table of options")

    def check_scenario(self, scenario: ScenarioView, options: Any, top: Fields) -> None:
        """Nothing: the metric's options need nothing of the rest of the scenario."""

    cost_fields: ClassVar[str] = ""

    def estimated_bytes(self, options: Any, servers: Sequence[Server]) -> float:
        """0: the metric measures what the run already holds."""
        return 0.0

    def estimated_seconds(self, options: Any, servers: Sequence[Server]) -> tuple[float, str]:
        """0: the metric's time follows the run's own keys and forms."""
        return 0.0, ""

    def working(self, shape: RunShape) -> Working:
        """Nothing: the metric reads what the sweep point holds and builds no ring."""
        return NOTHING_MORE

    def reference_lookups(self, options: Any) -> int:
        """0: the metric routes no keys of its own."""
        return 0

    def cost(self, shape: RunShape, servers: Sequence[Server],
             working: Working | None = None) -> Cost:
        """What measuring one sweep point adds to what the point holds, from the estimate
        methods above: while it works, its working bytes (`working`, asked when not given),
        its table's own work and the rings it builds beside the run's (each
        `shape.point_bytes`); the seconds of its own work and of the rings it builds (each
        `shape.build_seconds`). It holds nothing once done
        (`Cost.held` is 0)."""
        if working is None:
            working = self.working(shape)
        options = shape.options.get(self.name)
        own, (seconds, why) = ((self.estimated_bytes(options, servers),
                                self.estimated_seconds(options, servers))
                               if options is not None else (0.0, (0.0, "")))
        table = own + working.rings * shape.point_bytes
        builds = max(working.rings, working.builds)
        rebuilt = builds * shape.build_seconds
        if rebuilt > seconds:  # the rings it builds name its seconds
            why = f"{builds:,} more build(s) of the run's recipe, each {shape.build_why}"
        return Cost(peak=working.bytes + table, seconds=seconds + rebuilt,
                    why=f"[{self.name}] ({self.cost_fields})" if table else "",
                    why_seconds=f"[{self.name}]: {why}" if why else "")


def answered_runs(runs: Sequence[Any]) -> list[Any]:
    """The sweep points an answers block speaks for: all of up to three, else the first
    and the last (the sweep's two ends; the sections give every point)."""
    return list(runs) if len(runs) <= 3 else [runs[0], runs[-1]]
