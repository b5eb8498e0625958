"""Replication: each key on R distinct servers, and what one failure or one new server does.

`[replication] copies = R` places every object's R copies by its preference
list (`harness.recipes.replication`: the ring walks clockwise, skipping servers
already chosen, and with `zone_aware = true` zones already chosen; rendezvous takes
the top R scores, zone-aware the top scores of distinct zones). Measured
over `objects` distinct objects named "object-{i}":

- load of copies: each server's share of all copies, CV and peak-to-mean (per unit
  weight), beside the primary-only figures, for the plain placement and, where the
  servers have zones enough, the zone-aware one: the balance zone-awareness costs;
- keys two of whose copies share a zone (none when zone-aware);
- one server failing (`fail`): keys that lose a copy, keys whose preference list
  changes, copies to re-create (and bytes, at `object_bytes` each), and how many
  servers send and receive that work, with the busiest source's share
  (`harness.metrics.replication.changes` says which copy a lost one is taken from);
- one server joining (`join`, weight 1): copies that move, all of them to it.

With `datacenters` (a keyspace's replication factor per data centre), copies are placed
as Cassandra's NetworkTopologyStrategy places them, over the servers' zones read as
"dc/rack" (`harness.core.network_topology`); the factors set the copies. The joining
server then joins the failing server's data centre and rack (a replacement), since a new
data centre of its own would take no replicas.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from harness.core import charts
from harness.core.cost import Cost
from harness.core.errors import ScenarioError
from harness.core.fields import Fields
from harness.core.network_topology import Topology, split_zone
from harness.core.servers import Server
from harness.core.tables import Answer, Section, Table, count, literal, number, pct, text
from harness.metrics.base import MetricBase, Reference, ScenarioView, Working, answered_runs
from harness.metrics.replication.changes import (
    copy_load,
    keys_sharing_a_zone,
    new_copies,
    recreation,
)
from harness.recipes.algorithms import get_algorithm
from harness.recipes.replication import (
    ReplicaPlacement,
    replication_problem,
    zone_aware_problem,
)

if TYPE_CHECKING:  # the metric's interface; the measuring code needs none of these
    from harness.core.model import Result
    from harness.metrics.base import RunShape
    from harness.metrics.context import RunContext, RunPlan, Scope
    from harness.recipes.algorithms.base import Algorithm

#: bytes per object: its encoded name (about 60), its hash (8), and per copy, the lists
#: before, after the failure and after the join (2 bytes each), their int64 copies while
#: compared (24) and the copies-against-copies comparison (1 per pair)
BYTES_PER_OBJECT = 100
BYTES_PER_OBJECT_COPY = 40
#: seconds per object and copy: hashing, three table look-ups and the comparisons (0.2 us
#: measured on 200,000 objects at R = 3), with a margin of 2
SECONDS_PER_OBJECT_COPY = 4e-7


@dataclass(frozen=True)
class ReplicationOptions:
    copies: int = 3
    zone_aware: bool = False
    objects: int = 200_000
    #: bytes of one object, to state the re-replication work in bytes
    object_bytes: int = 1 << 20
    #: the server that fails; None: the first server on the ring
    fail: str | None = None
    join: str = "joining-server"
    #: NetworkTopologyStrategy's replication factor per data centre; None: the plain walk
    datacenters: dict[str, int] | None = None


@dataclass(frozen=True)
class Placement:
    """Load of copies under one walk (plain or zone-aware)."""

    zone_aware: bool
    primary_cv: float
    primary_peak_to_mean: float
    replica_cv: float
    replica_peak_to_mean: float
    #: keys two of whose copies share a zone
    keys_sharing_a_zone: int
    #: "network-topology" for Cassandra's NetworkTopologyStrategy; None (older results
    #: too): the plain or zone-aware walk `zone_aware` says
    strategy: str | None = None


@dataclass(frozen=True)
class Failure:
    server: str
    keys_losing_a_copy: int
    keys_losing_a_copy_fraction: float
    keys_changed: int
    copies_to_recreate: int
    bytes_to_recreate: int
    sources: int
    destinations: int
    busiest_source_share: float
    busiest_destination_share: float
    #: copies each source sends, most first
    per_source: list[int]


@dataclass(frozen=True)
class Join:
    server: str
    copies_moved: int
    copies_moved_fraction: float
    keys_changed: int
    #: every moved copy lands on the joining server
    only_to_it: bool


@dataclass(frozen=True)
class Replication:
    copies: int
    zone_aware: bool
    objects: int
    object_bytes: int
    servers: int
    zones: int
    placements: list[Placement]
    failure: Failure
    join: Join
    #: NetworkTopologyStrategy's factor per data centre (None: not used, or an older result)
    datacenters: dict[str, int] | None = None


#: what `datacenters` must be
DATACENTERS_EXPECTED = ("a table of data centre names to replication factors, each an "
                        "integer from 1 to 64")
#: seconds per step of NetworkTopologyStrategy's walk in plain Python, and a walk taken
#: as long as the servers are many (a walk ends when it has met a node of every rack it
#: needs, which can take about as many tokens as there are nodes): measured 0.66 s for
#: 25,600 tokens of 100 nodes in 5 racks of 2 data centres (26 us a token), which this
#: puts at 2.6 s
SECONDS_PER_TOPOLOGY_STEP = 1e-6


def _take_datacenters(table: Fields) -> dict[str, int] | None:
    value = table.take_raw("datacenters", None, expected=DATACENTERS_EXPECTED,
                           shown_default="none: the clockwise walk of `copies`")
    if value is None:
        return None
    if (not isinstance(value, dict) or not value
            or any(not isinstance(k, str) or not k or "/" in k for k in value)
            or any(isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 64
                   for v in value.values())):
        raise table.error("datacenters", DATACENTERS_EXPECTED, value)
    return {str(k): int(v) for k, v in value.items()}


def _check_datacenters(scenario: ScenarioView, options: ReplicationOptions,
                       top: Fields) -> None:
    """Data centres need a ring, servers in each, and as many left after the failure."""
    assert options.datacenters is not None
    for recipe in scenario.recipes():
        if recipe.algorithm != "ring":
            raise ScenarioError(f"{top.file}: replication.datacenters must be left out for "
                                f"{recipe.algorithm}: NetworkTopologyStrategy walks a "
                                f"ring's tokens")
    zones = scenario.ring_zones()
    present = sorted({split_zone(z)[0] for z in zones})
    shown = ", ".join(map(repr, present[:8])) + (", ..." if len(present) > 8 else "")
    for dc in options.datacenters:
        if dc not in present:
            raise ScenarioError(
                f"{top.file}: replication.datacenters must name data centres of the servers' "
                f"zones (\"dc/rack\": {shown}) (got {dc!r})")
    on_ring = [s.name for s in scenario.ring_servers()]
    failed = options.fail if options.fail is not None else on_ring[0]
    dc = split_zone(zones[on_ring.index(failed)])[0]
    factor = options.datacenters.get(dc)
    nodes = sum(1 for z in zones if split_zone(z)[0] == dc)
    if factor is not None and nodes - 1 < factor:
        raise ScenarioError(
            f"{top.file}: replication.fail must leave data centre {dc!r} at least its factor "
            f"of {factor} nodes, so that every key keeps its number of copies (got "
            f"{failed!r}, one of its {nodes})")


def zone_indexes(zones: Sequence[str], servers: Sequence[Server]) -> npt.NDArray[np.int64]:
    """Each server's zone as an integer (a server given none: a zone of its own)."""
    names = list(zones) if zones else [s.name for s in servers]
    indexes: npt.NDArray[np.int64] = np.unique(names, return_inverse=True)[1].astype(np.int64)
    return indexes


def _take_bool(table: Fields, key: str, default: bool) -> bool:
    value = table.take_raw(key, default, expected="true or false")
    if not isinstance(value, bool):
        raise table.error(key, "true or false", value)
    return value


def _check_replication(scenario: ScenarioView, options: ReplicationOptions,
                       top: Fields) -> None:
    """R copies need R servers (R zones, zone-aware) after the failure too, an algorithm
    that defines replica sets, a server on the ring to fail and a new name to join."""
    for recipe in scenario.recipes():
        reason = replication_problem(recipe.algorithm)
        if reason:
            raise ScenarioError(f"{top.file}: replication must be left out for "
                                f"{recipe.algorithm}: {reason}")
        zones_reason = zone_aware_problem(recipe.algorithm)
        if options.zone_aware and zones_reason:
            raise ScenarioError(f"{top.file}: replication.zone_aware must be false for "
                                f"{recipe.algorithm}: {zones_reason}")
    on_ring = [s.name for s in scenario.ring_servers()]
    if options.fail is not None and options.fail not in on_ring:
        raise ScenarioError(f"{top.file}: replication.fail must name a server on the ring "
                            f"(got {options.fail!r})")
    if options.join in {s.name for s in scenario.servers}:
        raise ScenarioError(f"{top.file}: replication.join must be a new server name (got "
                            f"{options.join!r}, already a server)")
    failed = options.fail if options.fail is not None else on_ring[0]
    servers = scenario.ring_servers()
    changed = {"fail": [s for s in servers if s.name != failed],
               "join": [*servers, Server(options.join)]}
    for recipe in scenario.recipes():
        for field_name, fleet in changed.items():
            # The rebuilt ring must take the changed fleet (HAProxy's ids from names).
            problem = get_algorithm(recipe.algorithm).check_servers(fleet, recipe.params)
            if problem:
                raise ScenarioError(
                    f"{top.file}: replication.{field_name} must leave servers that are "
                    f"{problem} for {recipe.algorithm} {recipe.label} (got "
                    f"{getattr(options, field_name) or failed!r})")
    if options.datacenters is not None:
        _check_datacenters(scenario, options, top)
        return
    zones = scenario.ring_zones()
    left = [zone for name, zone in zip(on_ring, zones, strict=True) if name != failed]
    places, what = (len(set(left)), "zones") if options.zone_aware else (len(left), "servers")
    if options.copies > places:
        raise ScenarioError(
            f"{top.file}: replication.copies must be at most the {what} on the ring once "
            f"{failed!r} fails ({places}), since each copy needs its own (got {options.copies})")


class ReplicationMetric(MetricBase):
    """R copies per key: their balance, zones, and the work of one failure and one join."""

    name: ClassVar[str] = "replication"
    table: ClassVar[str] = "replication"
    reference: ClassVar[Reference] = Reference(tables={
        "replication": "R copies of each object on distinct servers (or zones): their "
                       "balance, one failure and one join.",
    })
    scope: ClassVar[Scope] = "run"
    needs: ClassVar[frozenset[str]] = frozenset()
    record_type: ClassVar[Any] = Replication
    cost_fields: ClassVar[str] = "objects, copies"

    def check_scenario(self, scenario: ScenarioView, options: Any, top: Fields) -> None:
        _check_replication(scenario, options, top)

    @staticmethod
    def parse_options(table: Fields) -> ReplicationOptions:
        """`[replication]`: copies, zone_aware, objects, object_bytes, fail, join."""
        datacenters = _take_datacenters(table)
        if datacenters is not None and table.has("copies"):
            raise table.error("copies", "left out with replication.datacenters (each data "
                              "centre's factor sets the copies)", table.table["copies"])
        if datacenters is not None and table.table.get("zone_aware") is True:
            raise table.error("zone_aware", "false with replication.datacenters "
                              "(NetworkTopologyStrategy spreads copies over racks itself)",
                              True)
        options = ReplicationOptions(
            copies=(sum(datacenters.values()) if datacenters is not None
                    else table.take_int("copies", 3, minimum=1, maximum=64)),
            zone_aware=_take_bool(table, "zone_aware", False),
            objects=table.take_int("objects", 200_000, minimum=1, maximum=10**8),
            object_bytes=table.take_int("object_bytes", 1 << 20, minimum=1, maximum=2**50),
            fail=(table.take_str("fail", "-", shown_default="the first server on the ring")
                  if table.has("fail") else None),
            join=table.take_str("join", "joining-server"),
            datacenters=datacenters,
        )
        table.finish()
        return options

    def estimated_bytes(self, options: Any, servers: Sequence[Server]) -> float:
        """Names, hashes and three sets of preference lists per object (the structure
        rebuilt for the failure and the join, and the per-point tables: `working`)."""
        assert isinstance(options, ReplicationOptions)
        return float(options.objects * (BYTES_PER_OBJECT
                                        + BYTES_PER_OBJECT_COPY * options.copies
                                        + options.copies**2))

    def estimated_seconds(self, options: Any, servers: Sequence[Server]) -> tuple[float, str]:
        assert isinstance(options, ReplicationOptions)
        placements = 2
        seconds = (placements * 3 * SECONDS_PER_OBJECT_COPY * options.objects * options.copies)
        return seconds, f"{options.objects:,} objects of {options.copies} copies"

    def working(self, shape: RunShape) -> Working:
        """The ring rebuilt for the failure, then for the join: one at a time (two builds);
        on a ring,
        two per-point tables of R uint16 alive at once (before, and after the change);
        with data centres, also the ring's owners as a Python list while the walk is
        tabled (a list slot and an int object: 40 bytes a token)."""
        options = shape.options.get(self.name)
        if not isinstance(options, ReplicationOptions) or not shape.ring_array_bytes:
            return Working(rings=1, builds=2)
        walk = 40.0 * shape.entries if options.datacenters is not None else 0.0
        return Working(2 * 2.0 * options.copies * shape.entries + walk, rings=1, builds=2)

    def cost(self, shape: RunShape, servers: Sequence[Server],
             working: Working | None = None) -> Cost:
        """`MetricBase.cost`, and with data centres NetworkTopologyStrategy's walk tabled
        in plain Python three times (placement, failure, join), a walk per token."""
        cost = super().cost(shape, servers, working)
        options = shape.options.get(self.name)
        if not isinstance(options, ReplicationOptions) or options.datacenters is None:
            return cost
        steps = min(shape.entries, len(servers) + 1)
        walk = 3 * SECONDS_PER_TOPOLOGY_STEP * shape.entries * steps
        return replace(cost, seconds=cost.seconds + walk,
                       why_seconds=cost.why_seconds or f"[{self.name}]: the data centres' walk "
                                                       f"over {shape.entries:,} tokens")

    def reference_lookups(self, options: Any) -> int:
        """Every object placed four times: plain and zone-aware, after the failure, after
        the join."""
        assert isinstance(options, ReplicationOptions)
        return 4 * options.objects

    def steps(self, plan: RunPlan) -> int:
        return 1 if "replication" in plan.options else 0

    def measure(self, context: RunContext) -> Replication | None:
        options = context.options.get(self.name)
        if not isinstance(options, ReplicationOptions):
            return None
        servers = list(context.servers)
        algorithm: Algorithm = context.algorithm
        zone_of = zone_indexes(context.zones, servers)
        weights = np.array([s.weight for s in servers], dtype=np.float64)
        context.stage(f"{context.label}: replication, {options.objects:,} objects")
        hashes = algorithm.hash_keys([f"object-{i}".encode() for i in range(options.objects)])
        topology = (Topology.of(list(context.zones) or [s.name for s in servers],
                                options.datacenters)
                    if options.datacenters is not None else None)
        placements, lists_by_walk = [], {}
        if topology is not None:
            lists = ReplicaPlacement(algorithm, options.copies, topology=topology).lists(hashes)
            lists_by_walk[False] = lists
            placements.append(self._placement(lists, weights, zone_of, False,
                                              "network-topology"))
            copies = topology.copies
        else:
            # Zone-aware beside plain wherever it differs (fewer zones than servers) and
            # can place every copy: that difference is the balance zone-awareness costs.
            zones = len(np.unique(zone_of))
            walks = [False, True] if options.zone_aware or (
                options.copies <= zones < len(servers)
                and zone_aware_problem(algorithm.name) is None) else [False]
            for aware in walks:
                lists = ReplicaPlacement(algorithm, options.copies,
                                         zone_of if aware else None).lists(hashes)
                lists_by_walk[aware] = lists
                placements.append(self._placement(lists, weights, zone_of, aware, None))
            copies = options.copies
        aware = options.zone_aware
        before = lists_by_walk[aware].astype(np.int64)
        failure = self._failure(context, options, before, hashes, zone_of, aware, topology)
        join = self._join(context, options, before, hashes, zone_of, aware, topology)
        context.advance(1)
        return Replication(copies=copies, zone_aware=aware, objects=options.objects,
                           object_bytes=options.object_bytes, servers=len(servers),
                           zones=len(np.unique(zone_of)), placements=placements,
                           failure=failure, join=join, datacenters=options.datacenters)

    @staticmethod
    def _placement(lists: npt.NDArray[np.uint16], weights: npt.NDArray[np.float64],
                   zone_of: npt.NDArray[np.int64], aware: bool,
                   strategy: str | None) -> Placement:
        primary_cv, primary_peak = copy_load(lists[:, :1], weights)
        replica_cv, replica_peak = copy_load(lists, weights)
        return Placement(aware, primary_cv, primary_peak, replica_cv, replica_peak,
                         keys_sharing_a_zone(lists, zone_of), strategy)

    @staticmethod
    def _failure(context: RunContext, options: ReplicationOptions,
                 before: npt.NDArray[np.int64], hashes: npt.NDArray[np.unsignedinteger],
                 zone_of: npt.NDArray[np.int64], aware: bool,
                 topology: Topology | None) -> Failure:
        servers = list(context.servers)
        name = options.fail if options.fail is not None else servers[0].name
        failed = [s.name for s in servers].index(name)
        context.stage(f"{context.label}: replication, {name} failing")
        # As the movement metric: a construction that says how it loses a server
        # (allocated tokens) loses it so; any other ring is rebuilt without it.
        fallen = context.algorithm.without(failed)
        remaining = [s for i, s in enumerate(servers) if i != failed]
        if fallen is None:
            fallen = context.rebuild(remaining)
        kept = np.array([i for i in range(len(servers)) if i != failed], dtype=np.int64)
        zones_after = zone_of[kept] if aware else None
        placement = (ReplicaPlacement(fallen, options.copies, topology=topology.without(failed))
                     if topology is not None
                     else ReplicaPlacement(fallen, options.copies, zones_after))
        after = kept[placement.lists(hashes)]
        work = recreation(before, after, failed)
        return Failure(server=name, keys_losing_a_copy=work.keys_losing_a_copy,
                       keys_losing_a_copy_fraction=work.keys_losing_a_copy / len(hashes),
                       keys_changed=work.keys_changed, copies_to_recreate=work.copies,
                       bytes_to_recreate=work.copies * options.object_bytes,
                       sources=work.sources, destinations=work.destinations,
                       busiest_source_share=work.busiest_source_share,
                       busiest_destination_share=work.busiest_destination_share,
                       per_source=list(work.per_source))

    @staticmethod
    def _join(context: RunContext, options: ReplicationOptions,
              before: npt.NDArray[np.int64], hashes: npt.NDArray[np.unsignedinteger],
              zone_of: npt.NDArray[np.int64], aware: bool, topology: Topology | None) -> Join:
        servers = list(context.servers)
        context.stage(f"{context.label}: replication, {options.join} joining")
        grown = context.rebuild([*servers, Server(options.join)])
        # The new server is a zone of its own: it never shares one with a copy.
        zones_after = np.append(zone_of, zone_of.max() + 1) if aware else None
        if topology is not None:
            # A replacement: the new server joins the failing server's data centre and rack.
            fail = options.fail if options.fail is not None else servers[0].name
            like = [s.name for s in servers].index(fail)
            placement = ReplicaPlacement(grown, options.copies, topology=topology.joined(like))
        else:
            placement = ReplicaPlacement(grown, options.copies, zones_after)
        after = placement.lists(hashes)
        after = after.astype(np.int64)
        created = new_copies(before, after)
        moved = int(created.sum())
        return Join(server=options.join, copies_moved=moved,
                    copies_moved_fraction=moved / before.size,
                    keys_changed=int((before != after).any(axis=1).sum()),
                    only_to_it=bool(np.all(after[created] == len(servers))))

    def answers(self, result: Result) -> list[Answer]:
        """Per sweep point: the copies a failed server takes with it, and where from they
        are re-created."""
        lines = []
        for run in answered_runs([r for r in result.runs if r.figure(self.name)]):
            f = run.figure(self.name).failure
            lost, share = count(f.copies_to_recreate).text, pct(f.keys_losing_a_copy_fraction)
            gib = number(f.bytes_to_recreate / 2**30, 2).text
            section = f"Replication ({literal(run.label)})"
            sources = f"{f.sources} server" + ("" if f.sources == 1 else "s")
            lines.append(Answer(
                section,
                f"{literal(run.label)}: when {literal(f.server)} fails, {share.text} of keys "
                f"lose a copy: {lost} copies ({gib} GiB) to re-create from {sources}.",
                (share.text, lost, gib)))
            r: Replication = run.figure(self.name)
            topology = next((p for p in r.placements if p.strategy == "network-topology"),
                            None)
            if r.datacenters and topology is not None:
                copies = ", ".join(f"{literal(dc)} {rf}" for dc, rf in r.datacenters.items())
                shared = count(topology.keys_sharing_a_zone).text
                peak = number(topology.replica_peak_to_mean).text
                lines.append(Answer(section, (
                    f"{literal(run.label)}: NetworkTopologyStrategy ({copies} copies) leaves "
                    f"{shared} keys with two copies in one rack; the busiest server holds "
                    f"{peak}x the mean copies."), (shared, peak)))
        return lines

    def sections(self, result: Result) -> list[Section]:
        sections = []
        for run in result.runs:
            record: Replication | None = run.figure(self.name)
            if record is None:
                continue
            sections.append(self._section(run.label, record))
        return sections

    @staticmethod
    def _section(label: str, r: Replication) -> Section:
        walk = {False: "plain", True: "zone-aware"}

        def named(p: Placement) -> str:
            return "network topology" if p.strategy == "network-topology" else walk[p.zone_aware]

        used = "network topology" if r.datacenters else walk[r.zone_aware]
        factors = (" NetworkTopologyStrategy: " + ", ".join(
            f"{literal(dc)} {rf}" for dc, rf in r.datacenters.items())
            + " copies per data centre (zones are \"dc/rack\"); the joining server joins "
            "the failing server's rack." if r.datacenters else "")
        placement = Table.of(
            ["placement", "primary cv", "primary peak-to-mean", "copies cv",
             "copies peak-to-mean", "keys with two copies in one zone"],
            [[text(named(p)), pct(p.primary_cv), number(p.primary_peak_to_mean),
              pct(p.replica_cv), number(p.replica_peak_to_mean),
              count(p.keys_sharing_a_zone)] for p in r.placements],
            notes=[f"{r.objects:,} objects, {r.copies} copies each, on {r.servers} servers "
                   f"in {r.zones} zones. Load is each server's copies per unit weight; "
                   "primary counts only each object's first copy." + factors])
        f, j = r.failure, r.join
        failure = Table.of(
            ["change", "keys losing a copy", "keys losing a copy %", "lists changed",
             "copies to re-create", "GiB to re-create", "source servers",
             "busiest source's share", "destination servers"],
            [[text(f"{f.server} fails"), count(f.keys_losing_a_copy),
              pct(f.keys_losing_a_copy_fraction), count(f.keys_changed),
              count(f.copies_to_recreate), number(f.bytes_to_recreate / 2**30, 2),
              count(f.sources),
              pct(f.busiest_source_share), count(f.destinations)]],
            notes=[f"Placement: {used}. A lost copy is re-created from "
                   "the copy after it in the key's old list (the one before it when it was "
                   f"last), {r.object_bytes:,} bytes an object."])
        join = Table.of(
            ["change", "copies moved", "copies moved %", "lists changed",
             "moved only to it"],
            [[text(f"{j.server} joins"), count(j.copies_moved),
              pct(j.copies_moved_fraction, 3), count(j.keys_changed),
              text("yes" if j.only_to_it else "NO")]])
        chart_rows = [{"placement": named(p), "load": series, "peak": value,
                       "label": f"{value:.3f}"}
                      for p in r.placements
                      for series, value in (("primary only", p.primary_peak_to_mean),
                                            (f"all {r.copies} copies",
                                             p.replica_peak_to_mean))]
        balance = charts.grouped_bars(
            f"Busiest server's load over the mean ({label})", chart_rows, category="placement",
            group="load", value="peak", value_title="peak-to-mean", label="label")
        sources = charts.bars(
            f"Copies each source re-creates when {f.server} fails ({label})",
            [{"source": f"#{i + 1}", "copies": c, "label": f"{c:,}"}
             for i, c in enumerate(f.per_source)],
            category="source", value="copies", value_title="copies sent",
            label="label")
        return Section(f"Replication ({literal(label)})",
                       tables=[placement, failure, join], charts=[balance, sources])
