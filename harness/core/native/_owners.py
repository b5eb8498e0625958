"""The bucket-to-server map of the algorithms that remove buckets in place (AnchorHash,
MementoHash, DxHash). Private to this package.

A server list is numbered 0..n-1 in configuration order, and buckets start as those same
numbers; once a bucket in the middle is removed, the servers after it move down one
place while their buckets stay where they are. Until then no map is allocated (NULL in
C: bucket b is server b), so an algorithm with nothing removed holds no map at all.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from harness.core.native._c import ffi

#: what a removed bucket maps to: never read, since no lookup ends on a removed bucket
NO_SERVER = 0xFFFF


def owners_array(owners: Any, buckets: int) -> npt.NDArray[np.uint16]:
    """The server of each of the first `buckets` buckets (a copy; NULL reads as b -> b)."""
    if owners == ffi.NULL:
        return np.arange(buckets, dtype=np.uint16)
    return np.frombuffer(ffi.buffer(owners, 2 * buckets), dtype=np.uint16).copy()


def owners_without(owners: Any, buckets: int, bucket: int) -> Any:
    """A new map (from `ffi.new`, so allocator profilers see it) with `bucket`'s server
    gone: every later server one place down."""
    mapped = owners_array(owners, buckets)
    server = int(mapped[bucket])
    mapped[mapped > server] -= np.uint16(1)
    mapped[bucket] = NO_SERVER
    fresh = ffi.new("uint16_t[]", buckets)
    ffi.memmove(fresh, mapped.tobytes(), 2 * buckets)
    return fresh
