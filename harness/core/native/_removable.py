"""What the bindings of the algorithms that remove buckets in place share (AnchorHash,
MementoHash, DxHash): the bucket-to-server map, and `CRemovable`, the C state they hold,
bind, measure and copy alike. Private to this package.

A server list is numbered 0..n-1 in configuration order, and buckets start as those same
numbers; once a bucket in the middle is removed, the servers after it move down one
place while their buckets stay where they are. Until then no map is allocated (NULL in
C: bucket b is server b), so an algorithm with nothing removed holds no map at all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Self

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.native._c import address, ffi, lib, u16_out, u64_in
from harness.core.native.scalar import ScalarLookup

#: what a removed bucket maps to: never read, since no lookup ends on a removed bucket
NO_SERVER = 0xFFFF


def owners_array(owners: Any, buckets: int) -> npt.NDArray[np.uint16]:
    """The server of each of the first `buckets` buckets (a copy; NULL reads as b -> b)."""
    if owners == ffi.NULL:
        return np.arange(buckets, dtype=np.uint16)
    return np.frombuffer(ffi.buffer(owners, 2 * buckets), dtype=np.uint16).copy()


def owners_without(owners: Any, buckets: int, bucket: int) -> Any:
    """A new map (from `ffi.new`, so allocator profilers see it) with `bucket`'s server
    gone: every later server one place down."""
    mapped = owners_array(owners, buckets)
    server = int(mapped[bucket])
    mapped[mapped > server] -= np.uint16(1)
    mapped[bucket] = NO_SERVER
    fresh = ffi.new("uint16_t[]", buckets)
    ffi.memmove(fresh, mapped.tobytes(), 2 * buckets)
    return fresh


class CRemovable:
    """An algorithm's C state: a struct, the arrays it points to and the bucket-to-server
    map, from `ffi.new` (malloc) so allocator profilers see them; `without(bucket)` is a
    new state after the removal, this one left as it was (a removal is measured against
    the state before it)."""

    #: its C name: the ScalarLookup kind, and `{kind}_lookup_many`
    kind: ClassVar[str]
    #: what it removes, as its refusal names it
    unit: ClassVar[str] = "bucket"
    #: the buckets that started working, numbered as their servers were
    initial: int
    #: the struct the C functions take
    _struct: Any
    #: the bucket-to-server map: NULL until a removal renumbers a server
    _owners: Any

    @property
    def working(self) -> int:
        """The buckets working now."""
        raise NotImplementedError

    def works(self, bucket: int) -> bool:
        """Whether `bucket` is one that works now."""
        raise NotImplementedError

    def _allocations(self) -> tuple[Any, ...]:
        """The arrays the struct points to, besides the map (NULL where none is held)."""
        raise NotImplementedError

    def _removed(self, bucket: int) -> Self:
        """A copy with `bucket` removed, its lookup not yet bound."""
        raise NotImplementedError

    def _bind(self) -> None:
        # The lookup keeps the struct and every array it points to alive (not this object:
        # a ScalarLookup is not tracked by the garbage collector, so a cycle would leak).
        held = (self._struct, *self._allocations(), self._owners)
        self.lookup: Callable[[int], int] = ScalarLookup(self.kind, address(self._struct), 1,
                                                         0, held)

    @property
    def nbytes(self) -> int:
        """Its arrays and the bucket-to-server map, where held."""
        return sum(0 if a == ffi.NULL else int(ffi.sizeof(a))
                   for a in (*self._allocations(), self._owners))

    def owners(self) -> npt.NDArray[np.uint16]:
        """The server of each bucket that started working."""
        return owners_array(self._owners, self.initial)

    def without(self, bucket: int) -> Self:
        """A copy after `bucket` (working, not the last working one) is removed."""
        if not self.works(bucket) or self.working < 2:
            raise HarnessError(f"{self.kind} can remove only a working {self.unit} while "
                               f"another one works (got {self.unit} {bucket} of "
                               f"{self.working} working)")
        fallen = self._removed(bucket)
        fallen._bind()
        return fallen

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        keys = u64_in(key_hashes)
        out = np.empty(len(keys), dtype=np.uint16)
        getattr(lib, f"{self.kind}_lookup_many")(
            self._struct, ffi.from_buffer("uint64_t[]", keys), len(keys), u16_out(out))
        return out
