"""Bindings of cext/lean.c: the lean ring's passes over generated points (lean.h).

`split_packed` turns a 32-bit ring's sorted packed words into positions and owners,
`sub_split_packed` does the same for some of its servers (a ring of a sub-fleet),
`sort_dedupe64` sorts and deduplicates a 64-bit ring's points in place on several
threads, and `arc_sums` adds up each server's arcs.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.native._c import ffi, lib, u16_out

__all__ = ["arc_sums", "sort_dedupe64", "split_packed", "sub_split_packed"]


def split_packed(
    words: npt.NDArray[np.uint64], keep_highest: bool
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint16], int]:
    """Sorted packed words of a 32-bit ring -> unique positions and their owners (lean.h):
    arrays as long as `words` whose first `kept` slots are filled, and `kept`."""
    positions = np.empty(len(words), dtype=np.uint32)
    owners = np.empty(len(words), dtype=np.uint16)
    kept = lib.ring_split_packed32(
        ffi.from_buffer("uint64_t[]", words),
        len(words),
        int(keep_highest),
        ffi.from_buffer("uint32_t[]", positions, require_writable=True),
        u16_out(owners),
    )
    return positions, owners, int(kept)


def sub_split_packed(
    words: npt.NDArray[np.uint64], sub_index: npt.NDArray[np.uint16], keep_highest: bool,
    capacity: int,
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint16], int]:
    """Sorted packed words of a ring of many servers -> the ring of those with
    `sub_index[owner] != 0xFFFF`, renumbered to it (lean.h): arrays of `capacity` slots (the
    points of the kept owners) whose first `kept` are filled, and `kept`."""
    if len(sub_index) != 2**16:
        raise HarnessError("sub_split_packed needs one sub-ring index per possible owner")
    positions = np.empty(capacity, dtype=np.uint32)
    owners = np.empty(capacity, dtype=np.uint16)
    kept = lib.ring_sub_split_packed32(
        ffi.from_buffer("uint64_t[]", words),
        len(words),
        ffi.from_buffer("uint16_t[]", np.ascontiguousarray(sub_index, dtype=np.uint16)),
        int(keep_highest),
        ffi.from_buffer("uint32_t[]", positions, require_writable=True),
        u16_out(owners),
        capacity,
    )
    if kept > capacity:
        raise HarnessError(f"sub_split_packed: the kept owners have more than {capacity} points")
    return positions, owners, int(kept)


def sort_dedupe64(
    positions: npt.NDArray[np.uint64], owners: npt.NDArray[np.uint16], keep_highest: bool,
    threads: int = 1,
) -> int:
    """Sort 64-bit (position, owner) pairs in place on `threads` threads and keep one
    point per position (lean.h); returns how many points lead both arrays afterwards."""
    if not (positions.flags.c_contiguous and owners.flags.c_contiguous):
        raise HarnessError("sort_dedupe64 sorts in place: positions and owners must be contiguous")
    kept = lib.ring_sort_dedupe64(
        ffi.from_buffer("uint64_t[]", positions, require_writable=True),
        u16_out(owners),
        len(positions),
        int(keep_highest),
        threads,
    )
    return int(kept)


def arc_sums(
    positions: npt.NDArray[np.unsignedinteger], owners: npt.NDArray[np.uint16], servers: int
) -> npt.NDArray[np.float64]:
    """Per-server sums of the arcs ending at its points, in hash units (lean.h)."""
    bits = positions.dtype.itemsize * 8
    positions = np.ascontiguousarray(positions)
    owners = np.ascontiguousarray(owners, dtype=np.uint16)
    size = max(servers, int(owners.max()) + 1 if len(owners) else 0)
    out = np.zeros(size, dtype=np.float64)
    getattr(lib, f"ring_arc_sums{bits}")(
        ffi.from_buffer(f"uint{bits}_t[]", positions),
        ffi.from_buffer("uint16_t[]", owners),
        len(positions),
        ffi.from_buffer("double[]", out, require_writable=True),
    )
    return out
