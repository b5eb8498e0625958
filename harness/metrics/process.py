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
from harness.core.fields import Fields
from harness.core.machine import available_memory_bytes
from harness.core.servers import Server, eligibility_sets, servers_with
from harness.core.tables import Section, Table, count, kib, literal, number, pct, text
from harness.metrics.base import MetricBase
from harness.recipes.layouts import LAYOUTS

if TYPE_CHECKING:
    from harness.core.model import Result
    from harness.metrics.context import RunContext, RunPlan, Scope

#: a resident ring in the router: its entries in an 8-byte layout plus our own 6-byte copy
RESIDENT_BYTES_PER_ENTRY = 14
#: rings built when the whole process would not fit
SAMPLE_WHEN_TOO_BIG = 8


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

    @property
    def estimated(self) -> bool:
        return self.built_rings < len(self.rings)


def shared_table_bytes(servers: Sequence[Server]) -> int:
    """The server table a process keeps once: each name's UTF-8 bytes and an 8-byte weight."""
    return sum(len(s.name.encode()) + 8 for s in servers)


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

    name: ClassVar[str] = "process"
    scope: ClassVar[Scope] = "run"
    needs: ClassVar[frozenset[str]] = frozenset({"ring"})
    record_type: ClassVar[Any] = ProcessCost

    def steps(self, plan: RunPlan) -> int:
        return 1

    def measure(self, context: RunContext) -> ProcessCost | None:
        options = context.options.get(self.name)
        if not isinstance(options, ProcessOptions):
            return None
        sets = eligibility_sets(context.capabilities, options.eligibility)
        fleets = [(s, servers_with(context.servers, context.capabilities, s)) for s in sets]
        fleets = [(s, f) for s, f in fleets if f]
        entries = [context.estimated_entries(f) for _, f in fleets]
        built = self._which_to_build(entries, options)
        rings: list[RingCost] = []
        measured: dict[str, list[tuple[int, int]]] = {name: [] for name in options.layouts}
        build_s = 0.0
        for index, ((requires, fleet), estimated) in enumerate(zip(fleets, entries,
                                                                    strict=True)):
            context.stage(f"{context.label}: process ring {index + 1} of {len(fleets)}")
            if index not in built:
                rings.append(RingCost(list(requires), len(fleet), estimated, False, {}))
                continue
            started = time.perf_counter()
            algorithm = context.rebuild(fleet)
            build_s += time.perf_counter() - started
            ring = algorithm.ring
            assert ring is not None, "a process is made of rings"
            costs = {}
            for name in options.layouts:
                layout = LAYOUTS[name].build(ring.positions, ring.owners)
                costs[name] = int(layout.nbytes) + 2 * len(fleet)
                measured[name].append((int(layout.nbytes), ring.entries))
                del layout
            shares = algorithm.exact_shares()
            weights = np.array([s.weight for s in fleet])
            per_weight = shares / weights if shares is not None else None
            rings.append(RingCost(
                list(requires), len(fleet), ring.entries, True, costs,
                round(time.perf_counter() - started, 4),
                float(per_weight.std() / per_weight.mean()) if per_weight is not None
                and len(fleet) > 1 else 0.0,
                float(per_weight.max() / per_weight.mean()) if per_weight is not None
                else None))
            del algorithm, ring
        per_entry = {name: sum(b for b, _ in pairs) / max(1, sum(e for _, e in pairs))
                     for name, pairs in measured.items()}
        for ring_cost in rings:
            if not ring_cost.built:
                ring_cost.bytes = {name: round(per_entry[name] * ring_cost.entries)
                                   + 2 * ring_cost.servers for name in options.layouts}
        shared = shared_table_bytes(context.servers)
        totals = {name: sum(r.bytes[name] for r in rings) + shared for name in options.layouts}
        context.advance(1)
        return ProcessCost(rings, list(options.layouts), totals, shared, round(build_s, 3),
                           len(built), per_entry)

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

    def sections(self, result: Result) -> list[Section]:
        sections = []
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
            chart = charts.bars(
                f"Process memory by layout ({run.label})",
                [{"layout": name, "bytes": cost.total_bytes[name],
                  "label": kib(cost.total_bytes[name]).text} for name in cost.layouts],
                category="layout", value="bytes", value_title="bytes", label="label")
            sections.append(Section(
                f"Process ({literal(run.label)}): {len(cost.rings)} rings", tables=[
                    totals, Table.of(["ring (requires)", "servers", "entries", *layouts,
                                      "build s", "cv_arcs", "peak-to-mean"],
                                     rows)], charts=[chart]))
        return sections
