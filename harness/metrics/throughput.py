"""Lookup throughput: nanoseconds per key, scalar and batch, over repeated rounds.

- `scalar_ns`: a Python loop calling `lookup(h)` over precomputed hashes (what
  a request path that routes one key at a time pays).
- `batch_ns`: one `lookup_many(hashes)` over the workload's key array.

Rounds of all layouts are interleaved (round 1 of every layout, then round 2,
...) so that a burst of noise on this shared machine hits them all alike; one
warm-up round comes first. Each figure is the median of its rounds, with the
spread (min, max) beside it. Compare layouts as ratios of one run.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np
import numpy.typing as npt

from harness.core import charts
from harness.core.tables import Cell, Section, Table, literal, ratio, text
from harness.metrics.base import MetricBase, RunShape, Working
from harness.metrics.random_access import RandomAccess

if TYPE_CHECKING:  # the metric's interface; the measuring code needs none of these
    from harness.core.model import Result, Run
    from harness.metrics.context import RunContext, RunPlan, Scope


class Lookups(Protocol):
    """Anything timed: a layout or an algorithm's form."""

    def lookup(self, key_hash: int) -> int: ...

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> Any: ...


@dataclass(frozen=True)
class Timing:
    """ns per key over rounds: median, and min and max as the spread."""
    median: float
    min: float
    max: float
    rounds: int

    @classmethod
    def of(cls, samples: list[float]) -> Timing:
        return cls(statistics.median(samples), min(samples), max(samples), len(samples))

    def as_record(self) -> dict[str, float]:
        return asdict(self)


def _per_key_ns(run: Callable[[], object], keys: int) -> float:
    start = time.perf_counter_ns()
    run()
    return (time.perf_counter_ns() - start) / keys


def _batch_call(
    layout: Lookups, key_hashes: npt.NDArray[np.unsignedinteger]
) -> Callable[[], object]:
    return lambda: layout.lookup_many(key_hashes)


def _scalar_loop(lookup: Callable[[Any], int], inputs: list[Any]) -> Callable[[], object]:
    def loop() -> None:
        for item in inputs:
            lookup(item)

    return loop


def measure_throughput(
    layouts: Mapping[str, Lookups],
    key_hashes: npt.NDArray[np.unsignedinteger],
    repeats: int,
    scalar_keys: int,
    progress: Callable[[], None] = lambda: None,
    peers: Mapping[str, Callable[[str], int]] | None = None,
    key_names: list[str] | None = None,
    *,
    hashes_by_name: Mapping[str, npt.NDArray[np.unsignedinteger]] | None = None,
    loops: Mapping[str, tuple[Callable[[Any], int], Sequence[Any]]] | None = None,
) -> dict[str, dict[str, Timing]]:
    """{name: {"scalar_ns": Timing, "batch_ns": Timing}} for interleaved rounds.

    Peers (third-party rings that hash keys themselves) are timed in the same
    rounds, scalar only, on the key names instead of precomputed hashes.
    `hashes_by_name` gives a layout its own key hashes (algorithms hash keys
    their own ways); `loops` are further scalar-only calls, each with its own
    inputs (a whole route on key bytes, a library call on precomputed hashes).
    """
    hashes_by_name = hashes_by_name or {}
    timed_loops: dict[str, tuple[Callable[[Any], int], Sequence[Any]]] = {
        name: (lookup_key, (key_names or [])[:scalar_keys])
        for name, lookup_key in (peers or {}).items()}
    timed_loops.update(loops or {})
    batch: dict[str, list[float]] = {name: [] for name in layouts}
    scalar: dict[str, list[float]] = {name: [] for name in [*layouts, *timed_loops]}
    own = {name: hashes_by_name.get(name, key_hashes) for name in layouts}
    scalar_hashes = {name: hashes[:scalar_keys].tolist() for name, hashes in own.items()}
    for round_number in range(repeats + 1):
        this_round: dict[str, tuple[float, ...]] = {}
        for name, layout in layouts.items():
            this_round[name] = (
                _per_key_ns(_scalar_loop(layout.lookup, scalar_hashes[name]),
                            len(scalar_hashes[name])),
                _per_key_ns(_batch_call(layout, own[name]), len(own[name])),
            )
        for name, (call, inputs) in timed_loops.items():
            this_round[name] = (_per_key_ns(_scalar_loop(call, list(inputs)), len(inputs)),)
        if round_number:  # round 0 warms caches and branch predictors
            for name, (scalar_ns, *batch_ns) in this_round.items():
                scalar[name].append(scalar_ns)
                if batch_ns:
                    batch[name].append(batch_ns[0])
        progress()
    timings = {name: {"scalar_ns": Timing.of(samples)} for name, samples in scalar.items()}
    for name, samples in batch.items():
        timings[name]["batch_ns"] = Timing.of(samples)
    return timings


@dataclass
class Throughput:
    scalar_ns: Timing
    #: None for peers, which have no batch lookup
    batch_ns: Timing | None = None
    #: one independent random read per key into an array of as many entries, timed in the
    #: same rounds (harness.metrics.random_access): the memory floor of a batch lookup
    random_access_ns: Timing | None = None


#: the name the floor is timed under, among the forms
FLOOR = "(one random access)"


class _Floor:
    """The random-access reference with the two calls the timing loop makes."""

    def __init__(self, entries: int) -> None:
        self._reads = RandomAccess(max(1, entries))

    def lookup(self, key_hash: int) -> int:
        return int(self._reads.lookup_many(np.array([key_hash], dtype=np.uint64))[0])

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> Any:
        return self._reads.lookup_many(key_hashes)


def timing_cell(timing: Timing) -> Cell:
    return Cell(f"{timing.median:,.1f} ({timing.min:,.1f}-{timing.max:,.1f})", timing.median)


def base_form(run: Run) -> str:
    """The form ratio columns compare against: the ring's base layout, else the algorithm."""
    return str(run.params.get("layout", run.algorithm))


#: a scalar key held as a list item: the pointer and its int object
SCALAR_KEY_BYTES = 48


class ThroughputMetric(MetricBase):
    """ns per key of every form (and peer), scalar and batch, in interleaved rounds."""
    name: ClassVar[str] = "throughput"
    scope: ClassVar[Scope] = "subject"
    needs: ClassVar[frozenset[str]] = frozenset({"forms"})
    record_type: ClassVar[Any] = Throughput

    def steps(self, plan: RunPlan) -> int:
        return plan.settings.repeats + 1

    def working(self, shape: RunShape) -> Working:
        """The floor's array (4 bytes an entry), a batch lookup's temporaries, and each
        form's scalar keys as a list of Python ints (about 40 bytes a key)."""
        return Working(4.0 * shape.entries + shape.largest_lookup_bytes()
                       + SCALAR_KEY_BYTES * shape.scalar_keys * (len(shape.layouts) + 2))

    def measure(self, context: RunContext) -> dict[str, Throughput]:
        context.stage(f"{context.label}: timing lookups")
        entries = max((form.entries for form in context.forms.values()), default=1)
        timed: dict[str, Lookups] = {**context.forms, FLOOR: _Floor(entries)}
        timings = measure_throughput(
            timed, context.key_hashes, context.settings.repeats,
            context.settings.scalar_keys, lambda: context.advance(1),
            peers={name: peer.lookup_key for name, peer in context.peers.items()},
            key_names=context.key_names,
        )
        floor = timings.pop(FLOOR)["batch_ns"]
        return {name: Throughput(t["scalar_ns"], t.get("batch_ns"),
                                 floor if name in context.forms else None)
                for name, t in timings.items()}

    def sections(self, result: Result) -> list[Section]:
        sections = []
        for run in result.runs:
            timed = [(s.name, t) for s in run.of_kind("layout") + run.of_kind("algorithm")
                     if (t := s.figure(self.name)) is not None and t.batch_ns is not None]
            if not timed:
                continue
            base_name = base_form(run)
            base = dict(timed).get(base_name, timed[0][1])
            rows = [[text(name), timing_cell(t.scalar_ns),
                     ratio(t.scalar_ns.median, base.scalar_ns.median),
                     timing_cell(t.batch_ns),
                     ratio(t.batch_ns.median, base.batch_ns.median if base.batch_ns else 0),
                     ratio(t.batch_ns.median, t.random_access_ns.median)
                     if t.random_access_ns is not None else text("")]
                    for name, t in timed if t.batch_ns is not None]
            floor = next((t.random_access_ns for _, t in timed
                          if t.random_access_ns is not None), None)
            notes = [f"One random access (the memory floor of a batch lookup: one independent "
                     f"4-byte read per key into an array of the ring's size), timed in the "
                     f"same rounds: {timing_cell(floor).text} ns per key."] if floor else []
            entries = run.ring.entries if run.ring else run.subjects[0].entries
            bars = [{"layout": name, "path": path, "ns": timing.median,
                     "label": f"{timing.median:,.1f} ns "
                              f"({timing.median / base_timing.median:.2f}x)"}
                    for name, t in timed
                    for path, timing, base_timing in (("batch", t.batch_ns, base.batch_ns),
                                                      ("scalar", t.scalar_ns, base.scalar_ns))
                    if timing is not None and base_timing is not None]
            chart = charts.grouped_bars(
                f"ns per key, batch and scalar ({run.label}; ratio to {base_name})", bars,
                category="layout", group="path", value="ns", value_title="ns per key (median)",
                label="label")
            sections.append(Section(f"Lookup time ({literal(run.label)}, {entries:,} entries)",
                                    tables=[
                Table.of(["layout", "scalar_ns median (min-max)", f"vs {literal(base_name)}",
                          "batch_ns median (min-max)", f"vs {literal(base_name)}",
                          "batch / one random access"], rows, notes=notes).trimmed()],
                charts=[chart]))
        return sections
