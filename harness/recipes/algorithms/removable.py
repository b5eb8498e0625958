"""What the algorithms that remove any server in place share (AnchorHash, MementoHash,
DxHash): buckets numbered as the servers first were, a history of removals, the server
list that follows from them, and a C form and a plain-Python reference that both replay it.

Server i of the list an algorithm is built for starts as bucket i. `without(index)`
removes the bucket of the server now at `index`, as a deployment loses it: the other
servers keep their buckets, and move down one place in the list. The history (the
removed buckets, in order) is what the plain-Python reference replays, apart from the C
state it checks. AnchorHash and DxHash also fix their buckets (or slots) at build, a
capacity at least the servers (`FixedCapacity`).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from functools import cached_property
from typing import Any, ClassVar, Generic, Protocol, Self, TypeVar

import numpy as np
import numpy.typing as npt

from harness.core.servers import Server
from harness.recipes.algorithms.buckets import Buckets

#: capacity 0 means the power of two at least this many buckets per server
DEFAULT_SLOTS_PER_SERVER = 2
MAX_CAPACITY = 2**31


class RemovableBinding(Protocol):
    """The C form (harness.core.native): its lookups, its bytes, and a copy without a
    bucket (this one left as it was: a removal is measured against the state before it)."""

    @property
    def lookup(self) -> Callable[[int], int]: ...

    @property
    def nbytes(self) -> int: ...

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]
                    ) -> npt.NDArray[np.uint16]: ...

    def without(self, bucket: int) -> Self: ...


class RemovableReference(Protocol):
    """The plain-Python definition: removals replayed in order, then one bucket a key."""

    def remove(self, bucket: int) -> None: ...

    def bucket(self, key: int) -> int: ...


BindingT = TypeVar("BindingT", bound=RemovableBinding)
ReferenceT = TypeVar("ReferenceT", bound=RemovableReference)


class RemovesInPlace(Buckets, Generic[BindingT, ReferenceT]):
    """An algorithm over buckets 0..n-1 from which any bucket can be removed."""

    name: ClassVar[str]

    def __init__(self, servers: Sequence[Server], params: dict[str, Any],
                 removed: array[int] | None = None, initial: int | None = None,
                 binding: BindingT | None = None) -> None:
        super().__init__(servers, params)
        #: the buckets removed so far, in order: 4 bytes each, as a deployment would keep
        #: them (a tuple of ints would cost 40)
        self.removed: array[int] = array("I") if removed is None else removed
        #: the servers (and buckets) the algorithm was first built for
        self.initial = len(servers) if initial is None else initial
        self._c: BindingT = self.new_binding() if binding is None else binding
        self.lookup: Callable[[int], int] = self._c.lookup

    def new_binding(self) -> BindingT:
        """The C form as built, over `initial` buckets with none removed."""
        raise NotImplementedError

    def new_reference(self) -> ReferenceT:
        """The plain-Python reference as built, before any removal is replayed."""
        raise NotImplementedError

    @classmethod
    def removal_problem(cls, servers: Sequence[Server], name: str) -> str | None:
        if len(servers) < 2:
            return f"{cls.name} keeps at least one server working (got {len(servers)})"
        return None

    @property
    def nbytes(self) -> int:
        return self._c.nbytes

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        return self._c.lookup_many(key_hashes)

    def bucket_of(self, index: int) -> int:
        """The bucket of the server now at `index`."""
        gone = set(self.removed)
        return [b for b in range(self.initial) if b not in gone][index]

    def server_of_bucket(self) -> npt.NDArray[np.uint16]:
        """The server index of every bucket that started working (removed ones: 0xFFFF)."""
        owners = np.full(self.initial, 0xFFFF, dtype=np.uint16)
        gone = set(self.removed)
        live = [b for b in range(self.initial) if b not in gone]
        owners[live] = np.arange(len(live), dtype=np.uint16)
        return owners

    def removed_with(self, bucket: int) -> array[int]:
        """The history with one more removal (a copy: this algorithm keeps its own)."""
        return array("I", [*self.removed, bucket])

    def servers_without(self, index: int) -> tuple[Server, ...]:
        return self._servers[:index] + self._servers[index + 1:]

    def without(self, index: int) -> Self:
        """The algorithm after the server at `index` leaves: its bucket removed from a copy
        of the C form, as the paper removes it, and added to the history."""
        bucket = self.bucket_of(index)
        return type(self)(self.servers_without(index), self._params,
                          self.removed_with(bucket), self.initial, self._c.without(bucket))

    def reference_owners(
        self, key_hashes: npt.NDArray[np.unsignedinteger]
    ) -> npt.NDArray[np.uint16]:
        raise NotImplementedError

    @cached_property
    def _reference(self) -> ReferenceT:
        reference = self.new_reference()
        for bucket in self.removed:
            reference.remove(bucket)
        return reference

    def reference_lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> list[int]:
        reference, owners = self._reference, self.server_of_bucket().tolist()
        return [owners[reference.bucket(int(h))] for h in key_hashes]

def capacity_for(servers: int, params: dict[str, Any]) -> int:
    """The buckets (or slots): the `capacity` parameter, or for 0 the power of two at least
    twice the servers. A power of two, not twice the servers: a fleet rebuilt with one
    server more or less keeps the same capacity (unless twice its size crosses a power of
    two), and so routes as it was, where a capacity of exactly 2N would be a new one and
    move nearly every key."""
    capacity = int(params.get("capacity", 0))
    if capacity:
        return capacity
    return 1 << max(0, DEFAULT_SLOTS_PER_SERVER * servers - 1).bit_length()


class FixedCapacity(RemovesInPlace[BindingT, ReferenceT]):
    """An algorithm whose buckets, working or not, are fixed at build (`capacity_for`)."""

    #: how the refusal of more servers than the capacity names it, e.g. ("the anchor's",
    #: "buckets")
    capacity_words: ClassVar[tuple[str, str]]

    @classmethod
    def check_servers(cls, servers: Sequence[Server], params: dict[str, Any]) -> str | None:
        problem = super().check_servers(servers, params)
        capacity = int(params.get("capacity", 0))
        if problem is None and capacity and capacity < len(servers):
            whose, unit = cls.capacity_words
            return (f"no more than {whose} capacity of {capacity:,} {unit} "
                    f"(got {len(servers):,} servers)")
        return problem

    @property
    def capacity(self) -> int:
        """The buckets, working or not, of the algorithm as first built."""
        return capacity_for(self.initial, self._params)

    @property
    def entries(self) -> int:
        return self.capacity
