"""What a layout costs in memory, measured here rather than listed: each layout is built at
two small sizes and looked up with two batch sizes, and straight lines are fitted through
the bytes it held, the most it held while building, and the most a batch lookup added.

The memory estimate (`harness.run.estimate`) and `plan` price rings with these lines, so a
layout added later is priced without a table to maintain. Bytes are what tracemalloc sees
(Python objects and numpy's buffers, which numpy reports to it) plus what the layout says
it holds beyond that (`nbytes`): the cffi layouts' arrays come from C's malloc, which
tracemalloc cannot see, and their builds allocate nothing else.
"""

from __future__ import annotations

import gc
import math
import sys
import tracemalloc
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from harness.core.cost import Cost
from harness.recipes.layouts import LAYOUTS
from harness.recipes.layouts.bucketed_tuning import CALIBRATION_SECONDS

#: ring sizes and batch sizes the lines are fitted through
SMALL, LARGE = 2**12, 2**16
FEW_KEYS, MANY_KEYS = 2**10, 2**14


@dataclass(frozen=True)
class Line:
    """bytes = fixed + slope x n, neither below zero."""

    fixed: float
    slope: float

    @classmethod
    def through(cls, n0: int, bytes0: float, n1: int, bytes1: float) -> Line:
        slope = max(0.0, (bytes1 - bytes0) / (n1 - n0))
        return cls(max(0.0, bytes0 - slope * n0, bytes1 - slope * n1), slope)

    def at(self, n: float) -> float:
        return self.fixed + self.slope * n


#: the ring sizes the lookup rates are priced at (`LookupRates`): in L1 and L2 caches, past
#: the L2, and past the last level
RATE_ENTRIES = (2**11, 2**16, 2**24)


@dataclass(frozen=True)
class LookupRates:
    """Seconds a lookup takes per key, batch and scalar, priced at each of `RATE_ENTRIES`
    and read between them on log2(entries) (a binary search's steps), carried on above
    the largest size at the last slope and held at the smallest's below it."""

    batch_at: tuple[float, float, float]
    scalar_at: tuple[float, float, float]

    @staticmethod
    def _at(prices: tuple[float, float, float], entries: int) -> float:
        steps = math.log2(max(entries, 1))
        sizes = [math.log2(size) for size in RATE_ENTRIES]
        if steps <= sizes[0]:
            return prices[0]
        # the segment the size falls in, the last one carried on above it
        i = 0 if steps <= sizes[1] else 1
        slope = (prices[i + 1] - prices[i]) / (sizes[i + 1] - sizes[i])
        return prices[i] + slope * (steps - sizes[i])

    def batch(self, entries: int) -> float:
        return self._at(self.batch_at, entries)

    def scalar(self, entries: int) -> float:
        return self._at(self.scalar_at, entries)


#: each kind of layout's lookups, priced from benchmarks/run_rates.py (2026-12-05 on the
#: shared 2-core machine, load average 2.7 to 2.8; 200,000 random keys in one batch and
#: 5,000 in a Python loop, as throughput's rounds time them; the best of 3 to 5 of each
#: layout of the kind, the slowest layout's best) with a margin of 1.5. Measured, ns a key
#: at 2,048, 65,536 and 16,777,216 entries, batch, then scalar: tuples 346, 943, 5,065;
#: 318, 851, 1,808. The numpy layouts 50-51, 87-178, 828-1,472; 596-623, 786-1,638,
#: 1,210-1,856. The cffi layouts 45, 155-181, 309-568; 57-61, 110-119, 241-678. Bucketed
#: 2.2, 8.2, 14.3; 30, 41, 73.
OBJECT_LOOKUPS = LookupRates((520e-9, 1.5e-6, 7.6e-6), (480e-9, 1.3e-6, 2.8e-6))
INDEXED_LOOKUPS = LookupRates((4e-9, 15e-9, 25e-9), (45e-9, 65e-9, 110e-9))
C_FLAT_LOOKUPS = LookupRates((70e-9, 270e-9, 850e-9), (90e-9, 180e-9, 1.0e-6))
NUMPY_FLAT_LOOKUPS = LookupRates((80e-9, 270e-9, 2.25e-6), (940e-9, 2.5e-6, 2.8e-6))
#: the memory floor throughput times beside the layouts, one random read a key (5.6 to
#: 11.4 ns measured in results/hash-bits-32.json), with margin
FLOOR_SECONDS_PER_KEY = 20e-9


def lookup_rates(name: str) -> LookupRates:
    """The named layout's lookup prices, by what it is made of (`LayoutBase`'s traits):
    Python objects, an index table, C's search of a flat array, or numpy's."""
    layout = LAYOUTS[name]
    if layout.object_entries:
        return OBJECT_LOOKUPS
    if layout.index_bits:
        return INDEXED_LOOKUPS
    if layout.c_functions is not None:
        return C_FLAT_LOOKUPS
    return NUMPY_FLAT_LOOKUPS


@dataclass(frozen=True)
class LayoutCost:
    """A layout's memory as lines in its entries (and, for lookups, in the batch's keys)."""

    #: bytes held once built
    held: Line
    #: the most bytes held at once while building (the result included)
    build_peak: Line
    #: the most bytes one batch lookup adds, by ring entries and by keys looked up
    lookup_by_entries: Line
    lookup_per_key: float
    #: Python objects (pymalloc blocks) it holds once built: an allocation tracker such as
    #: memray keeps a record per live allocation, so a probe of a layout of Python objects
    #: (tuples: a tuple and an int an entry) holds that much more
    blocks: Line = Line(0.0, 0.0)
    #: the bits of the hashes it holds (32 or 64): what the ring's arrays and the keys'
    #: hashes cost a point and a key, read here so that the estimate asks the layout's
    #: cost alone, not the registry beside it
    hash_bits: int = 64
    #: what its lookups cost in time (`lookup_rates`)
    lookups: LookupRates = NUMPY_FLAT_LOOKUPS
    #: whether its scalar lookup runs in C (`c_functions`): a Python one runs about twelve
    #: times as many instructions a key under callgrind
    scalar_in_c: bool = False

    def lookup_seconds(self, entries: int, batch_keys: int, scalar_keys: int) -> float:
        """Seconds `batch_keys` looked up in batches and `scalar_keys` one by one take."""
        return (batch_keys * self.lookups.batch(entries)
                + scalar_keys * self.lookups.scalar(entries))

    def held_bytes(self, entries: int) -> float:
        return self.held.at(entries)

    def build_bytes(self, entries: int) -> float:
        return max(self.build_peak.at(entries), self.held.at(entries))

    def lookup_bytes(self, entries: int, keys: int) -> float:
        return self.lookup_by_entries.at(entries) + self.lookup_per_key * keys

    def cost(self, entries: int) -> Cost:
        """Its cost in a run: held once built, at its most while it builds."""
        return Cost(self.held_bytes(entries), self.build_bytes(entries))

    def built_and_looked_up_bytes(self, entries: int, keys: int) -> float:
        """The most a fresh process holds for it: the build, then one batch lookup."""
        return self.build_bytes(entries) + self.lookup_bytes(entries, keys)


def _ring(bits: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    dtype = np.dtype(np.uint32 if bits == 32 else np.uint64)
    positions = np.arange(n, dtype=dtype) * np.array(2**bits // n, dtype=dtype)
    # Owners that vary, so that no layout compresses them away in the calibration.
    return positions, (np.arange(n) % 251).astype(np.uint16)


def _measure(name: str, entries: int, keys: int) -> tuple[float, float, float, float]:
    """(held, build peak, lookup peak) bytes of one build and one batch lookup, and the
    pymalloc blocks the built layout holds."""
    cls = LAYOUTS[name]
    positions, owners = _ring(cls.hash_bits, entries)
    key_hashes = np.random.default_rng(entries).integers(
        0, 2**cls.hash_bits, keys, dtype=np.uint64).astype(positions.dtype)
    # The blocks are counted as a difference over the whole heap: a garbage collection
    # during the build would free other objects and hide the layout's own (a 2% lower
    # estimate of scenarios/default.toml, after other tests had left garbage behind).
    collecting = gc.isenabled()
    gc.collect()
    gc.disable()
    blocks = sys.getallocatedblocks()
    tracemalloc.start()
    try:
        layout = cls.build(positions, owners)
        blocks = max(0, sys.getallocatedblocks() - blocks)
        traced, traced_peak = tracemalloc.get_traced_memory()
        unseen = max(0, layout.nbytes - traced)
        tracemalloc.reset_peak()
        before_lookup = tracemalloc.get_traced_memory()[0]
        layout.lookup_many(key_hashes)
        lookup_peak = tracemalloc.get_traced_memory()[1] - before_lookup
    finally:
        tracemalloc.stop()
        if collecting:
            gc.enable()
    return traced + unseen, traced_peak + unseen, float(lookup_peak), float(blocks)


@cache
def layout_cost(name: str) -> LayoutCost:
    """The layout's memory lines, measured on first use (about 0.1 s a layout)."""
    if tracemalloc.is_tracing():  # pragma: no cover - someone else is tracing
        raise RuntimeError("layout costs are measured with tracemalloc, which is in use")
    held0, build0, lookup0, blocks0 = _measure(name, SMALL, FEW_KEYS)
    held1, build1, lookup1, blocks1 = _measure(name, LARGE, FEW_KEYS)
    lookup2 = _measure(name, LARGE, MANY_KEYS)[2]
    return LayoutCost(
        held=Line.through(SMALL, held0, LARGE, held1),
        build_peak=Line.through(SMALL, build0, LARGE, build1),
        lookup_by_entries=Line.through(SMALL, lookup0, LARGE, lookup1),
        lookup_per_key=max(0.0, (lookup2 - lookup1) / (MANY_KEYS - FEW_KEYS)),
        blocks=Line.through(SMALL, blocks0, LARGE, blocks1),
        hash_bits=LAYOUTS[name].hash_bits,
        lookups=lookup_rates(name),
        scalar_in_c=LAYOUTS[name].c_functions is not None,
    )


#: seconds a layout's build takes per entry, by what it builds (`LayoutBase`'s traits):
#: Python objects an entry (`object_entries`: tuples, 127 to 353 ns measured at 1,000,000
#: and 100,000 entries), an index table beside the entries (`index_bits`: bucketed), or a
#: flat array copied from the ring's. Rebuilt into the same memory (the best of three
#: builds, `benchmarks/build_rates.py`, 2026-12-05, load average 4.3 on 2 shared cores) a
#: flat array takes 0.1 to 0.7 ns and bucketed 1.2 to 4.7; built into fresh memory, as a
#: run builds its rings, 3.1 to 8.3 ns and 3.3 (the committed
#: results/process-cloudflare-6gb.json: 753M entries in each of three layouts). Priced at
#: the most with a margin of 1.5 (the objects' garbage collection varies most).
OBJECT_BUILD_SECONDS_PER_ENTRY = 500e-9
INDEXED_BUILD_SECONDS_PER_ENTRY = 15e-9
FLAT_BUILD_SECONDS_PER_ENTRY = 12.5e-9


def build_seconds_per_entry(name: str) -> float:
    """Seconds the named layout's build takes per entry."""
    layout = LAYOUTS[name]
    if layout.object_entries:
        return OBJECT_BUILD_SECONDS_PER_ENTRY
    if layout.index_bits:
        return INDEXED_BUILD_SECONDS_PER_ENTRY
    return FLAT_BUILD_SECONDS_PER_ENTRY


def build_cost(names: Sequence[str], entries: int) -> Cost:
    """The seconds of building each named layout once from a ring of `entries` points."""
    seconds = sum(build_seconds_per_entry(name) for name in names) * entries
    return Cost(seconds=seconds, why_seconds=(
        f"measure.layouts: {', '.join(names)} built from {entries:,} points"
        if seconds else ""))


def lookup_cost(costs: Sequence[LayoutCost], entries: int, batch_keys: int,
                scalar_keys: int, why: str) -> Cost:
    """The seconds of every layout in `costs` looking `batch_keys` up in batches and
    `scalar_keys` one by one, in a ring of `entries` points; `why` names what sets them."""
    seconds = sum(cost.lookup_seconds(entries, batch_keys, scalar_keys) for cost in costs)
    return Cost(seconds=seconds, why_seconds=why if seconds else "")


def calibration_cost(names: Sequence[str]) -> Cost:
    """The measured layouts tuned by measurement before their timing, at one sweep point
    (`bucketed_tuning.CALIBRATION_SECONDS` each; a tuning cache hit costs nothing)."""
    tuned = [name for name in names if callable(getattr(LAYOUTS.get(name), "calibrate", None))]
    if not tuned:
        return Cost()
    return Cost(seconds=len(tuned) * CALIBRATION_SECONDS,
                why_seconds=f"measure.layouts: {', '.join(tuned)} tuned by measurement "
                            "before timing")
