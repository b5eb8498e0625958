"""Bindings of cext/random_access.c: the "one random access" reference for batch lookups
(random_access.h), for harness.metrics.random_access."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from harness.core.native._c import lib, u16_out, u32_buffer

__all__ = ["random_reads"]


def random_reads(array: npt.NDArray[np.uint32], key_hashes: npt.NDArray[np.uint32]) -> Any:
    """One independent read of `array` per key, at index (key * len) >> 32
    (random_access.h); returns the values read, as uint16."""
    keys = np.ascontiguousarray(key_hashes, dtype=np.uint32)
    out = np.empty(len(keys), dtype=np.uint16)
    lib.ring_random_reads(u32_buffer(array), len(array), u32_buffer(keys), len(keys),
                          u16_out(out))
    return out
