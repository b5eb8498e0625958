"""Bindings of cext/jumpback.c: JumpBackHash, as hash4j's `jumpBackHashSplitMix64`.

Like jump it holds nothing: `CJumpBack(buckets)` is the bucket count, its scalar lookup
a ScalarLookup (harness.core.native.scalar) and its batch one C call.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.native._c import ffi, lib, u16_out, u64_in
from harness.core.native.scalar import ScalarLookup

__all__ = ["CJumpBack"]


class CJumpBack:
    """JumpBackHash over a fixed number of buckets: no memory at all."""

    #: no one-call route: scalar.c has no "jumpback-key" kind that hashes the key first
    route_one: None = None

    def __init__(self, buckets: int) -> None:
        if not 0 < buckets <= 2**16:
            raise HarnessError(f"jumpback routes to 1 to 65,536 buckets (got {buckets:,})")
        self.buckets = buckets
        self.lookup: Callable[[int], int] = ScalarLookup("jumpback", 0, buckets, 0, None)

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        keys = u64_in(key_hashes)
        out = np.empty(len(keys), dtype=np.uint16)
        lib.jumpback_many(ffi.from_buffer("uint64_t[]", keys), len(keys), self.buckets,
                          u16_out(out))
        return out


def jumpback_bucket(key_hash: int, buckets: int) -> int:
    """One bucket for any count from 1 to 2**31 - 1, as hash4j allows (for tests)."""
    if not 0 < buckets < 2**31:
        raise HarnessError(f"jumpback takes 1 to 2,147,483,647 buckets (got {buckets:,})")
    return int(lib.jumpback_bucket(key_hash, buckets))
