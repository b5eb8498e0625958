"""What the algorithms that remove any server in place share (AnchorHash, MementoHash,
DxHash): buckets numbered as the servers first were, a history of removals, and the
server list that follows from them.

Server i of the list an algorithm is built for starts as bucket i. `without(index)`
removes the bucket of the server now at `index`, as a deployment loses it: the other
servers keep their buckets, and move down one place in the list. The history (the
removed buckets, in order) is what the plain-Python reference replays, apart from the C
state it checks.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from harness.core.hashing import xxh64_many
from harness.core.servers import Server
from harness.recipes.algorithms.base import OneForm, unweighted_problem


class RemovesInPlace(OneForm):
    """An algorithm over buckets 0..n-1 from which any bucket can be removed."""

    name: ClassVar[str]

    def __init__(self, servers: Sequence[Server], params: dict[str, Any],
                 removed: array[int] | None = None, initial: int | None = None) -> None:
        super().__init__(servers, params)
        #: the buckets removed so far, in order: 4 bytes each, as a deployment would keep
        #: them (a tuple of ints would cost 40)
        self.removed: array[int] = array("I") if removed is None else removed
        #: the servers (and buckets) the algorithm was first built for
        self.initial = len(servers) if initial is None else initial

    @classmethod
    def check_servers(cls, servers: Sequence[Server], params: dict[str, Any]) -> str | None:
        return unweighted_problem(cls.name, servers)

    @classmethod
    def removal_problem(cls, servers: Sequence[Server], name: str) -> str | None:
        if len(servers) < 2:
            return f"{cls.name} keeps at least one server working (got {len(servers)})"
        return None

    @property
    def key_bits(self) -> int:
        return 64

    def hash_keys(self, keys: Sequence[bytes]) -> npt.NDArray[np.unsignedinteger]:
        # The key hash jump and maglev take too: xxHash64, seed 0.
        return xxh64_many(keys)

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

    def exact_shares(self) -> None:
        # Shares are equal only in expectation over key hashes; no structure fixes them.
        return None
