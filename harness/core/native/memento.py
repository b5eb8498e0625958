"""Bindings of cext/memento.c: MementoHash, jump plus a table of removed buckets.

`CMemento(buckets)` is jump over that many buckets and holds nothing; `without(bucket)`
is a new CMemento after the removal, this one left as it was. The table (and the
bucket-to-server map, from the first removal other than the last bucket's) come from
`ffi.new` (malloc), so allocator profilers see them: an 8-byte entry per removed bucket
in a table kept at most half full (16 to 32 bytes a removal), plus 2 bytes a server.
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

__all__ = ["CMemento", "table_slots"]

#: smallest table, as the authors' Java Memento starts (MIN_TABLE_SIZE)
MIN_SLOTS = 16


def table_slots(entries: int) -> int:
    """Slots of a table for `entries` removed buckets: a power of two, at most half full."""
    slots = MIN_SLOTS
    while slots < 2 * entries:
        slots *= 2
    return slots


class CMemento:
    """MementoHash over `buckets` buckets, none removed."""

    def __init__(self, buckets: int) -> None:
        if not 0 < buckets <= 2**16:
            raise HarnessError(f"memento routes to 1 to 65,536 buckets (got {buckets:,})")
        self.initial = buckets
        self._table: Any = ffi.NULL
        self._owners: Any = ffi.NULL
        self._memento = ffi.new("struct memento *", {
            "size": buckets, "removed": 0, "slots": 0, "table": ffi.NULL, "owners": ffi.NULL})
        self.lookup: Callable[[int], int] = self._bound_lookup()

    def _bound_lookup(self) -> Callable[[int], int]:
        # The lookup keeps the struct and the arrays it points to alive (not this object:
        # a ScalarLookup is not tracked by the garbage collector, so a cycle would leak).
        held = (self._memento, self._table, self._owners)
        lookup: Callable[[int], int] = ScalarLookup("memento", address(self._memento), 1, 0,
                                                    held)
        return lookup

    @property
    def size(self) -> int:
        """Jump's bucket count (the paper's b-array size)."""
        return int(self._memento.size)

    @property
    def removed(self) -> int:
        """Buckets in the table: removed other than from the end."""
        return int(self._memento.removed)

    @property
    def working(self) -> int:
        return self.size - self.removed

    @property
    def nbytes(self) -> int:
        """The table and the bucket-to-server map, if any: 0 with nothing removed."""
        return sum(0 if a == ffi.NULL else int(ffi.sizeof(a))
                   for a in (self._table, self._owners))

    def replacer(self, bucket: int) -> int:
        """The replacer the table holds for `bucket`, or -1 if it holds none."""
        return int(lib.memento_replacer(self._memento, bucket))

    def owners(self) -> npt.NDArray[np.uint16]:
        """The server of each bucket that started working."""
        return owners_array(self._owners, self.initial)

    def without(self, bucket: int) -> CMemento:
        """A copy after `bucket` (working, not the last working one) is removed."""
        if (not 0 <= bucket < self.size or self.replacer(bucket) >= 0
                or self.working < 2):
            raise HarnessError(f"memento can remove only a working bucket while another one "
                               f"works (got bucket {bucket} of {self.working} working)")
        fallen = CMemento.__new__(CMemento)
        fallen.initial = self.initial
        shrinks = self.removed == 0 and bucket == self.size - 1
        if shrinks:
            fallen._table, slots = ffi.NULL, 0
        else:
            slots = table_slots(self.removed + 1)
            fallen._table = ffi.new("struct memento_entry[]", slots)
            ffi.memmove(fallen._table, b"\xff" * (8 * slots), 8 * slots)
        # The last bucket leaves jump's range and renumbers no server.
        fallen._owners = (self._owners if shrinks
                          else owners_without(self._owners, self.initial, bucket))
        fallen._memento = ffi.new("struct memento *", {
            "size": 0, "removed": 0, "slots": slots, "table": fallen._table,
            "owners": fallen._owners})
        lib.memento_remove(self._memento, fallen._memento, bucket)
        fallen.lookup = fallen._bound_lookup()
        return fallen

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        keys = u64_in(key_hashes)
        out = np.empty(len(keys), dtype=np.uint16)
        lib.memento_lookup_many(self._memento, ffi.from_buffer("uint64_t[]", keys), len(keys),
                                u16_out(out))
        return out
