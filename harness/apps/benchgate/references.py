"""The fixed computations each layout's time is divided by, one per operation.

A ratio of two times taken in the same process, a moment apart, cancels most
of what a shared machine does to both (frequency changes, other tenants'
load); raw times across runs do not. Each reference works on contiguous
arrays of the same size as the ring, so it sees the same cache regime.
"""

from __future__ import annotations

import array
import bisect
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from harness.core.native import scalar as c_scalar

#: an operation's reference round, prepared for one ring and one key set
Reference = Callable[[], object]


def build_reference(
    positions: npt.NDArray[np.unsignedinteger], owners: npt.NDArray[np.uint16], nbytes: int,
    *, index_bits: int = 0, object_entries: bool = False,
) -> Reference:
    """Copy positions and owners (what any build must read) and fill a fresh buffer of the
    layout's own size (what it must write), so that both allocate alike
    (the suite also pins malloc's thresholds: harness.apps.benchgate.allocator).

    A reference must be the same kind of work as the build it divides, or a busy machine
    moves one more than the other. Two builds are not mostly moving bytes:
    - a layout that also fills an index over the top `index_bits` bits of the hash (the
      bucketed layout's offset table, `Layout.index_bits`) spends 100 us at 16k entries in
      that scalar pass, against 4 us for the copies and the fill. Its reference computes
      the same table the plain way (a count per bucket, then their running sum): against
      the copies alone, unchanged code's ratio moved from 17 to 26 between quiet runs,
      and past 2x between a busy moment and a quiet one, which failed CI; with it the
      ratio reads 1.79-2.09, quiet or busy;
    - a layout whose entries are Python objects (`Layout.object_entries`, tuples) spends
      its build in the interpreter's allocator: 2.5 ms a round against 60 us for the
      copies. Whenever the two cores had a third busy process its rounds were preempted
      and the reference's slipped between time slices: unchanged code's ratio moved from
      42 to 73-81. Its reference also makes a list of (position, owner) tuples of Python
      ints, a round at least as long as the build's (converting to lists of ints alone, half as
      long, still moved 2.3-4.9); with it the ratio reads 0.52-0.57, quiet or busy.
    """
    shift = positions.dtype.itemsize * 8 - index_bits

    def reference() -> object:
        made: tuple[object, ...] = (positions.copy(), owners.copy(),
                                    np.ones(nbytes, dtype=np.uint8))
        if index_bits:
            made += (np.cumsum(np.bincount(positions >> shift, minlength=1 << index_bits)),)
        if object_entries:
            made += (list(zip(positions.tolist(), owners.tolist(), strict=True)),)
        return made

    return reference


def scalar_reference(
    positions: npt.NDArray[np.unsignedinteger], keys: list[int], *, searches_in_c: bool
) -> Reference:
    """A Python loop of lower-bound searches over the positions, done the way the layout
    does its own: for a layout that searches in C, one call per key to a plain C lower
    bound over the bare positions (`c_scalar.search_reference`); for the others, the
    standard library's `bisect_left` over a contiguous array.array.

    Why two: on a ring larger than the L2 cache a C search waits on cache misses, while
    `bisect_left` spends most of its time creating and comparing Python ints. A Python
    reference therefore did not move with the machine's memory latency and a C search
    did: unchanged code's ratio grew 1.3-1.6x between a busy and a quiet hour, and the
    gate failed on it. A reference that misses like the layout cancels that.
    """
    if searches_in_c:
        search = c_scalar.search_reference(positions)

        def c_loop() -> None:
            for key in keys:
                search(key)

        return c_loop
    typecode = "I" if positions.dtype.itemsize == 4 else "Q"
    table = array.array(typecode, positions.tobytes())
    bisect_left = bisect.bisect_left

    def loop() -> None:
        for key in keys:
            bisect_left(table, key)

    return loop


def batch_reference(
    positions: npt.NDArray[np.unsignedinteger], keys: npt.NDArray[np.unsignedinteger]
) -> Reference:
    """One `np.searchsorted` of all keys over the contiguous positions."""
    contiguous = np.ascontiguousarray(positions)
    return lambda: np.searchsorted(contiguous, keys, side="left")
