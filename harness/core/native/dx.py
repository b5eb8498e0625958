"""Bindings of cext/dx.c: DxHash, one bit a slot.

`CDx(capacity, working)` sets the first `working` of `capacity` slots working;
`without(slot)` is a new CDx with that slot's bit cleared, this one left as it was. The
bits (and the bucket-to-server map, from the first removal on) come from `ffi.new`
(malloc), so allocator profilers see them: capacity / 8 bytes, plus 2 bytes a server.
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

__all__ = ["MAX_PROBES_PER_SLOT", "CDx"]

#: probes a key makes, per slot of capacity, before it scans for a working slot (dx.h)
MAX_PROBES_PER_SLOT = int(lib.DX_MAX_PROBES_PER_SLOT)
MAX_CAPACITY = 2**32 - 1


class CDx:
    """DxHash over `capacity` slots, of which the first `working` work."""

    def __init__(self, capacity: int, working: int) -> None:
        if not 0 < working <= min(capacity, 2**16) or capacity > MAX_CAPACITY:
            raise HarnessError(f"dx takes 1 to 65,536 working slots within a capacity of at "
                               f"most {MAX_CAPACITY:,} (got {working:,} of {capacity:,})")
        self.capacity, self.initial, self.working = capacity, working, working
        self._bits = ffi.new("uint8_t[]", (capacity + 7) // 8)
        bits = np.zeros(capacity, dtype=bool)
        bits[:working] = True
        ffi.memmove(self._bits, np.packbits(bits, bitorder="little").tobytes(),
                    ffi.sizeof(self._bits))
        self._owners: Any = ffi.NULL
        self._bind()

    def _bind(self) -> None:
        self._dx = ffi.new("struct dx *", {"working": self._bits, "capacity": self.capacity,
                                          "owners": self._owners})
        # The lookup keeps the struct and its arrays alive (not this object: a ScalarLookup
        # is not tracked by the garbage collector, so a cycle would leak).
        held = (self._dx, self._bits, self._owners)
        self.lookup: Callable[[int], int] = ScalarLookup("dx", address(self._dx), 1, 0, held)

    @property
    def nbytes(self) -> int:
        """The bits and the bucket-to-server map, if any."""
        owners = 0 if self._owners == ffi.NULL else int(ffi.sizeof(self._owners))
        return int(ffi.sizeof(self._bits)) + owners

    def bits(self) -> npt.NDArray[np.bool_]:
        """Whether each slot works (a copy)."""
        packed = np.frombuffer(ffi.buffer(self._bits), dtype=np.uint8)
        return np.unpackbits(packed, bitorder="little")[: self.capacity].astype(bool)

    def owners(self) -> npt.NDArray[np.uint16]:
        """The server of each slot that started working."""
        return owners_array(self._owners, self.initial)

    def without(self, slot: int) -> CDx:
        """A copy with `slot` (working, not the last working one) removed."""
        if (not 0 <= slot < self.initial or not (self._bits[slot >> 3] >> (slot & 7)) & 1
                or self.working < 2):
            raise HarnessError(f"dx can remove only a working slot while another one works "
                               f"(got slot {slot} of {self.working} working)")
        fallen = CDx.__new__(CDx)
        fallen.capacity, fallen.initial, fallen.working = (self.capacity, self.initial,
                                                           self.working - 1)
        fallen._bits = ffi.new("uint8_t[]", ffi.sizeof(self._bits))
        ffi.memmove(fallen._bits, self._bits, ffi.sizeof(self._bits))
        fallen._bits[slot >> 3] &= ~(1 << (slot & 7)) & 0xFF
        fallen._owners = owners_without(self._owners, self.initial, slot)
        fallen._bind()
        return fallen

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        keys = u64_in(key_hashes)
        out = np.empty(len(keys), dtype=np.uint16)
        lib.dx_lookup_many(self._dx, ffi.from_buffer("uint64_t[]", keys), len(keys),
                           u16_out(out))
        return out
