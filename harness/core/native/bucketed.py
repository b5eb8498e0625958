"""Bindings of cext/bucketed.c: the bucketed layout (bucketed.h).

`CBucketedRing` is a table of 2**16 + 1 bucket offsets and an array of 4-byte
`struct ring_bucket_entry`, both built in C from sorted positions; its scalar lookup is
a ScalarLookup (harness.core.native.scalar) bound to both. The entry struct's size and
offset are checked at import, as harness.core.native.ring checks its structs.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.native._c import address, c_input, ffi, lib, u16_out, u32_buffer
from harness.core.native.ring import StructSpec, check_struct
from harness.core.native.scalar import ScalarLookup

__all__ = ["BUCKETS", "BUCKET_ENTRY", "CBucketedRing", "bucket_entry_layout"]

#: `struct ring_bucket_entry` (bucketed.h): low 16 bits of the position, then idx
BUCKET_ENTRY = StructSpec(size=4, idx_offset=2, hash_bits=32)
#: buckets of the bucketed layout (top 16 bits of a 32-bit hash), as in bucketed.h
BUCKETS = 2**16

check_struct("struct ring_bucket_entry", "ring_bucket_entry", BUCKET_ENTRY)


def bucket_entry_layout() -> tuple[int, int]:
    """(sizeof, offsetof idx) of `struct ring_bucket_entry` as the C compiler laid it out."""
    return int(lib.ring_bucket_entry_size()), int(lib.ring_bucket_entry_idx_offset())


class CBucketedRing:
    """The bucketed layout of bucketed.h: a table of 2**16 + 1 bucket offsets and an
    array of 4-byte `struct ring_bucket_entry`, both built in C from sorted positions.

    Both arrays come from `ffi.new` (malloc), so allocator profilers see them.
    """

    def __init__(self, positions: npt.NDArray[np.uint32], owners: npt.NDArray[np.uint16]) -> None:
        if not 0 < len(positions) < 2**32:
            # Offsets are uint32, and a lookup always reads one entry.
            raise HarnessError(
                f"the bucketed layout holds 1 to 2**32-1 entries (got {len(positions)})"
            )
        positions = c_input(positions, np.uint32)
        owners = c_input(owners, np.uint16)
        self.entries = len(positions)
        self._offsets = ffi.new("uint32_t[]", BUCKETS + 1)
        self._array = ffi.new("struct ring_bucket_entry[]", self.entries)
        status = lib.ring_bucketed_build(
            self._offsets,
            self._array,
            u32_buffer(positions),
            ffi.from_buffer("uint16_t[]", owners),
            self.entries,
        )
        if status != 0:
            raise HarnessError("bucketed layout: positions must be sorted and unique")
        self.lookup: Callable[[int], int] = ScalarLookup(
            "bucketed", address(self._array), self.entries, address(self._offsets),
            (self._offsets, self._array),
        )

    @property
    def nbytes(self) -> int:
        """The offset table and the entries: every byte this layout allocated."""
        return int(ffi.sizeof(self._offsets) + ffi.sizeof(self._array))

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        # A uint32, C-contiguous, aligned input is read in place; anything else is converted once.
        keys = c_input(key_hashes, np.uint32)
        out = np.empty(len(keys), dtype=np.uint16)
        lib.ring_bucketed_lookup_many(
            self._offsets, self._array, u32_buffer(keys), len(keys), u16_out(out)
        )
        return out
