"""Jump consistent hash: Lamping & Veach, "A Fast, Minimal Memory, Consistent Hash
Algorithm" (2014).

`ALGORITHMS["jump"].build(servers)` takes no parameters and holds no table:
the owner of a 64-bit key hash h is bucket `jump(h, N)` of the paper's loop,
and bucket i is `servers[i]`. `lookup_many(h)` equals PyPI
jump-consistent-hash's `jump.hash(h, N)` (the same generator as Guava's
`Hashing.consistentHash`) on every 64-bit h. `route` hashes each key with
xxHash64, seed 0, first (the key hash maglev uses too): jump does not hash
strings itself.

What jump cannot do, refused before any work:
- weights: every bucket gets the same share, so servers must all weigh 1;
- removing a server other than the last: buckets are numbered 0..N-1, and
  taking one from the middle renumbers every later one (`removal_problem`).

Fast paths: batch and scalar lookups in C (cext/algorithms.c), the scalar one
through the vectorcall wrapper the ring's layouts use; `route_one(key)` hashes
and jumps one key in a single C call (the whole route, as `jump.hash` users
who hash their keys in Python pay for two calls).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from harness.core.native import algorithms as c_algorithms
from harness.recipes.algorithms.range_hash import StatelessRangeHash

#: the paper's 64-bit linear congruential generator
MULTIPLIER = 2862933555777941757
MASK64 = 2**64 - 1


def jump_reference(key: int, buckets: int) -> int:
    """The paper's loop, in plain Python (64-bit wrap, double division)."""
    b, j = -1, 0
    while j < buckets:
        b = j
        key = (key * MULTIPLIER + 1) & MASK64
        j = int((b + 1) * (float(1 << 31) / float((key >> 33) + 1)))
    return b


def jump_vectorised(key_hashes: npt.NDArray[np.unsignedinteger],
                    buckets: int) -> npt.NDArray[np.uint16]:
    """The same loop over a whole array: each round advances the keys still jumping."""
    keys = np.array(key_hashes, dtype=np.uint64)
    owner = np.full(len(keys), -1, dtype=np.int64)
    jumped = np.zeros(len(keys), dtype=np.int64)
    live = np.arange(len(keys))
    while live.size:
        owner[live] = jumped[live]
        keys[live] = keys[live] * np.uint64(MULTIPLIER) + np.uint64(1)
        step = float(1 << 31) / ((keys[live] >> np.uint64(33)) + np.uint64(1)).astype(np.float64)
        jumped[live] = ((owner[live] + 1).astype(np.float64) * step).astype(np.int64)
        live = live[jumped[live] < buckets]
    return owner.astype(np.uint16)


class JumpAlgorithm(StatelessRangeHash):
    """Jump consistent hash over the servers, in configuration order."""

    name: ClassVar[str] = "jump"
    #: route([key])[0] for one key, hashed and jumped in one C call
    route_one: Callable[[bytes], int]

    @classmethod
    def binding(cls, buckets: int) -> c_algorithms.CJump:
        return c_algorithms.CJump(buckets)

    reference_bucket = staticmethod(jump_reference)
    vectorised_buckets = staticmethod(jump_vectorised)
