"""Counts: instructions and simulated cache misses per key, batch and scalar (callgrind).

Each layout of the ring is counted in a fresh process under valgrind's
callgrind with a fixed cache geometry (harness.metrics.callgrind): the same figures on
any machine, run after run, with no hardware counters needed. Opt in with
`metrics = [..., "counts"]`; it needs valgrind, and validation refuses it
without.

- `instructions_per_key`: instructions executed per key looked up.
- `l1_misses_per_key`: simulated L1 data-cache misses (reads and writes) per key.
- `ll_misses_per_key`: simulated last-level data misses per key: the ones that
  go to memory.
- `counted`: "C function NAME" for layouts with C lookups (only the search is
  counted, not the Python or cffi call around it), "whole call" for the others.

Batch: one `lookup_many` of the workload's keys. Scalar: a loop of `lookup(h)`
over the first `scalar_keys` of them. Each is counted after one warm-up pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from harness.core.cost import Cost
from harness.core.tables import Answer, Cell, Section, Table, literal, number, text
from harness.metrics.base import MetricBase, RunShape, Working, answered_runs
from harness.metrics.callgrind import (
    count_layout,
    geometry_text,
    valgrind_problem,
    valgrind_version,
)
from harness.recipes.layouts import get_layout

if TYPE_CHECKING:  # the metric's interface; the measuring code needs none of these
    from harness.core.model import Result, Run, Subject
    from harness.core.servers import Server
    from harness.metrics.context import RunContext, RunPlan, Scope


@dataclass
class PathCounts:
    """One lookup path's figures per key."""
    keys: int
    instructions_per_key: float
    l1_misses_per_key: float
    ll_misses_per_key: float
    #: "C function ring_lookup_many_packed", or "whole call"
    counted: str


@dataclass
class Counts:
    batch: PathCounts
    scalar: PathCounts
    #: the simulated caches, as callgrind's options
    cache_geometry: str
    valgrind: str


def _path(events: Any, keys: int, counted: str) -> PathCounts:
    return PathCounts(keys=keys, counted=counted, **events.per(keys))


#: valgrind running an interpreter with the harness imported: about 90 MiB measured
CALLGRIND_PROCESS_BYTES = 160 * 2**20


#: one probe's seconds under callgrind (valgrind starting, an interpreter importing the
#: harness and numpy, the ring loaded, the layout built, every key looked up in a batch
#: and `scalar_keys` one by one), all of it run about fifty times slower than natively.
#: Measured by benchmarks/run_rates.py and by hand on 2026-12-05 (load average 0.7 to 2.6,
#: best of 2): 1.9 to 2.8 s a probe at 100,000 entries, 20,000 keys and 2,000 scalar keys;
#: from 1,000,000 to 10,000,000 entries 0.13 us more an entry at most (numpy-packed 2.81
#: to 3.96 s; numpy-aligned 2.79 to 2.98, cffi-packed and bucketed 2.0 to 2.05), 10 to
#: 11 us more a batch key (200,000 keys), and a scalar key 311 to 352 us in a layout that
#: looks up in Python (numpy-packed and -aligned, 20,463 instructions a key), 30 us in C
#: (cffi-packed). Priced with a margin of 1.5. (counts-10m, six layouts of 10,000,000
#: entries, ran in 50.5 s in all on 2026-12-05 at a load average of about 2.)
CALLGRIND_PROBE_SECONDS = 3.0
CALLGRIND_SECONDS_PER_ENTRY = 0.2e-6
CALLGRIND_SECONDS_PER_KEY = 18e-6
CALLGRIND_SECONDS_PER_SCALAR_KEY = {True: 45e-6, False: 530e-6}  # scalar lookup in C?


class CountsMetric(MetricBase):
    """Instructions and simulated D1/LL misses per key of every layout (callgrind)."""
    name: ClassVar[str] = "counts"
    #: off unless listed: it needs valgrind, and adds about ten seconds of CPU per layout
    on_by_default: ClassVar[bool] = False
    scope: ClassVar[Scope] = "subject"
    needs: ClassVar[frozenset[str]] = frozenset({"forms", "process"})
    record_type: ClassVar[Any] = Counts

    def check(self) -> str | None:
        """Why this metric cannot run on this machine, or None (asked by run's machine
        check, before any work)."""
        return valgrind_problem()

    def steps(self, plan: RunPlan) -> int:
        return plan.forms

    def working(self, shape: RunShape) -> Working:
        """One probe at a time under valgrind: valgrind and an interpreter under it, and
        the ring, keys and costliest layout the probe loads and builds, counted three
        times over for valgrind's own copies of what it runs."""
        keys = shape.key_hash_bytes * shape.keys
        layout = shape.largest_build_and_lookup_bytes()
        return Working(CALLGRIND_PROCESS_BYTES + 3 * (shape.ring_array_bytes + keys + layout))

    def cost(self, shape: RunShape, servers: Sequence[Server],
             working: Working | None = None) -> Cost:
        """Its working bytes, and the seconds of its probes under callgrind, one for each
        layout, one after another (`CALLGRIND_PROBE_SECONDS` and the rates below it)."""
        scalar_keys = min(shape.scalar_keys, shape.keys)
        seconds = sum(CALLGRIND_PROBE_SECONDS + CALLGRIND_SECONDS_PER_ENTRY * shape.entries
                      + CALLGRIND_SECONDS_PER_KEY * shape.keys
                      + CALLGRIND_SECONDS_PER_SCALAR_KEY[layout.scalar_in_c] * scalar_keys
                      for layout in shape.layouts)
        return super().cost(shape, servers, working) + Cost(
            seconds=seconds, why_seconds=(
                f"[{self.name}]: {len(shape.layouts)} layout(s) of {shape.entries:,} "
                f"entries under callgrind, {shape.keys:,} keys and {scalar_keys:,} scalar "
                "keys each (measure.layouts, keys.count, measure.scalar_keys)"
                if seconds else ""))

    def measure(self, context: RunContext) -> dict[str, Counts]:
        ring = context.algorithm.ring
        if ring is None:
            return {}
        ring_file = Path(context.workdir) / "counts-ring.npz"
        np.savez(ring_file, positions=ring.positions, owners=ring.owners,
                 keys=context.key_hashes)
        keys = len(context.key_hashes)
        scalar_keys = min(context.settings.scalar_keys, keys)
        measured = {}
        for name, form in context.forms.items():
            context.stage(f"{context.label}: counting {name} under callgrind (fresh process)")
            # A ring's forms are its layouts, each named after its layout.
            functions = get_layout(form.form).c_functions
            events = count_layout(form.form, ring_file, ("batch", "scalar"),
                                  scalar_keys, functions)
            measured[name] = Counts(
                batch=_path(events["batch"], keys,
                            f"C function {functions.batch}" if functions else "whole call"),
                scalar=_path(events["scalar"], scalar_keys,
                             f"C function {functions.scalar}" if functions else "whole call"),
                cache_geometry=geometry_text(), valgrind=valgrind_version())
            context.advance(1)
        ring_file.unlink()
        return measured

    def answers(self, result: Result) -> list[Answer]:
        """Per sweep point: the layout with the fewest simulated last-level misses per key
        in a batch, against the one with the most."""
        lines = []
        for run in answered_runs([r for r in result.runs if self._counted(r)]):
            counted = self._counted(run)
            by_misses = sorted(counted, key=lambda pair: pair[1].batch.ll_misses_per_key)
            (fewest, low), (most, high) = by_misses[0], by_misses[-1]
            least = number(low.batch.ll_misses_per_key, 2).text
            worst = number(high.batch.ll_misses_per_key, 2).text
            line = (f"{literal(run.label)}: {literal(fewest.name)} has the fewest simulated "
                    f"last-level misses in a batch, {least} per key")
            figures: tuple[str, ...] = (least,)
            if most is not fewest:
                line += f", against {worst} for {literal(most.name)}"
                figures += (worst,)
            entries = run.ring.entries if run.ring else counted[0][0].entries
            lines.append(Answer(
                f"Instructions and simulated cache misses per key ({literal(run.label)}, "
                f"{entries:,} entries)", line + ".", figures))
        return lines

    def _counted(self, run: Run) -> list[tuple[Subject, Counts]]:
        return [(s, c) for s in run.of_kind("layout") + run.of_kind("algorithm")
                if (c := s.figure(self.name)) is not None]

    def sections(self, result: Result) -> list[Section]:
        sections = []
        for run in result.runs:
            counted = self._counted(run)
            if not counted:
                continue
            rows = []
            for subject, c in counted:
                timing = subject.figure("throughput")
                rows.append([
                    text(subject.name), text(_short(c.batch.counted)),
                    number(c.batch.instructions_per_key, 1),
                    number(c.batch.l1_misses_per_key, 2), number(c.batch.ll_misses_per_key, 2),
                    _ns(timing.batch_ns if timing else None),
                    number(c.scalar.instructions_per_key, 1),
                    number(c.scalar.l1_misses_per_key, 2),
                    number(c.scalar.ll_misses_per_key, 2),
                    _ns(timing.scalar_ns if timing else None)])
            entries = run.ring.entries if run.ring else counted[0][0].entries
            geometry = counted[0][1].cache_geometry
            sections.append(Section(
                f"Instructions and simulated cache misses per key ({literal(run.label)}, "
                f"{entries:,} entries)",
                paragraphs=[
                    "Counted by valgrind's callgrind (the same figures on any machine): "
                    "instructions, L1 data misses and last-level data misses per key, "
                    f"with simulated caches {literal(geometry)}. \"C\" rows count only the "
                    "layout's C search function; \"whole call\" rows count everything the "
                    "Python call does. Simulated caches have no prefetcher and no timing: misses "
                    "are counted, not what they cost. Timings (median ns per key) are "
                    "beside them where measured."],
                tables=[Table.of(
                    ["layout", "counted", "batch instr/key", "batch L1 miss/key",
                     "batch LL miss/key", "batch ns", "scalar instr/key",
                     "scalar L1 miss/key", "scalar LL miss/key", "scalar ns"], rows)]))
        return sections


def _short(counted: str) -> str:
    return "C" if counted.startswith("C function") else counted


def _ns(timing: Any) -> Cell:
    return Cell("") if timing is None else number(timing.median, 1)
