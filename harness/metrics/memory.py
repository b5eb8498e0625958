"""Memory of one layout, measured at the allocator by memray in a fresh process.

Each (ring, layout) pair is measured in its own subprocess
(`python -m harness.metrics.memory layout NAME RING.npz`), so that layouts do
not share allocator state, caches or arenas. A peer (a third-party ring
library) is measured the same way from its servers and key names
(`... peer NAME SPEC.json`); its lookup peak covers looking the keys up one by
one, as it has no batch lookup. memray sees every allocation,
including those made in C by malloc (cffi) and numpy's data buffers.

- `structure_bytes`: bytes allocated while building and still held after
  (the layout's own memory; the input arrays existed before and do not count).
- `build_peak_bytes`: the most memory held at any moment during the build.
- `lookup_peak_bytes`: the most extra memory held during one batch lookup of
  the workload's keys; it includes the result (2 bytes a key) and any hidden
  copy of the ring a layout makes (numpy-packed copies its hash column).
- `rss_before_bytes`, `rss_after_bytes`: resident set size around the build,
  context only (lazy pages and allocator caching blur it).
- `tracemalloc_bytes`: what Python's tracemalloc sees of the same build (its
  own pass, after memray's, since each would count the other's bookkeeping):
  Python objects and numpy's buffers (numpy reports them to tracemalloc), but
  not memory that C code takes from malloc, such as the cffi layouts' arrays.
  A cross-check, and a warning about what tracemalloc-based tools miss.
"""

from __future__ import annotations

import functools
import json
import sys
import tempfile
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from harness.core import charts
from harness.core.cost import Cost
from harness.core.servers import Server
from harness.core.tables import (
    Answer,
    Cell,
    Section,
    Table,
    count,
    kib,
    literal,
    number,
    ratio,
    text,
)
from harness.metrics.base import MetricBase, RunShape, Working, answered_runs
from harness.metrics.foreign.memory_probe import measure_library
from harness.metrics.instruments.probes import (
    PROBE_PROCESS_BYTES,
    rss_bytes,
    run_fresh,
    tracked,
)
from harness.metrics.instruments.timing import base_form
from harness.recipes.algorithms import get_algorithm
from harness.recipes.layouts import get_layout
from harness.recipes.peers import get_peer

if TYPE_CHECKING:  # the metric's interface; the measuring code needs none of these
    from harness.core.model import Result, Run, Subject
    from harness.metrics.context import RunContext, RunPlan, Scope


@dataclass
class Memory:
    structure_bytes: int
    bytes_per_entry: float
    build_peak_bytes: int
    lookup_peak_bytes: int
    rss_before_bytes: int
    rss_after_bytes: int
    #: None in results written before this cross-check existed
    tracemalloc_bytes: int | None = None

    def as_record(self) -> dict[str, object]:
        return asdict(self)


def _measure_built(build: Callable[[], Any], lookup_all: Callable[[Any], object]) -> Memory:
    with tempfile.TemporaryDirectory(prefix="ring-harness-memray-") as tmp:
        workdir = Path(tmp)
        rss_before = rss_bytes()
        built, held, build_peak = tracked(build, workdir, "build")
        rss_after = rss_bytes()
        _, _, lookup_peak = tracked(functools.partial(lookup_all, built), workdir, "lookup")
    entries = int(built.entries)
    del built  # one structure at a time: the tracemalloc pass builds its own
    tracemalloc.start()
    try:
        rebuilt = build()
        tracemalloc_bytes = tracemalloc.get_traced_memory()[0]
        del rebuilt
    finally:
        tracemalloc.stop()
    return Memory(
        structure_bytes=held,
        # A foreign library may not know its point count (0): no figure per entry then.
        bytes_per_entry=held / entries if entries else 0.0,
        build_peak_bytes=build_peak,
        lookup_peak_bytes=lookup_peak,
        rss_before_bytes=rss_before,
        rss_after_bytes=rss_after,
        tracemalloc_bytes=tracemalloc_bytes,
    )


def measure_layout_here(layout_name: str, ring_file: Path) -> Memory:
    """Measure a layout in this process (the subprocess entry point calls this)."""
    layout_class = get_layout(layout_name)
    with np.load(ring_file) as data:
        positions, owners, keys = data["positions"], data["owners"], data["keys"]
    return _measure_built(
        lambda: layout_class.build(positions, owners),
        lambda layout: layout.lookup_many(keys),
    )


def measure_peer_here(peer_name: str, spec_file: Path) -> Memory:
    """Measure a peer library's ring in this process, from servers and key names."""
    peer_class = get_peer(peer_name)
    spec = json.loads(spec_file.read_text())
    servers = [Server(name, weight) for name, weight in spec["servers"]]
    keys: list[str] = spec["keys"]
    # Built once untracked first: a peer imports its library on its first build, and the
    # library's modules are not the peer's ring.
    peer_class.build(servers)
    return _measure_built(
        lambda: peer_class.build(servers),
        lambda peer: [peer.lookup_key(key) for key in keys],
    )


def measure_algorithm_here(algorithm_name: str, spec_file: Path) -> Memory:
    """Measure an algorithm's structure in this process, from its servers and parameters."""
    algorithm_class = get_algorithm(algorithm_name)
    spec = json.loads(spec_file.read_text())
    servers = [Server(name, weight) for name, weight in spec["servers"]]
    # The keys are hashed here, the algorithm's own way: a key hash may refer to state of
    # the process that made it (rendezvous's key table), so the parent's cannot be reused.
    names = [name.encode() for name in spec["key_names"]]
    keys = algorithm_class.build(servers, **spec["params"]).hash_keys(names)
    return _measure_built(
        lambda: algorithm_class.build(servers, **spec["params"]),
        lambda algorithm: algorithm.lookup_many(keys),
    )


PROBES: dict[str, Callable[[str, Path], Memory]] = {
    "layout": measure_layout_here, "peer": measure_peer_here,
    "algorithm": measure_algorithm_here,
}


def measure_in_subprocess(kind: str, name: str, spec_file: Path) -> Memory:
    """Measure one layout or peer in a fresh Python process; raise HarnessError if it fails."""
    return Memory(**json.loads(run_fresh("harness.metrics.memory", [kind, name], spec_file,
                                         name)))


def save_ring_for_probe(
    path: Path,
    positions: npt.NDArray[np.unsignedinteger],
    owners: npt.NDArray[np.uint16],
    keys: npt.NDArray[np.unsignedinteger],
) -> None:
    np.savez(path, positions=positions, owners=owners, keys=keys)


def save_peer_spec(path: Path, servers: list[tuple[str, float]], keys: list[str]) -> None:
    path.write_text(json.dumps({"servers": servers, "keys": keys}))


#: a key's name in a probe's spec file, once read (JSON text, then a str object)
NAME_BYTES = 160
#: what memray's tracker keeps for each live allocation it follows (aggregated format):
#: 80 bytes measured for the 5.9M objects of a 3M-entry tuples layout (1,539 MiB of
#: probes against 1,062 estimated without it), with margin
MEMRAY_BYTES_PER_BLOCK = 128


#: one probe's seconds: a fresh interpreter importing the harness, loading the ring and
#: building one layout twice (memray's pass and tracemalloc's), then looking up every key.
#: Measured by benchmarks/run_rates.py (2026-12-05, load average 0.7 to 2.6, best of 2):
#: 0.3 s for each of numpy-aligned, cffi-packed and bucketed at 100,000 entries, 0.6 to
#: 0.7 s at 10,000,000 (about 40 ns an entry); priced with a margin of 1.5
PROBE_SECONDS = 0.45
PROBE_SECONDS_PER_ENTRY = 60e-9


class MemoryMetric(MetricBase):
    """Allocator-level bytes of each form and peer, each measured alone in a fresh process."""
    name: ClassVar[str] = "memory"
    scope: ClassVar[Scope] = "subject"
    needs: ClassVar[frozenset[str]] = frozenset({"forms", "process"})
    record_type: ClassVar[Any] = Memory

    def steps(self, plan: RunPlan) -> int:
        return plan.forms + plan.peers + plan.foreign_libraries

    def working(self, shape: RunShape) -> Working:
        """The ring written for the probes (the arrays, as numpy's zip writer copies them),
        then one fresh process at a time: an interpreter, the ring and keys it loads, and
        the costliest form built, rebuilt for tracemalloc, and looked up; or a peer built
        from every key's name."""
        keys = shape.key_hash_bytes * shape.keys
        if shape.layouts:
            objects = max(cost.blocks.at(shape.entries) for cost in shape.layouts)
            probe = (shape.ring_array_bytes + keys + shape.largest_build_and_lookup_bytes()
                     + MEMRAY_BYTES_PER_BLOCK * objects)
        else:
            probe = NAME_BYTES * shape.keys + keys + 2 * shape.form_bytes
        if shape.peer_bytes:
            probe = max(probe, NAME_BYTES * shape.keys + 2 * shape.peer_bytes)
        return Working(max(shape.ring_array_bytes + keys, PROBE_PROCESS_BYTES + probe))

    def cost(self, shape: RunShape, servers: Sequence[Server],
             working: Working | None = None) -> Cost:
        """Its working bytes, and the seconds of its probes: one fresh process for each
        form and each peer of ours, one after another, each building what it measures
        (an algorithm's form as the run builds it, `shape.build_seconds`)."""
        probes = shape.forms + shape.peers
        seconds = probes * (PROBE_SECONDS + PROBE_SECONDS_PER_ENTRY * shape.entries)
        if not shape.layouts:
            seconds += shape.forms * shape.build_seconds
        return super().cost(shape, servers, working) + Cost(
            seconds=seconds, why_seconds=(
                f"[{self.name}]: {probes} fresh process(es), each building one form or "
                f"peer of {shape.entries:,} entries (measure.layouts, measure.peers)"
                if seconds else ""))

    def measure(self, context: RunContext) -> dict[str, Memory]:
        workdir = Path(context.workdir)
        jobs: list[tuple[str, str, Path]] = []
        ring = context.algorithm.ring
        for name, form in context.forms.items():
            if ring is not None:
                ring_file = workdir / "ring.npz"
                if not ring_file.exists():
                    save_ring_for_probe(ring_file, ring.positions, ring.owners,
                                        context.key_hashes)
                jobs.append(("layout", name, ring_file))
            else:
                spec_file = workdir / f"algorithm-{len(jobs)}.json"
                spec_file.write_text(json.dumps({
                    "servers": [(s.name, s.weight) for s in context.servers],
                    "params": form.params, "key_names": context.key_names}))
                jobs.append(("algorithm", type(form).name, spec_file))
        if context.peers:
            peer_file = workdir / "peer.json"
            save_peer_spec(peer_file, [(s.name, s.weight) for s in context.servers],
                           context.key_names)
            jobs += [("peer", name, peer_file) for name in context.peers]
        measured = {}
        for (kind, probe_name, spec_file), name in zip(
            jobs, [*context.forms, *context.peers], strict=True
        ):
            context.stage(f"{context.label}: memory of {name} (fresh process)")
            measured[name] = measure_in_subprocess(kind, probe_name, spec_file)
            context.advance(1)
        # A library peer is measured in a supervised worker of its own, as it runs in the
        # run (its failures contained, within its timeout); a process peer's memory is not
        # in a process of ours: the foreign metric reports what it says and its PSS.
        for name, peer in context.foreign_peers.items():
            if peer.spec.kind != "library":
                continue
            context.stage(f"{context.label}: memory of {name} (its worker)")
            measured[name] = Memory(**measure_library(peer.spec, context.servers,
                                                      context.key_names, workdir))
            context.advance(1)
        return measured

    @staticmethod
    def _sized(run: Run) -> list[tuple[Subject, Memory]]:
        return [(s, m) for s in run.of_kind("layout") + run.of_kind("algorithm")
                if (m := s.figure("memory")) is not None]

    @staticmethod
    def _title(run: Run, sized: list[tuple[Subject, Memory]]) -> str:
        entries = run.ring.entries if run.ring else sized[0][0].entries
        return f"Memory ({literal(run.label)}, {entries:,} entries)"

    def answers(self, result: Result) -> list[Answer]:
        """Per sweep point: the smallest form's structure bytes, and what it saves against
        the base form (or the largest, where the base is the smallest)."""
        lines = []
        for run in answered_runs([r for r in result.runs if self._sized(r)]):
            sized = self._sized(run)
            base_name = base_form(run)
            base = next((m for s, m in sized if s.name == base_name), sized[0][1])
            subject, smallest = min(sized, key=lambda pair: pair[1].structure_bytes)
            bytes_cell = count(smallest.structure_bytes).text
            if len(sized) == 1:
                lines.append(Answer(self._title(run, sized),
                                    f"{literal(run.label)}: {literal(subject.name)} holds "
                                    f"{bytes_cell} structure bytes (allocator).",
                                    (bytes_cell,)))
                continue
            if subject.name != base_name:
                vs = ratio(smallest.structure_bytes, base.structure_bytes).text
                lines.append(Answer(
                    self._title(run, sized),
                    f"{literal(run.label)}: the smallest, {literal(subject.name)}, holds "
                    f"{bytes_cell} structure bytes (allocator), {vs} of "
                    f"{literal(base_name)}.", (bytes_cell, vs)))
                continue
            other, largest = max(sized, key=lambda pair: pair[1].structure_bytes)
            vs = ratio(largest.structure_bytes, base.structure_bytes).text
            lines.append(Answer(
                self._title(run, sized),
                f"{literal(run.label)}: the smallest, {literal(subject.name)}, holds "
                f"{bytes_cell} structure bytes (allocator); the largest, "
                f"{literal(other.name)}, holds {vs} as much.", (bytes_cell, vs)))
        return lines

    def sections(self, result: Result) -> list[Section]:
        sections = []
        for run in result.runs:
            sized = self._sized(run)
            if not sized:
                continue
            base_name = base_form(run)
            base = next((m for s, m in sized if s.name == base_name), sized[0][1])
            rows = [[text(s.name), count(s.entries), count(s.entry_size or 0),
                     count(m.structure_bytes), number(m.bytes_per_entry),
                     ratio(m.structure_bytes, base.structure_bytes), kib(m.build_peak_bytes),
                     kib(m.lookup_peak_bytes), _share(m.tracemalloc_bytes, m.structure_bytes),
                     text(f"{kib(m.rss_before_bytes).text} -> {kib(m.rss_after_bytes).text}")]
                    for s, m in sized]
            entries = run.ring.entries if run.ring else sized[0][0].entries
            # Peers that report their structure stand beside our forms (the Peer
            # libraries table gives their figures against our smallest).
            peers = [(p, m) for p in run.of_kind("peer")
                     if (m := p.figure(self.name)) is not None and m.bytes_per_entry > 0]
            chart = charts.bars(
                f"Allocator bytes per entry ({run.label}, {entries:,} entries)",
                [{"layout": s.name, "bytes_per_entry": m.bytes_per_entry,
                  "label": f"{m.bytes_per_entry:.2f} B "
                           f"({m.structure_bytes / base.structure_bytes:.2f}x)"}
                 for s, m in sized]
                + [{"layout": f"{p.name} (peer)", "bytes_per_entry": m.bytes_per_entry,
                    "label": f"{m.bytes_per_entry:.1f} B (peer)"} for p, m in peers],
                category="layout", value="bytes_per_entry", value_title="bytes per entry",
                label="label")
            sections.append(Section(self._title(run, sized), tables=[
                Table.of(["layout", "entries", "entry_size", "structure bytes (allocator)",
                          "bytes_per_entry", f"structure bytes vs {literal(base_name)}",
                          "peak while building", "lookup_peak", "tracemalloc sees",
                          "RSS (context)"], rows,
                         notes=[STRUCTURE_BYTES_NOTE])],
                charts=[chart]))
        return sections


#: the memory vocabulary every table with a byte figure names its figure by
STRUCTURE_BYTES_NOTE = (
    "Structure bytes (allocator): what the built structure still holds, measured by "
    "memray in a fresh process (header, arrays and their slack). Entries' own bytes, "
    "which the Migration table gives, are entries x entry size, without the object's "
    "overhead. Peak while building: the most held at any moment of the build.")


def _share(part: float | None, whole: float) -> Cell:
    # Results written before tracemalloc_bytes existed leave the cell empty.
    return Cell("") if part is None else Cell(f"{part / whole:.0%}", part / whole)


if __name__ == "__main__":
    kind, name, spec = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    print(json.dumps(PROBES[kind](name, spec).as_record()))
