"""Bindings of cext/anchor.c: AnchorHash in its full (A, W, L, K) and memory-reduced
(A, K) forms.

`CAnchor(capacity, working, full)` is the paper's INITANCHOR; `without(bucket)` is a new
CAnchor after REMOVEBUCKET, this one left as it was (a removal is measured against the
state before it). Every array comes from `ffi.new` (malloc), so allocator profilers see
them: 16 bytes a slot in the full form, 8 in the reduced one, plus 2 bytes a server for
the bucket-to-server map once a bucket has been removed (harness.core.native._removable).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.native._c import ffi, lib
from harness.core.native._removable import CRemovable, owners_without

__all__ = ["CAnchor"]

#: largest capacity: A holds working counts up to capacity - 1 in 32 bits
MAX_CAPACITY = 2**32 - 1


class CAnchor(CRemovable):
    """An anchor of `capacity` buckets of which the first `working` work."""

    kind = "anchor"

    def __init__(self, capacity: int, working: int, full: bool) -> None:
        if not 0 < working <= min(capacity, 2**16) or capacity > MAX_CAPACITY:
            raise HarnessError(f"anchor takes 1 to 65,536 working buckets within a capacity "
                               f"of at most {MAX_CAPACITY:,} (got {working:,} of {capacity:,})")
        self.capacity, self.full, self.initial = capacity, full, working
        arrays = 4 if full else 2
        self._arrays = [ffi.new("uint32_t[]", capacity) for _ in range(arrays)]
        self._owners = ffi.NULL
        self._struct = self._new_struct(working)
        lib.anchor_init(self._struct)
        self._bind()

    def _new_struct(self, working: int) -> object:
        full = self.full
        return ffi.new("struct anchor *", {
            "A": self._arrays[0], "K": self._arrays[1],
            "W": self._arrays[2] if full else ffi.NULL, "L": self._arrays[3] if full else ffi.NULL,
            "capacity": self.capacity, "working": working, "owners": self._owners})

    def _allocations(self) -> tuple[object, ...]:
        return tuple(self._arrays)

    @property
    def working(self) -> int:
        return int(self._struct.working)

    def works(self, bucket: int) -> bool:
        return 0 <= bucket < self.initial and self._arrays[0][bucket] == 0

    def array(self, name: str) -> npt.NDArray[np.uint32]:
        """A copy of one of the arrays, "A", "K", "W" or "L" (the last two: full form)."""
        index = "AKWL".index(name)
        if index >= len(self._arrays):
            raise HarnessError(f"the reduced anchor holds only A and K (asked for {name})")
        return np.frombuffer(ffi.buffer(self._arrays[index]), dtype=np.uint32).copy()

    def _removed(self, bucket: int) -> CAnchor:
        """A copy after REMOVEBUCKET(bucket)."""
        fallen = CAnchor.__new__(CAnchor)
        fallen.capacity, fallen.full, fallen.initial = self.capacity, self.full, self.initial
        fallen._arrays = []
        for array in self._arrays:
            copy = ffi.new("uint32_t[]", self.capacity)
            ffi.memmove(copy, array, ffi.sizeof(array))
            fallen._arrays.append(copy)
        fallen._owners = owners_without(self._owners, self.initial, bucket)
        fallen._struct = fallen._new_struct(self.working)
        lib.anchor_remove(fallen._struct, bucket)
        return fallen
