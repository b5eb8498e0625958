"""Process: a router process holds one ring per eligibility set; what it costs in all.

Servers carry capabilities; a request needs some. For every eligibility set
(listed, or every combination of capabilities present among the servers,
plus the empty set: all servers) the process holds a ring of the servers
holding all of them, built with the scenario's recipe. Per ring: servers,
entries, bytes in each layout (as the layout accounts for them), build time,
exact `cv_arcs` and peak-to-mean. For the process: the sum over rings, plus
what is shared once (the server table: names and weights), and each ring's
map from its owner indexes to the shared server table (2 bytes per server).

When the process would not fit this machine (or `sample_rings` asks for it),
a stated sample of rings (evenly spread over the rings sorted by size) is
built and the rest extrapolated from the bytes per entry measured on them,
with the entries each ring will have (known from the recipe's point counts
before building). The result says "estimated from N built rings" and gives
the measured bytes per entry: it never silently guesses.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from harness.core import charts
from harness.core.cost import Cost
from harness.core.errors import ParityError, ScenarioError
from harness.core.fields import Fields
from harness.core.machine import available_memory_bytes
from harness.core.servers import Server, eligibility_sets, servers_with
from harness.core.tables import Answer, Section, Table, count, kib, literal, number, pct, text
from harness.metrics.base import (
    NOTHING_MORE,
    MetricBase,
    Reference,
    RunShape,
    ScenarioView,
    Working,
    answered_runs,
)
from harness.recipes.algorithms.ring import NO_LAYOUT
from harness.recipes.constructions.generator import GENERATION_BYTES_PER_POINT
from harness.recipes.layouts import LAYOUTS
from harness.recipes.layouts.costs import build_seconds_per_entry, layout_cost

if TYPE_CHECKING:
    from harness.core.model import Result
    from harness.core.ring import Ring
    from harness.metrics.context import RunContext, RunPlan, Scope

#: a resident ring in the router: its entries in an 8-byte layout plus our own 6-byte copy
RESIDENT_BYTES_PER_ENTRY = 14
#: rings built when the whole process would not fit
SAMPLE_WHEN_TOO_BIG = 8
#: the fleet's points while its rings are filtered from them: one packed word each
FLEET_BYTES_PER_POINT = 8


#: seconds a ring entry takes to be filtered from the fleet's points: 15 ns measured in
#: the committed results/process-cloudflare-6gb.json (rings_s 11.3 s for 753M entries),
#: with a margin of 1.5
FILTER_SECONDS_PER_ENTRY = 25e-9


@dataclass(frozen=True)
class ProcessOptions:
    #: eligibility sets (each a set of capabilities); empty: every combination present
    eligibility: tuple[tuple[str, ...], ...] = ()
    #: build only this many rings and extrapolate (0: all, or as many as fit)
    sample_rings: int = 0
    #: layouts each ring is costed in
    layouts: tuple[str, ...] = ("numpy-aligned", "numpy-packed", "bucketed")


@dataclass
class RingCost:
    requires: list[str]
    servers: int
    entries: int
    built: bool
    #: bytes per layout name (measured when built, else entries x measured bytes/entry)
    bytes: dict[str, int]
    build_s: float | None = None
    cv_arcs: float | None = None
    peak_to_mean: float | None = None


@dataclass
class ProcessTiming:
    """Where a process's build went, in seconds."""

    #: the fleet's points hashed and sorted once (or nothing, where each ring is built afresh)
    points_s: float = 0.0
    #: how many points that is
    points: int = 0
    #: every ring filtered from them (or built afresh)
    rings_s: float = 0.0
    #: every ring's exact balance
    balance_s: float = 0.0
    #: every ring built in each layout
    layouts_s: dict[str, float] = field(default_factory=dict)
    #: rings compared with the same ring built afresh (the ring of all servers with the
    #: run's own, the smallest with a fresh build)
    checked_rings: int = 0
    #: the whole process metric, checks included
    wall_s: float = 0.0
    #: its CPU time on every thread (far below wall time x threads: the machine is shared)
    cpu_s: float = 0.0

    def process_s(self, layout: str) -> float:
        """The process in one layout, built and measured: points, rings, balance, layout."""
        return self.points_s + self.rings_s + self.balance_s + self.layouts_s.get(layout, 0.0)


@dataclass
class ProcessCost:
    rings: list[RingCost]
    layouts: list[str]
    #: bytes per layout over every ring, plus the shared server table once
    total_bytes: dict[str, int]
    shared_bytes: int
    build_s: float
    built_rings: int
    #: measured bytes per entry per layout, over the built rings
    bytes_per_entry: dict[str, float] = field(default_factory=dict)
    #: where the time went (None in results written before it was recorded)
    timing: ProcessTiming | None = None

    @property
    def estimated(self) -> bool:
        return self.built_rings < len(self.rings)


def shared_table_bytes(servers: Sequence[Server]) -> int:
    """The server table a process keeps once: each name's UTF-8 bytes and an 8-byte weight."""
    return sum(len(s.name.encode()) + 8 for s in servers)


#: a process of more rings than this is a mistake of the eligibility rule, not a router
MAX_PROCESS_RINGS = 10_000
#: capabilities one server may hold under 'combinations': 2**12 subsets of them, rings all
MAX_COMBINED_CAPABILITIES = 12


class ProcessMetric(MetricBase):
    """One ring per eligibility set, each built and costed; the process's total."""

    @staticmethod
    def parse_options(table: Fields) -> ProcessOptions:
        """`[process]`: eligibility ("combinations" or a list of capability lists),
        sample_rings, layouts."""
        eligibility: tuple[tuple[str, ...], ...] = ()
        if table.has("eligibility") and table.table["eligibility"] != "combinations":
            expected = "'combinations' or a non-empty list of lists of capability names"
            value = table.take_raw("eligibility", expected=expected)
            if not isinstance(value, list) or not value or not all(
                    isinstance(s, list) and all(isinstance(c, str) for c in s) for s in value):
                raise table.error("eligibility", expected, value)
            eligibility = tuple(tuple(s) for s in value)
        else:
            table.take_choice("eligibility", ["combinations"], "combinations")
        options = ProcessOptions(
            eligibility=eligibility,
            sample_rings=table.take_int("sample_rings", 0, minimum=0, maximum=10_000),
            layouts=table.take_str_list("layouts", list(ProcessOptions.layouts),
                                        choices=[n for n, c in LAYOUTS.items()
                                                 if c.hash_bits == 32]),
        )
        table.finish()
        return options

    def working(self, shape: RunShape) -> Working:
        """The fleet's points as packed words, the ring being filtered (positions and owners
        for every point of its servers), its costliest layout being built, and the ring
        compared with a fresh build: that build's generation and the ring in the recipe's
        own layout (at most the reference's size). Counted together, not as the most of
        them: after a layout of Python objects (tuples) the allocator keeps arenas that the
        next ring does not fill (a fuzzed process of 3M entries in tuples peaked above the
        most of them)."""
        options = shape.options.get(self.name)
        if not isinstance(options, ProcessOptions):
            return NOTHING_MORE
        layouts = max(layout_cost(name).build_bytes(shape.entries) for name in options.layouts)
        return Working(float(FLEET_BYTES_PER_POINT * shape.entries + shape.ring_array_bytes
                             + layouts + GENERATION_BYTES_PER_POINT * shape.entries
                             + shape.reference_bytes))

    def cost(self, shape: RunShape, servers: Sequence[Server],
             working: Working | None = None) -> Cost:
        """`MetricBase.cost`, and the seconds of its rings: the fleet's points generated
        once and one ring built afresh to compare (each a build of the run's recipe), and
        every ring it builds filtered from those points and built in each of
        `process.layouts`: each eligibility set's, or the `sample_rings` largest when a
        sample is asked for. A ring holds the points of
        the servers with its set, so the rings' entries are the ring's, each server's
        share counted once for every set it holds."""
        found = super().cost(shape, servers, working)
        options = shape.options.get(self.name)
        if not isinstance(options, ProcessOptions) or len(shape.capabilities) != len(servers):
            return found
        sets = [set(s) for s in eligibility_sets(shape.capabilities, options.eligibility)]
        weight = sum(server.weight for server in servers)
        # servers of one capability set are in the same rings: counted by set
        shares: dict[frozenset[str], float] = {}
        for server, held in zip(servers, shape.capabilities, strict=True):
            shares[frozenset(held)] = shares.get(frozenset(held), 0.0) + server.weight / weight
        each = sorted((shape.entries * sum(share for held, share in shares.items()
                                            if needed <= held) for needed in sets),
                      reverse=True)
        each = [entries for entries in each if entries]  # a set no server holds: no ring
        # A stated sample builds that many rings, the largest always among them: priced as
        # the largest that many (a sample the machine's memory forces is not known here,
        # and every ring stays priced, the upper bound).
        built = each[:options.sample_rings] if options.sample_rings else each
        rings_entries = sum(built)
        per_entry = FILTER_SECONDS_PER_ENTRY + sum(build_seconds_per_entry(name)
                                                   for name in options.layouts)
        seconds = 2 * shape.build_seconds + per_entry * rings_entries
        return found + Cost(seconds=seconds, why_seconds=(
            f"[{self.name}]: {len(built):,} rings of {rings_entries:,.0f} entries in all, each "
            f"built in {len(options.layouts)} layouts (process.eligibility, process.layouts, "
            "process.sample_rings, the servers' capabilities)"))

    name: ClassVar[str] = "process"
    table: ClassVar[str] = "process"
    reference: ClassVar[Reference] = Reference(tables={
        "process": "A router process: one ring per eligibility set (`[process]`).",
    })
    scope: ClassVar[Scope] = "run"
    needs: ClassVar[frozenset[str]] = frozenset({"ring"})
    record_type: ClassVar[Any] = ProcessCost

    def check_scenario(self, scenario: ScenarioView, options: Any, top: Fields) -> None:
        """'combinations' (every subset of a server's capabilities a ring of the process)
        must make a router, not millions of rings."""
        if options.eligibility:
            return
        most = max(len(set(c)) for c in scenario.ring_capabilities())
        if most > MAX_COMBINED_CAPABILITIES:
            raise ScenarioError(
                f"{top.file}: process.eligibility = 'combinations' needs servers of at most "
                f"{MAX_COMBINED_CAPABILITIES} capabilities each, since each subset of them is "
                f"a ring (got a server of {most}: {2**most:,} rings); list the sets in "
                "process.eligibility")
        rings = len(eligibility_sets(scenario.ring_capabilities(), ()))
        if rings > MAX_PROCESS_RINGS:
            raise ScenarioError(
                f"{top.file}: process.eligibility = 'combinations' must make at most "
                f"{MAX_PROCESS_RINGS:,} rings (got {rings:,} from the servers' capabilities); "
                "list the sets in process.eligibility")

    def steps(self, plan: RunPlan) -> int:
        return 1

    def measure(self, context: RunContext) -> ProcessCost | None:
        options = context.options.get(self.name)
        if not isinstance(options, ProcessOptions):
            return None
        started, cpu_started = time.perf_counter(), time.process_time()
        sets = eligibility_sets(context.capabilities, options.eligibility)
        fleets = [(s, servers_with(context.servers, context.capabilities, s)) for s in sets]
        fleets = [(s, f) for s, f in fleets if f]
        entries = [context.estimated_entries(f) for _, f in fleets]
        built = self._which_to_build(entries, options)
        # Each ring's layouts are built here, so the rings come in no layout of their own.
        params = context.algorithm.params
        build_part = context.parts({**params, "layout": NO_LAYOUT} if "layout" in params
                                   else None)
        timing = ProcessTiming(points_s=round(time.perf_counter() - started, 3),
                               points=context.estimated_entries(context.servers))
        rings: list[RingCost] = []
        measured: dict[str, list[tuple[int, int]]] = {name: [] for name in options.layouts}
        layout_s = dict.fromkeys(options.layouts, 0.0)
        rings_s = balance_s = 0.0
        smallest = min(built, key=lambda i: entries[i], default=-1)
        checked = 0
        for index, ((requires, fleet), estimated) in enumerate(zip(fleets, entries,
                                                                    strict=True)):
            context.stage(f"{context.label}: process ring {index + 1} of {len(fleets)}")
            if index not in built:
                rings.append(RingCost(list(requires), len(fleet), estimated, False, {}))
                continue
            ring_started = time.perf_counter()
            algorithm = build_part(fleet)
            ring_s = time.perf_counter() - ring_started
            rings_s += ring_s
            ring = algorithm.ring
            assert ring is not None, "a process is made of rings"
            checked += self._check_ring(context, fleet, ring, index == smallest)
            costs = {}
            for name in options.layouts:
                layout_started = time.perf_counter()
                layout = LAYOUTS[name].build(ring.positions, ring.owners)
                layout_s[name] += time.perf_counter() - layout_started
                costs[name] = int(layout.nbytes) + 2 * len(fleet)
                measured[name].append((int(layout.nbytes), ring.entries))
                del layout
            balance_started = time.perf_counter()
            shares = algorithm.exact_shares()
            weights = np.array([s.weight for s in fleet])
            per_weight = shares / weights if shares is not None else None
            balance_s += time.perf_counter() - balance_started
            rings.append(RingCost(
                list(requires), len(fleet), ring.entries, True, costs, round(ring_s, 4),
                float(per_weight.std() / per_weight.mean()) if per_weight is not None
                and len(fleet) > 1 else 0.0,
                float(per_weight.max() / per_weight.mean()) if per_weight is not None
                else None))
            del algorithm, ring
        del build_part
        per_entry = {name: sum(b for b, _ in pairs) / max(1, sum(e for _, e in pairs))
                     for name, pairs in measured.items()}
        for ring_cost in rings:
            if not ring_cost.built:
                ring_cost.bytes = {name: round(per_entry[name] * ring_cost.entries)
                                   + 2 * ring_cost.servers for name in options.layouts}
        shared = shared_table_bytes(context.servers)
        totals = {name: sum(r.bytes[name] for r in rings) + shared for name in options.layouts}
        timing.rings_s, timing.balance_s = round(rings_s, 3), round(balance_s, 3)
        timing.layouts_s = {name: round(s, 3) for name, s in layout_s.items()}
        timing.checked_rings = checked
        timing.wall_s = round(time.perf_counter() - started, 3)
        timing.cpu_s = round(time.process_time() - cpu_started, 3)
        context.advance(1)
        return ProcessCost(rings, list(options.layouts), totals, shared,
                           round(timing.points_s + rings_s, 3), len(built), per_entry, timing)

    @staticmethod
    def _check_ring(context: RunContext, fleet: Sequence[Server], ring: Ring,
                    smallest: bool) -> int:
        """A ring filtered from the fleet's points must be the ring built afresh: the ring
        of all servers is compared with the run's own, the smallest with a fresh build.
        Returns how many rings were compared (a ParityError if one differs)."""
        fresh: Ring | None
        if len(fleet) == len(context.servers) and context.algorithm.ring is not None:
            fresh = context.algorithm.ring
        elif smallest:
            fresh = context.rebuild(fleet).ring
        else:
            return 0
        if fresh is None or not (np.array_equal(fresh.positions, ring.positions)
                                 and np.array_equal(fresh.owners, ring.owners)):
            raise ParityError(f"{context.label}: the process ring of {len(fleet)} servers "
                              "differs from the same ring built afresh")
        return 1

    @staticmethod
    def _which_to_build(entries: list[int], options: ProcessOptions) -> set[int]:
        """Every ring, unless a sample is asked for, or the process as the router holds it
        (every ring resident) would not fit this machine: then 8. A sample is spread
        evenly over the rings sorted by size, the largest always in it."""
        wanted = options.sample_rings or len(entries)
        available = available_memory_bytes()
        if available is not None and sum(entries) * RESIDENT_BYTES_PER_ENTRY > available:
            wanted = min(wanted, SAMPLE_WHEN_TOO_BIG)
        if wanted >= len(entries):
            return set(range(len(entries)))
        by_size = sorted(range(len(entries)), key=lambda i: entries[i])
        picks = np.linspace(0, len(by_size) - 1, wanted).round().astype(int)
        return {by_size[int(i)] for i in picks}

    def answers(self, result: Result) -> list[Answer]:
        """Per sweep point: the whole process's bytes in its smallest layout, against its
        largest."""
        lines = []
        for run in answered_runs([r for r in result.runs if r.figure(self.name)]):
            cost: ProcessCost = run.figure(self.name)
            by_size = sorted(cost.layouts, key=lambda name: cost.total_bytes[name])
            small, large = by_size[0], by_size[-1]
            least, most = kib(cost.total_bytes[small]).text, kib(cost.total_bytes[large]).text
            line = (f"{literal(run.label)}: the process's {len(cost.rings)} rings take {least} "
                    f"in {literal(small)}, the smallest layout")
            figures: tuple[str, ...] = (least,)
            if large != small:
                line += f", against {most} in {literal(large)}"
                figures += (most,)
            lines.append(Answer(f"Process ({literal(run.label)}): {len(cost.rings)} rings",
                                line + ".", figures))
        return lines

    def sections(self, result: Result) -> list[Section]:
        sections = self._sweep_summary(result)
        for run in result.runs:
            cost: ProcessCost | None = run.figure(self.name)
            if cost is None:
                continue
            rows = [[text(" + ".join(r.requires) or "(all servers)"), count(r.servers),
                     count(r.entries), *(kib(r.bytes[name]) for name in cost.layouts),
                     number(r.build_s, 3) if r.build_s is not None else text("not built"),
                     pct(r.cv_arcs, 3) if r.cv_arcs is not None else text(""),
                     number(r.peak_to_mean, 3) if r.peak_to_mean is not None else text("")]
                    for r in cost.rings]
            layouts = [literal(name) for name in cost.layouts]
            how = (f"estimated from {cost.built_rings} built rings (of {len(cost.rings)}), "
                   "at their measured bytes per entry: "
                   + ", ".join(f"{literal(n)} {b:.3f}" for n, b in cost.bytes_per_entry.items())
                   if cost.estimated else f"all {len(cost.rings)} rings built")
            totals = Table.of(["layout", "process bytes", "size", "of which shared"], [
                [text(name), count(cost.total_bytes[name]), kib(cost.total_bytes[name]),
                 kib(cost.shared_bytes)] for name in cost.layouts],
                notes=[f"Process total: {how}; build time of the built rings "
                       f"{cost.build_s:,.2f} s. Each ring adds its map from owner index to "
                       "the shared server table (2 bytes per server); the table itself "
                       "(names and weights) is counted once."])
            tables = [totals]
            if cost.timing is not None:
                tables.append(self._timing_table(cost.timing, cost.layouts, len(cost.rings)))
            chart = charts.bars(
                f"Process memory by layout ({run.label})",
                [{"layout": name, "bytes": cost.total_bytes[name],
                  "label": kib(cost.total_bytes[name]).text} for name in cost.layouts],
                category="layout", value="bytes", value_title="bytes", label="label")
            sections.append(Section(
                f"Process ({literal(run.label)}): {len(cost.rings)} rings", tables=[
                    *tables, Table.of(["ring (requires)", "servers", "entries", *layouts,
                                      "build s", "cv_arcs", "peak-to-mean"],
                                     rows)], charts=[chart]))
        return sections

    @staticmethod
    def _timing_table(timing: ProcessTiming, layouts: list[str], rings: int) -> Table:
        """Where the build went, and the process in each layout built and measured."""
        return Table.of(["step", "seconds"], [
            [text(f"the fleet's {timing.points:,} points hashed and sorted once"),
             number(timing.points_s, 2)],
            [text(f"{rings} rings filtered from them"), number(timing.rings_s, 2)],
            [text("exact balance of every ring"), number(timing.balance_s, 2)],
            *([text(f"every ring built in {literal(name)}"),
               number(timing.layouts_s.get(name, 0.0), 2)] for name in layouts),
            *([text(f"the process in {literal(name)}, built and measured"),
               number(timing.process_s(name), 2)] for name in layouts),
            [text("the process metric in all, checks included"), number(timing.wall_s, 2)],
            [text("its CPU time, over every thread"), number(timing.cpu_s, 2)],
        ], notes=[
            "Seconds of wall time as this run saw them; a CPU time well below them means "
            "the machine's cores were busy with other work.",
            "A server's points depend on it alone here, so each ring is the fleet's points "
            "of its servers, filtered in one pass (harness.core.fleet_points) rather than "
            f"hashed and sorted again; {timing.checked_rings} ring(s) were compared on this "
            "run with the same ring built afresh (the ring of all servers with the run's "
            "own, the smallest with a fresh build) and were identical."
            if timing.points_s else
            f"Each ring built afresh; {timing.checked_rings} ring(s) compared with a "
            "fresh build."])

    def _sweep_summary(self, result: Result) -> list[Section]:
        """With a process at several sweep points (160 points per unit and the 90% cut): the
        process in each layout at each of them, on one table."""
        runs = [(run.label, cost) for run in result.runs
                if isinstance(cost := run.figure(self.name), ProcessCost)]
        if len(runs) < 2:
            return []
        first_label, first = runs[0]
        layouts = [name for name in first.layouts if all(name in c.total_bytes for _, c in runs)]
        labels = [literal(label) for label, _ in runs]
        rows = []
        for name in layouts:
            per_entry = f" ({first.bytes_per_entry[name]:.2f} B an entry at {first_label})" \
                if name in first.bytes_per_entry else ""
            rows.append([text(f"{name}{per_entry}"),
                         *(text(f"{kib(c.total_bytes[name]).text} "
                                f"({c.total_bytes[name] / 1e9:,.2f} GB)") for _, c in runs),
                         pct(runs[-1][1].total_bytes[name] / first.total_bytes[name] - 1)])
        rows.append([text("entries, every ring"),
                     *(count(sum(r.entries for r in c.rings)) for _, c in runs), text("")])
        rows.append([text("worst ring's peak-to-mean (exact shares per unit weight)"),
                     *(number(max((r.peak_to_mean for r in c.rings
                                   if r.peak_to_mean is not None), default=0.0), 3)
                       for _, c in runs), text("")])
        if all(c.timing is not None for _, c in runs):
            rows.append([text(f"built and measured in {layouts[0]}, s"),
                         *(number(c.timing.process_s(layouts[0]), 1)
                           for _, c in runs if c.timing is not None), text("")])
        timed = (" The build times are this run's wall time; the section of each sweep point "
                 "below says where they went." if all(c.timing is not None for _, c in runs)
                 else "")
        table = Table.of(["process", *labels, f"{literal(runs[-1][0])} against "
                          f"{literal(first_label)}"], rows, notes=[
            "Each process is the sum over its rings, with the server table once; sizes in "
            f"MiB and in GB of 10^9 bytes.{timed}"])
        return [Section("The process in each layout, and after the cut", tables=[table])]
