"""MementoHash: Coluzzi, Brocco, Antonucci and Leidi, "MementoHash: A Stateful, Minimal
Memory, Best Performing Consistent Hash Algorithm", IEEE/ACM Transactions on Networking,
2024 (arXiv:2306.09783).

`ALGORITHMS["memento"].build(servers)` takes no parameters: it is jump consistent hash
(Lamping and Veach; our `jump`, the same buckets for the same key hash) over the
servers, plus the paper's "memento", a replacement table that grows by one entry for
each server removed other than the last. The steps, named as the paper's pseudo-code
procedures and written after the authors' Java code (java-consistent-hashing-algorithms,
`MementoEngine`):

- lookup: b = jump(k, n), n the b-array size. While b has an entry (it was removed),
  with replacer r (the working buckets left just after its removal), rehash to
  b = h_b(k) mod r, then, while the bucket reached has an entry whose replacer is at
  least r (it was removed earlier, when more buckets worked), step to that replacer.
  Our key hash k is xxHash64 (seed 0) of the key and h_b(k) is output b of SplitMix64
  seeded with k (harness.core.splitmix).
- remove(b): with an empty memento and b the last bucket, n shrinks by one, as jump
  removes; otherwise the memento remembers (b, working - 1).

With nothing removed it holds nothing and routes exactly as `jump` (C: jump's batch
itself); each remembered removal costs a table entry of 8 bytes in a table kept at most
half full (16 to 32 bytes), and the bucket-to-server map 2 bytes a server from the first
one on. Servers have no weights; an added server is a rebuild from the longer list,
which is MementoHash's own addition only while nothing was removed but from the end.

The plain-Python definition (`MementoReference`) keeps the memento as a dict; the C
form is cext/memento.c. The tests check it against buckets computed with the authors'
Java (MementoEngine) with our rehash in place of theirs.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import numpy.typing as npt

from harness.core.native import memento as c_memento
from harness.core.splitmix import splitmix64_at, splitmix64_at_many
from harness.recipes.algorithms.jump import jump_reference, jump_vectorised
from harness.recipes.algorithms.removable import RemovesInPlace


class MementoReference:
    """MementoHash in plain Python: the b-array size and the memento as a dict."""

    def __init__(self, buckets: int) -> None:
        self.size = buckets
        #: removed bucket -> its replacer (working buckets just after its removal)
        self.memento: dict[int, int] = {}

    def remove(self, bucket: int) -> None:
        if not self.memento and bucket == self.size - 1:
            self.size -= 1
        else:
            self.memento[bucket] = self.size - len(self.memento) - 1

    def bucket(self, key: int) -> int:
        memento = self.memento
        b = jump_reference(key, self.size)
        replacer = memento.get(b, -1)
        while replacer >= 0:
            b = splitmix64_at(key, b) % replacer
            following = memento.get(b, -1)
            while following >= replacer:
                b = following
                following = memento.get(b, -1)
            replacer = following
        return b


def memento_vectorised(key_hashes: npt.NDArray[np.unsignedinteger],
                       reference: MementoReference) -> npt.NDArray[np.int64]:
    """The lookup over a whole array: jump, then rounds over the keys on removed buckets."""
    keys = np.asarray(key_hashes, dtype=np.uint64)
    bucket = jump_vectorised(keys, reference.size).astype(np.int64)
    # replacer[b]: -1 for a working bucket
    replacers = np.full(reference.size, -1, dtype=np.int64)
    for removed, its_replacer in reference.memento.items():
        replacers[removed] = its_replacer
    replacer = replacers[bucket]
    live = np.flatnonzero(replacer >= 0)
    while live.size:
        r = replacer[live]
        b = (splitmix64_at_many(keys[live], bucket[live].astype(np.uint64))
             % r.astype(np.uint64)).astype(np.int64)
        following = replacers[b]
        chase = np.flatnonzero(following >= r)
        while chase.size:
            b[chase] = following[chase]
            following[chase] = replacers[b[chase]]
            chase = chase[following[chase] >= r[chase]]
        bucket[live], replacer[live] = b, following
        live = live[following >= 0]
    return bucket


class MementoAlgorithm(RemovesInPlace[c_memento.CMemento, MementoReference]):
    """MementoHash over the servers, in configuration order."""

    name: ClassVar[str] = "memento"
    #: a build: its C form and reference (0.1 us a server on 1,000); measured by
    #: benchmarks/build_rates.py (2026-12-05, best of 2, load average 3.9), with a margin
    build_seconds_per_entry: ClassVar[float | None] = 200e-9

    def new_binding(self) -> c_memento.CMemento:
        return c_memento.CMemento(self.initial)

    def new_reference(self) -> MementoReference:
        return MementoReference(self.initial)

    @property
    def size(self) -> int:
        """Jump's bucket count, the paper's b-array size."""
        return self._c.size

    def reference_owners(
        self, key_hashes: npt.NDArray[np.unsignedinteger]
    ) -> npt.NDArray[np.uint16]:
        return self.server_of_bucket()[memento_vectorised(key_hashes, self._reference)]
