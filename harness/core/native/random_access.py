"""Bindings of cext/random_access.c: the "one random access" reference for batch lookups
(random_access.h), for harness.metrics.instruments.floor."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from harness.core.native._c import ffi, large_array, lib, u16_out, u32_buffer

__all__ = ["floor_array", "random_reads"]


#: elements the floor's array is filled with at a time: a whole np.arange would be a
#: second array of the floor's size, for a moment
_FILL_CHUNK = 1 << 20


def floor_array(entries: int) -> npt.NDArray[np.uint32]:
    """0, 1, ..., entries - 1 as uint32, in an array allocated as the C layouts' entries
    are (large_array), so that the floor and the layouts it is compared with are read on
    the same kind of pages."""
    array = np.frombuffer(ffi.buffer(large_array("uint32_t[]", entries)), dtype=np.uint32)
    for first in range(0, entries, _FILL_CHUNK):
        last = min(first + _FILL_CHUNK, entries)
        array[first:last] = np.arange(first, last, dtype=np.uint32)
    return array


def random_reads(array: npt.NDArray[np.uint32], key_hashes: npt.NDArray[np.uint32]) -> Any:
    """One independent read of `array` per key, at index (key * len) >> 32
    (random_access.h); returns the values read, as uint16."""
    keys = np.ascontiguousarray(key_hashes, dtype=np.uint32)
    out = np.empty(len(keys), dtype=np.uint16)
    lib.ring_random_reads(u32_buffer(array), len(array), u32_buffer(keys), len(keys),
                          u16_out(out))
    return out
