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

#: an operation's reference round, prepared for one ring and one key set
Reference = Callable[[], object]


def build_reference(
    positions: npt.NDArray[np.unsignedinteger], owners: npt.NDArray[np.uint16], nbytes: int
) -> Reference:
    """Copy positions and owners (what any build must read) and fill a fresh buffer of the
    layout's own size (what it must write), so that both allocate alike
    (the suite also pins malloc's thresholds: harness.benchgate.allocator).
    """
    return lambda: (positions.copy(), owners.copy(), np.ones(nbytes, dtype=np.uint8))


def scalar_reference(positions: npt.NDArray[np.unsignedinteger], keys: list[int]) -> Reference:
    """A Python loop of `bisect_left` over a contiguous array.array of the positions."""
    typecode = "I" if positions.dtype.itemsize == 4 else "Q"
    table = array.array(typecode, positions.tobytes())
    search = bisect.bisect_left

    def loop() -> None:
        for key in keys:
            search(table, key)

    return loop


def batch_reference(
    positions: npt.NDArray[np.unsignedinteger], keys: npt.NDArray[np.unsignedinteger]
) -> Reference:
    """One `np.searchsorted` of all keys over the contiguous positions."""
    contiguous = np.ascontiguousarray(positions)
    return lambda: np.searchsorted(contiguous, keys, side="left")
