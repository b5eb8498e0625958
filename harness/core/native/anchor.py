"""Bindings of cext/anchor.c: AnchorHash in its full (A, W, L, K) and memory-reduced
(A, K) forms.

`CAnchor(capacity, working, full)` is the paper's INITANCHOR; `without(bucket)` is a new
CAnchor after REMOVEBUCKET, this one left as it was (a removal is measured against the
state before it). Every array comes from `ffi.new` (malloc), so allocator profilers see
them: 16 bytes a slot in the full form, 8 in the reduced one, plus 2 bytes a server for
the bucket-to-server map once a bucket has been removed (harness.core.native._owners).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.native._c import address, ffi, lib, u16_out, u64_in
from harness.core.native._owners import owners_array, owners_without
from harness.core.native.scalar import ScalarLookup

__all__ = ["CAnchor"]

#: largest capacity: A holds working counts up to capacity - 1 in 32 bits
MAX_CAPACITY = 2**32 - 1


class CAnchor:
    """An anchor of `capacity` buckets of which the first `working` work."""

    def __init__(self, capacity: int, working: int, full: bool) -> None:
        if not 0 < working <= min(capacity, 2**16) or capacity > MAX_CAPACITY:
            raise HarnessError(f"anchor takes 1 to 65,536 working buckets within a capacity "
                               f"of at most {MAX_CAPACITY:,} (got {working:,} of {capacity:,})")
        self.capacity, self.full, self.initial = capacity, full, working
        arrays = 4 if full else 2
        self._arrays = [ffi.new("uint32_t[]", capacity) for _ in range(arrays)]
        self._owners: Any = ffi.NULL
        self._anchor = ffi.new("struct anchor *", {
            "A": self._arrays[0], "K": self._arrays[1],
            "W": self._arrays[2] if full else ffi.NULL, "L": self._arrays[3] if full else ffi.NULL,
            "capacity": capacity, "working": working, "owners": ffi.NULL})
        lib.anchor_init(self._anchor)
        self.lookup: Callable[[int], int] = self._bound_lookup()

    def _bound_lookup(self) -> Callable[[int], int]:
        # The lookup keeps the struct and every array it points to alive (not this object:
        # a ScalarLookup is not tracked by the garbage collector, so a cycle would leak).
        held = (self._anchor, *self._arrays, self._owners)
        lookup: Callable[[int], int] = ScalarLookup("anchor", address(self._anchor), 1, 0, held)
        return lookup

    @property
    def working(self) -> int:
        return int(self._anchor.working)

    @property
    def nbytes(self) -> int:
        """The arrays and the bucket-to-server map, if any."""
        owners = 0 if self._owners == ffi.NULL else int(ffi.sizeof(self._owners))
        return sum(int(ffi.sizeof(a)) for a in self._arrays) + owners

    def array(self, name: str) -> npt.NDArray[np.uint32]:
        """A copy of one of the arrays, "A", "K", "W" or "L" (the last two: full form)."""
        index = "AKWL".index(name)
        if index >= len(self._arrays):
            raise HarnessError(f"the reduced anchor holds only A and K (asked for {name})")
        return np.frombuffer(ffi.buffer(self._arrays[index]), dtype=np.uint32).copy()

    def owners(self) -> npt.NDArray[np.uint16]:
        """The server of each of the first buckets (those that started working)."""
        return owners_array(self._owners, self.initial)

    def without(self, bucket: int) -> CAnchor:
        """A copy after REMOVEBUCKET(bucket); `bucket` must be a working one, not the last."""
        if not 0 <= bucket < self.initial or self._arrays[0][bucket] != 0 or self.working < 2:
            raise HarnessError(f"anchor can remove only a working bucket while another one "
                               f"works (got bucket {bucket} of {self.working} working)")
        fallen = CAnchor.__new__(CAnchor)
        fallen.capacity, fallen.full, fallen.initial = self.capacity, self.full, self.initial
        fallen._arrays = []
        for array in self._arrays:
            copy = ffi.new("uint32_t[]", self.capacity)
            ffi.memmove(copy, array, ffi.sizeof(array))
            fallen._arrays.append(copy)
        fallen._owners = owners_without(self._owners, self.initial, bucket)
        full = self.full
        fallen._anchor = ffi.new("struct anchor *", {
            "A": fallen._arrays[0], "K": fallen._arrays[1],
            "W": fallen._arrays[2] if full else ffi.NULL,
            "L": fallen._arrays[3] if full else ffi.NULL,
            "capacity": self.capacity, "working": self.working, "owners": fallen._owners})
        lib.anchor_remove(fallen._anchor, bucket)
        fallen.lookup = fallen._bound_lookup()
        return fallen

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        keys = u64_in(key_hashes)
        out = np.empty(len(keys), dtype=np.uint16)
        lib.anchor_lookup_many(self._anchor, ffi.from_buffer("uint64_t[]", keys), len(keys),
                               u16_out(out))
        return out
