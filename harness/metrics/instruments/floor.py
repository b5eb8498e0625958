"""The memory floor of a batch lookup: one independent random read per key.

A ring that does not fit in the caches costs each lookup at least one random
access to memory; a binary search costs about log2(n) dependent ones. The
reference reads, for each key hash, one 4-byte element of an array with as
many elements as the ring has entries, at an index spread by the hash, with
no dependence between keys (cext/random_access.c). A layout's batch time
divided by this reference, timed in the same interleaved rounds, says how far
the layout is from that floor: 1x is the floor, a plain binary search is
several times it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from statistics import median
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from harness.core.native import random_access as c_random_access

KeyType = TypeVar("KeyType", bound=np.unsignedinteger)


class RandomAccess:
    """An array of `entries` uint32 with the lookup interface of a layout's batch path:
    `lookup_many(key_hashes)` reads one element per key."""

    entry_size = 4

    def __init__(self, entries: int) -> None:
        if entries < 1:
            raise ValueError(f"entries must be at least 1 (got {entries})")
        self.entries = entries
        # Written, not only allocated: every page is mapped before the first timed read;
        # on the same kind of pages as the C layouts' entries (floor_array says why).
        self._array = c_random_access.floor_array(entries)

    @property
    def nbytes(self) -> int:
        return int(self._array.nbytes)

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        return np.asarray(c_random_access.random_reads(self._array, _as_u32(key_hashes)))


def _as_u32(key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint32]:
    """32-bit keys as they are; 64-bit keys by their top 32 bits (where they are spread)."""
    keys = np.asarray(key_hashes)
    if keys.dtype == np.uint64:
        return (keys >> np.uint64(32)).astype(np.uint32)
    return np.ascontiguousarray(keys, dtype=np.uint32)


def batch_ns(lookup_many: Callable[[npt.NDArray[KeyType]], object],
             key_hashes: npt.NDArray[KeyType], repeats: int) -> list[float]:
    """Nanoseconds per key of `repeats` timed batch calls, after one untimed warm-up call."""
    lookup_many(key_hashes)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        lookup_many(key_hashes)
        times.append((time.perf_counter() - start) * 1e9 / len(key_hashes))
    return times


def random_access_ns(entries: int, key_hashes: npt.NDArray[np.unsignedinteger],
                     repeats: int = 5) -> float:
    """Median nanoseconds per key of one independent random read into an array of
    `entries` 4-byte elements, one read per key hash."""
    reference = RandomAccess(entries)
    keys = _as_u32(key_hashes)
    return median(batch_ns(reference.lookup_many, keys, repeats))


#: the name the floor is timed under, among the forms
FLOOR = "(one random access)"


class Floor:
    """The random-access reference with the two calls the timing loop makes."""

    def __init__(self, entries: int) -> None:
        self._reads = RandomAccess(max(1, entries))

    def lookup(self, key_hash: int) -> int:
        return int(self._reads.lookup_many(np.array([key_hash], dtype=np.uint64))[0])

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> Any:
        return self._reads.lookup_many(key_hashes)
