"""Timed rounds: nanoseconds per key of many forms, their rounds interleaved.

Rounds of all forms are interleaved (round 1 of every form, then round 2, ...) so
that a burst of noise on this shared machine hits them all alike; one warm-up round
comes first. Each figure is the median of its rounds, with the spread (min, max)
beside it. The throughput metric times a run's forms with them; comparison,
removals, clients and foreign peers time their own.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

from harness.core.tables import Cell

if TYPE_CHECKING:
    from harness.core.model import Run


class Lookups(Protocol):
    """Anything timed: a layout or an algorithm's form."""

    def lookup(self, key_hash: int) -> int: ...

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> Any: ...


#: decimals of a kept round's ns per key: a thousandth of a nanosecond, far below any
#: round's noise, keeps a result's rounds short to read and write
SAMPLE_DIGITS = 3


@dataclass(frozen=True)
class Timing:
    """ns per key over rounds: median, and min and max as the spread."""
    median: float
    min: float
    max: float
    rounds: int
    #: ns per key of each round, in order (None in results written before they were
    #: kept): what `compare` and the run history judge noise from (`harness.core.noise`)
    samples: tuple[float, ...] | None = None
    #: CPU ns per key of each round, this thread's (None where not measured): what a round
    #: costs whatever the scheduler did meanwhile. On a loaded machine a long call is taken
    #: off the CPU for other processes' time slices and its wall time grows, its CPU time
    #: hardly; `compare` reads a change that the CPU time does not show as the machine's
    cpu_samples: tuple[float, ...] | None = None

    @classmethod
    def of(cls, samples: list[float], cpu_samples: list[float] | None = None) -> Timing:
        return cls(statistics.median(samples), min(samples), max(samples), len(samples),
                   _kept(samples), _kept(cpu_samples) if cpu_samples else None)


def _kept(samples: list[float]) -> tuple[float, ...]:
    return tuple(round(sample, SAMPLE_DIGITS) for sample in samples)


def _per_key_ns(run: Callable[[], object], keys: int) -> tuple[float, float]:
    """Wall and CPU (this thread's) ns per key of one call."""
    cpu, start = time.thread_time_ns(), time.perf_counter_ns()
    run()
    wall, cpu = time.perf_counter_ns() - start, time.thread_time_ns() - cpu
    return wall / keys, cpu / keys


def _batch_call(
    layout: Lookups, key_hashes: npt.NDArray[np.unsignedinteger]
) -> Callable[[], object]:
    return lambda: layout.lookup_many(key_hashes)


def _scalar_loop(lookup: Callable[[Any], int], inputs: list[Any]) -> Callable[[], object]:
    def loop() -> None:
        for item in inputs:
            lookup(item)

    return loop


@dataclass
class Rounds:
    """ns per key of every timed call, round by round (the warm-up round left out): wall
    time, and this thread's CPU time."""
    scalar: dict[str, list[float]]
    batch: dict[str, list[float]]
    scalar_cpu: dict[str, list[float]] = field(default_factory=dict)
    batch_cpu: dict[str, list[float]] = field(default_factory=dict)

    def timings(self) -> dict[str, dict[str, Timing]]:
        timings = {name: {"scalar_ns": Timing.of(samples, self.scalar_cpu.get(name))}
                   for name, samples in self.scalar.items()}
        for name, samples in self.batch.items():
            timings[name]["batch_ns"] = Timing.of(samples, self.batch_cpu.get(name))
        return timings

    def batch_ratio(self, name: str, reference: str) -> Timing:
        """`name`'s batch time over `reference`'s, round by round: the spread of a ratio
        whose two sides move together when a neighbour loads the memory bus."""
        return Timing.of([time / base for time, base in
                          zip(self.batch[name], self.batch[reference], strict=True)])


def timed_rounds(
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
) -> Rounds:
    """Every round's ns per key, as `measure_throughput` times them."""
    hashes_by_name = hashes_by_name or {}
    timed_loops: dict[str, tuple[Callable[[Any], int], Sequence[Any]]] = {
        name: (lookup_key, (key_names or [])[:scalar_keys])
        for name, lookup_key in (peers or {}).items()}
    timed_loops.update(loops or {})
    batch: dict[str, list[float]] = {name: [] for name in layouts}
    scalar: dict[str, list[float]] = {name: [] for name in [*layouts, *timed_loops]}
    batch_cpu: dict[str, list[float]] = {name: [] for name in batch}
    scalar_cpu: dict[str, list[float]] = {name: [] for name in scalar}
    own = {name: hashes_by_name.get(name, key_hashes) for name in layouts}
    scalar_hashes = {name: hashes[:scalar_keys].tolist() for name, hashes in own.items()}
    for round_number in range(repeats + 1):
        this_round: dict[str, tuple[tuple[float, float], ...]] = {}
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
                scalar[name].append(scalar_ns[0])
                scalar_cpu[name].append(scalar_ns[1])
                if batch_ns:
                    batch[name].append(batch_ns[0][0])
                    batch_cpu[name].append(batch_ns[0][1])
        progress()
    return Rounds(scalar, batch, scalar_cpu, batch_cpu)


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
    return timed_rounds(layouts, key_hashes, repeats, scalar_keys, progress, peers,
                        key_names, hashes_by_name=hashes_by_name, loops=loops).timings()


def timing_cell(timing: Timing) -> Cell:
    return Cell(f"{timing.median:,.1f} ({timing.min:,.1f}-{timing.max:,.1f})", timing.median)


def base_form(run: Run) -> str:
    """The form ratio columns compare against: the ring's base layout, else the algorithm."""
    return str(run.params.get("layout", run.algorithm))
