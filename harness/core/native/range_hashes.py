"""Bindings of cext/range_hashes.c: BinomialHash, FlipHash and PowerCH, stateless range
hashes.

`CRangeHash(kind, buckets)` routes batches of 64-bit key hashes in one C call, and one key
hash (`lookup`) or one key hashed with xxHash64 seed 0 (`route_one`) through a
ScalarLookup (harness.core.native.scalar), as `CJump` does for jump; no C memory is
allocated, since the bucket count is the whole state.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.native._c import ffi, lib, u16_out, u64_in
from harness.core.native.scalar import ScalarLookup

__all__ = ["MAX_BUCKETS", "CRangeHash", "RangeHashKind"]

#: a range hash's kind: its C functions are `{kind}_bucket` and `{kind}_many`
RangeHashKind = Literal["binomial", "fliphash", "powerch"]
#: owners are uint16 server indices
MAX_BUCKETS = 2**16


class CRangeHash:
    """One range hash over a fixed number of buckets (range_hashes.c)."""

    def __init__(self, kind: RangeHashKind, buckets: int) -> None:
        if kind not in ("binomial", "fliphash", "powerch"):
            raise HarnessError(f"no C range hash {kind!r} (binomial, fliphash, powerch)")
        if not 0 < buckets <= MAX_BUCKETS:
            raise HarnessError(f"{kind} routes to 1 to {MAX_BUCKETS:,} buckets (got {buckets})")
        self.kind, self.buckets = kind, buckets
        self._many: Any = getattr(lib, f"{kind}_many")
        self.lookup: Callable[[int], int] = ScalarLookup(kind, 0, buckets, 0, None)
        #: one key (bytes) hashed with xxHash64 seed 0 and looked up, in one C call
        self.route_one: Callable[[bytes], int] = ScalarLookup(f"{kind}-key", 0, buckets, 0,
                                                              None)

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        keys = u64_in(key_hashes)
        out = np.empty(len(keys), dtype=np.uint16)
        self._many(ffi.from_buffer("uint64_t[]", keys), len(keys), self.buckets, u16_out(out))
        return out
