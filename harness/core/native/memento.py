"""Bindings of cext/memento.c: MementoHash, jump plus a table of removed buckets.

`CMemento(buckets)` is jump over that many buckets and holds nothing; `without(bucket)`
is a new CMemento after the removal, this one left as it was. The table (and the
bucket-to-server map, from the first removal other than the last bucket's) come from
`ffi.new` (malloc), so allocator profilers see them: an 8-byte entry per removed bucket
in a table kept at most half full (16 to 32 bytes a removal), plus 2 bytes a server.
"""

from __future__ import annotations

from harness.core.errors import HarnessError
from harness.core.native._c import ffi, lib
from harness.core.native._removable import CRemovable, owners_without

__all__ = ["CMemento", "table_slots"]

#: smallest table, as the authors' Java Memento starts (MIN_TABLE_SIZE)
MIN_SLOTS = 16


def table_slots(entries: int) -> int:
    """Slots of a table for `entries` removed buckets: a power of two, at most half full."""
    slots = MIN_SLOTS
    while slots < 2 * entries:
        slots *= 2
    return slots


class CMemento(CRemovable):
    """MementoHash over `buckets` buckets, none removed."""

    kind = "memento"

    def __init__(self, buckets: int) -> None:
        if not 0 < buckets <= 2**16:
            raise HarnessError(f"memento routes to 1 to 65,536 buckets (got {buckets:,})")
        self.initial = buckets
        self._table = ffi.NULL
        self._owners = ffi.NULL
        self._struct = ffi.new("struct memento *", {
            "size": buckets, "removed": 0, "slots": 0, "table": ffi.NULL, "owners": ffi.NULL})
        self._bind()

    def _allocations(self) -> tuple[object, ...]:
        return (self._table,)

    @property
    def size(self) -> int:
        """Jump's bucket count (the paper's b-array size)."""
        return int(self._struct.size)

    @property
    def removed(self) -> int:
        """Buckets in the table: removed other than from the end."""
        return int(self._struct.removed)

    @property
    def working(self) -> int:
        return self.size - self.removed

    def works(self, bucket: int) -> bool:
        return 0 <= bucket < self.size and self.replacer(bucket) < 0

    def replacer(self, bucket: int) -> int:
        """The replacer the table holds for `bucket`, or -1 if it holds none."""
        return int(lib.memento_replacer(self._struct, bucket))

    def _removed(self, bucket: int) -> CMemento:
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
        fallen._struct = ffi.new("struct memento *", {
            "size": 0, "removed": 0, "slots": slots, "table": fallen._table,
            "owners": fallen._owners})
        lib.memento_remove(self._struct, fallen._struct, bucket)
        return fallen
