"""Bindings of cext/dx.c: DxHash, one bit a slot.

`CDx(capacity, working)` sets the first `working` of `capacity` slots working;
`without(slot)` is a new CDx with that slot's bit cleared, this one left as it was. The
bits (and the bucket-to-server map, from the first removal on) come from `ffi.new`
(malloc), so allocator profilers see them: capacity / 8 bytes, plus 2 bytes a server.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.native._c import ffi, lib
from harness.core.native._removable import CRemovable, owners_without

__all__ = ["MAX_PROBES_PER_SLOT", "CDx"]

#: probes a key makes, per slot of capacity, before it scans for a working slot (dx.h)
MAX_PROBES_PER_SLOT = int(lib.DX_MAX_PROBES_PER_SLOT)
MAX_CAPACITY = 2**32 - 1


class CDx(CRemovable):
    """DxHash over `capacity` slots, of which the first `working` work."""

    kind = "dx"
    unit = "slot"

    def __init__(self, capacity: int, working: int) -> None:
        if not 0 < working <= min(capacity, 2**16) or capacity > MAX_CAPACITY:
            raise HarnessError(f"dx takes 1 to 65,536 working slots within a capacity of at "
                               f"most {MAX_CAPACITY:,} (got {working:,} of {capacity:,})")
        self.capacity, self.initial, self._working = capacity, working, working
        self._bits = ffi.new("uint8_t[]", (capacity + 7) // 8)
        bits = np.zeros(capacity, dtype=bool)
        bits[:working] = True
        ffi.memmove(self._bits, np.packbits(bits, bitorder="little").tobytes(),
                    ffi.sizeof(self._bits))
        self._owners = ffi.NULL
        self._bind()

    def _bind(self) -> None:
        self._struct = ffi.new("struct dx *", {"working": self._bits, "capacity": self.capacity,
                                              "owners": self._owners})
        super()._bind()

    def _allocations(self) -> tuple[object, ...]:
        return (self._bits,)

    @property
    def working(self) -> int:
        return self._working

    def works(self, slot: int) -> bool:
        return 0 <= slot < self.initial and bool((self._bits[slot >> 3] >> (slot & 7)) & 1)

    def bits(self) -> npt.NDArray[np.bool_]:
        """Whether each slot works (a copy)."""
        packed = np.frombuffer(ffi.buffer(self._bits), dtype=np.uint8)
        return np.unpackbits(packed, bitorder="little")[: self.capacity].astype(bool)

    def _removed(self, slot: int) -> CDx:
        """A copy with `slot`'s bit cleared."""
        fallen = CDx.__new__(CDx)
        fallen.capacity, fallen.initial, fallen._working = (self.capacity, self.initial,
                                                            self._working - 1)
        fallen._bits = ffi.new("uint8_t[]", ffi.sizeof(self._bits))
        ffi.memmove(fallen._bits, self._bits, ffi.sizeof(self._bits))
        fallen._bits[slot >> 3] &= ~(1 << (slot & 7)) & 0xFF
        fallen._owners = owners_without(self._owners, self.initial, slot)
        return fallen
