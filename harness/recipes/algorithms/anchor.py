"""AnchorHash: Mendelson, Vargaftik, Barabash, Lorenz, Keslassy and Orda, "AnchorHash: A
Scalable Consistent Hash", IEEE/ACM Transactions on Networking, 2020 (arXiv:1812.09674).

`ALGORITHMS["anchor"].build(servers, capacity=a, arrays="full")` holds an anchor of `a`
buckets (default: the power of two at least twice the servers), of which the first
len(servers) work. The steps, named as the procedures of the paper's pseudo-code; the
line numbers count the non-blank lines, from INITANCHOR on, of the listing the authors
publish with their code (github.com/anchorhash/cpp-anchorhash, `mem/README.md`):

- INITANCHOR(a, w) (lines 1-8): A[b] = 0 and K[b] = b for every bucket; the buckets
  b = a-1 down to w start removed, A[b] = b, as if removed one by one from the top.
- GETBUCKET(k) (lines 13-18): b = k mod a; while A[b] > 0 (b is removed), rehash to
  h = h_b(k) mod A[b] and take BUCKETATVIEW(h, A[b]) (lines 9-12): follow K while the
  bucket reached was removed before b was (A >= A[b]). Our key hash k is xxHash64 (seed
  0) of the key and h_b(k) is output b of SplitMix64 seeded with k (harness.core.splitmix),
  so that rehashes for different buckets are independent, as the paper requires.
- REMOVEBUCKET(b) (lines 25-30): N = N - 1, A[b] = N, and K[b] = the bucket that held
  position N of the working set. The full form (`arrays="full"`, A, W, L and K: 16 bytes a
  slot) reads it from W in O(1) and moves it into b's place in W and L; the reduced form
  (`arrays="reduced"`, A and K: 8 bytes a slot) finds it as BUCKETATVIEW(N-1, N), a walk
  as long as a lookup. Both leave the same A and K, so they route every key alike.

ADDBUCKET (lines 19-24) is not offered: an added server is a rebuild from the longer
list, which equals ADDBUCKET only when it restores the initial order (nothing removed
since the build). Servers have no weights. `without(index)` removes any server's bucket.

The plain-Python definition (`AnchorReference`) is the full form, list for list; the C
forms are cext/anchor.c. The tests check both against buckets computed with the authors'
C++ (AnchorHashQre and mem/AnchorHash) with our rehash in place of their CRC-32 one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from harness.core.native import anchor as c_anchor
from harness.core.params import Param
from harness.core.servers import Server
from harness.core.splitmix import splitmix64_at, splitmix64_at_many
from harness.recipes.algorithms.removable import (
    DEFAULT_SLOTS_PER_SERVER,
    MAX_CAPACITY,
    FixedCapacity,
    capacity_for,
)

#: the two forms, by the arrays they hold
FORMS = ("full", "reduced")
#: bytes a slot: four uint32 arrays (A, W, L, K) in the full form, two in the reduced one
SLOT_BYTES = {"full": 16, "reduced": 8}
#: bytes a slot costs at most once built, references included (`estimated_bytes`)
ANCHOR_BYTES_PER_SLOT = 208.0
#: a client's build over its arrays alone (`estimated_client_bytes`): measured 1.5% at most
CLIENT_MARGIN = 1.125
#: a server of the list a client's build keeps
SERVER_BYTES = 64.0

CAPACITY = Param("capacity", "int", 0,
                 "buckets of the anchor, working or not, at least the servers "
                 f"(0: the power of two at least {DEFAULT_SLOTS_PER_SERVER} per server)",
                 minimum=0, maximum=MAX_CAPACITY)
ARRAYS = Param("arrays", "choice", "full",
               "the paper's four arrays (A, W, L, K) or the memory-reduced two (A, K)",
               choices=lambda: FORMS)


class AnchorReference:
    """AnchorHash's full form in plain Python: INITANCHOR, REMOVEBUCKET, GETBUCKET."""

    def __init__(self, capacity: int, working: int) -> None:
        self.capacity, self.working = capacity, working
        self.A = [0 if b < working else b for b in range(capacity)]
        self.K = list(range(capacity))
        self.W = list(range(capacity))
        self.L = list(range(capacity))

    def remove(self, bucket: int) -> None:
        self.working -= 1
        last = self.W[self.working]
        self.W[self.L[bucket]] = last
        self.L[last] = self.L[bucket]
        self.K[bucket] = last
        self.A[bucket] = self.working

    def bucket(self, key: int) -> int:
        A, K = self.A, self.K
        b = key % self.capacity
        while A[b] > 0:
            h = splitmix64_at(key, b) % A[b]
            while A[h] >= A[b]:
                h = K[h]
            b = h
        return b


def anchor_vectorised(key_hashes: npt.NDArray[np.unsignedinteger], A: npt.NDArray[np.uint32],
                      K: npt.NDArray[np.uint32]) -> npt.NDArray[np.int64]:
    """GETBUCKET over a whole array: each round rehashes the keys still on removed buckets."""
    keys = np.asarray(key_hashes, dtype=np.uint64)
    a, k = A.astype(np.int64), K.astype(np.int64)
    bucket = (keys % np.uint64(len(a))).astype(np.int64)
    live = np.flatnonzero(a[bucket] > 0)
    while live.size:
        view = a[bucket[live]]
        h = (splitmix64_at_many(keys[live], bucket[live].astype(np.uint64))
             % view.astype(np.uint64)).astype(np.int64)
        chase = np.flatnonzero(a[h] >= view)
        while chase.size:
            h[chase] = k[h[chase]]
            chase = chase[a[h[chase]] >= view[chase]]
        bucket[live] = h
        live = live[a[h] > 0]
    return bucket


class AnchorAlgorithm(FixedCapacity[c_anchor.CAnchor, AnchorReference]):
    """AnchorHash over the servers, in configuration order, in its full or reduced form."""

    name: ClassVar[str] = "anchor"
    #: a build: its C arrays (5.5 ns a slot at 1,000,000); the plain-Python reference's
    #: fill is priced by `estimated_seconds`; measured by benchmarks/build_rates.py
    #: (2026-12-05, best of 2, load average 3.9), with a margin
    build_seconds_per_entry: ClassVar[float | None] = 10e-9
    declared: ClassVar[tuple[Param, ...]] = (CAPACITY, ARRAYS)
    capacity_words = ("the anchor's", "buckets")

    def new_binding(self) -> c_anchor.CAnchor:
        return c_anchor.CAnchor(self.capacity, self.initial, self._params["arrays"] == "full")

    def new_reference(self) -> AnchorReference:
        return AnchorReference(self.capacity, self.initial)

    @classmethod
    def estimated_entries(cls, servers: Sequence[Server], params: dict[str, Any]) -> int:
        # A slot (16 bytes full, 8 reduced) counts as a ring's point (16 bytes to build).
        return capacity_for(len(servers), params)

    @classmethod
    def estimated_bytes(cls, servers: Sequence[Server], params: dict[str, Any]) -> float:
        """A slot: four list items in the plain reference (a pointer and an int object of
        28 bytes each: 144 bytes), numpy copies of A and K for the vectorised reference (8
        or 16 while converted) and the C form's arrays (16 full, 8 reduced); 208 bytes with
        margin. The default, 64, read 603 MB against 833 MB measured at a = 4,000,000."""
        return ANCHOR_BYTES_PER_SLOT * capacity_for(len(servers), params)

    @classmethod
    def estimated_client_bytes(cls, servers: Sequence[Server], params: dict[str, Any]
                               ) -> float:
        """A client builds the C form alone (no reference): its arrays, 16 or 8 bytes a
        slot; measured by memray, a build routing 2,000 keys peaked at 16.23 and 16.06
        bytes a slot (full; 8.23 and 8.06 reduced) at a = 1,000,000 and 4,000,000, and
        held 16.01 (8.01). An eighth more for margin, and a server's name."""
        slots = capacity_for(len(servers), params)
        return CLIENT_MARGIN * SLOT_BYTES[params.get("arrays", "full")] * slots \
            + SERVER_BYTES * len(servers)

    @classmethod
    def estimated_seconds(cls, servers: Sequence[Server], params: dict[str, Any], *,
                          reference_keys: int, fast_keys: int,
                          plain_keys: int) -> tuple[float, str]:
        """The plain-Python reference fills four lists of `capacity` entries (0.5 us a
        slot, measured at a = 1,000,000) and its lookups take a few rehashes each (3 us a
        key); a margin of 1.5. A client's build (no key looked up by a reference) builds
        the C form alone: 6 ns a slot (CPU time measured at a = 1,000,000 and 30,000,000),
        priced at 10, and its lookups 0.5 us a key (routing 100,000 keys took 0.4 to 1.4
        us a key, their hashing included)."""
        slots = capacity_for(len(servers), params)
        if not (reference_keys or plain_keys):
            return (1.5 * (slots * 1e-8 + fast_keys * 0.5e-6),
                    f"anchor's C form fills {slots:,} slots")
        return (1.5 * (slots * 0.5e-6 + plain_keys * 3e-6),
                f"anchor's plain-Python reference fills {slots:,} slots four times")

    @classmethod
    def label_for(cls, params: dict[str, Any]) -> str:
        capacity = int(params.get("capacity", 0))
        size = f"a={capacity:,}" if capacity else "a=auto"
        return f"{params.get('arrays', 'full')} {size}"

    @property
    def entry_size(self) -> int:
        return SLOT_BYTES[self._params["arrays"]]

    def array(self, name: str) -> npt.NDArray[np.uint32]:
        """A copy of the C form's array "A", "K", "W" or "L" (the last two: full form)."""
        return self._c.array(name)

    def reference_owners(
        self, key_hashes: npt.NDArray[np.unsignedinteger]
    ) -> npt.NDArray[np.uint16]:
        reference = self._reference
        buckets = anchor_vectorised(key_hashes, np.array(reference.A, dtype=np.uint32),
                                    np.array(reference.K, dtype=np.uint32))
        return self.server_of_bucket()[buckets]
