"""JumpBackHash: Otmar Ertl, "JumpBackHash: Say Goodbye to the Modulo Operation to
Distribute Keys Uniformly to Buckets", arXiv:2403.18682, 2024.

`ALGORITHMS["jumpback"].build(servers)` takes no parameters and holds no table, like
`jump`, whose guarantees it has (balance, monotone growth: a new last bucket takes keys
only for itself) without jump's division per step. It routes exactly as hash4j's
`ConsistentHashing.jumpBackHashSplitMix64()` (checked in tests against values computed
with hash4j's code, AbstractConsistentJumpBackBucketHasher): the key hash seeds
SplitMix64, and the paper's active indices (the bucket counts at which a key jumps) are
generated in reverse order over the power-of-two ranges [2**i, 2**(i+1)) that bucket
counts up to N span, from the highest one down:

- one 64-bit draw r0 gives, in its two halves folded together, a bit per range saying
  whether the key's last jump lands in it (x, masked to the ranges below N; x = 0 ends
  at bucket 0);
- for the highest range left, the bucket is its start plus an offset from one half of
  r0; if that bucket is at most N - 1 it is the answer;
- otherwise further draws (two 32-bit candidates each) pick within the range until one
  falls below N (the answer) or below the range's start (the range is passed over: its
  bit is cleared and the next range down is tried).

`route` hashes each key with xxHash64, seed 0 (the key hash jump takes too). Like jump,
only the last server can be removed (`removal_problem`), and servers have no weights.
The plain-Python definition is `jumpback_reference`; the C form is cext/jumpback.c.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import numpy.typing as npt

from harness.core.native import jumpback as c_jumpback
from harness.core.splitmix import GAMMA, MASK64, splitmix64_mix
from harness.recipes.algorithms.range_hash import StatelessRangeHash

MASK32 = 2**32 - 1


def jumpback_reference(key: int, buckets: int) -> int:
    """hash4j's JumpBackHash with SplitMix64, in plain Python."""
    if buckets <= 1:
        return 0
    state = (key + GAMMA) & MASK64
    r0 = splitmix64_mix(state)
    x = ((r0 ^ (r0 >> 32)) & MASK32) & (MASK32 >> (32 - (buckets - 1).bit_length()))
    while x:
        low = 1 << (x.bit_length() - 1)
        half = r0 >> 32 if x.bit_count() % 2 else r0 & MASK32
        bucket = low + (half & (low - 1))
        if bucket < buckets:
            return bucket
        high = 2 * low - 1
        while True:
            state = (state + GAMMA) & MASK64
            r1 = splitmix64_mix(state)
            bucket = r1 & high
            if bucket < low:
                break
            if bucket < buckets:
                return bucket
            bucket = (r1 >> 32) & high
            if bucket < low:
                break
            if bucket < buckets:
                return bucket
        x ^= low
    return 0


def _mix_many(z: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return np.asarray(z ^ (z >> np.uint64(31)), dtype=np.uint64)


def _highest_bit(x: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """1 << floor(log2(x)) for x > 0 below 2**32 (frexp is exact on these integers)."""
    _, exponent = np.frexp(x.astype(np.float64))
    return np.left_shift(np.uint64(1), (exponent - 1).astype(np.uint64))


def jumpback_vectorised(key_hashes: npt.NDArray[np.unsignedinteger],
                        buckets: int) -> npt.NDArray[np.uint16]:
    """The same steps over a whole array: each round advances the keys not yet placed."""
    keys = np.asarray(key_hashes, dtype=np.uint64)
    result = np.zeros(len(keys), dtype=np.uint64)
    if buckets <= 1 or not len(keys):
        return result.astype(np.uint16)
    n, mask32 = np.uint64(buckets), np.uint64(MASK32)
    state = keys + np.uint64(GAMMA)
    r0 = _mix_many(state)
    x = ((r0 ^ (r0 >> np.uint64(32))) & mask32) & np.uint64(
        MASK32 >> (32 - (buckets - 1).bit_length()))
    live = np.flatnonzero(x)
    while live.size:
        low = _highest_bit(x[live])
        odd = np.bitwise_count(x[live]) % 2 == 1
        half = np.where(odd, r0[live] >> np.uint64(32), r0[live] & mask32)
        bucket = low + (half & (low - np.uint64(1)))
        placed = bucket < n
        result[live[placed]] = bucket[placed]
        # The keys whose first pick overshot draw within the range until it resolves.
        searching, low = live[~placed], low[~placed]
        passed = np.zeros(len(searching), dtype=bool)
        pending = np.arange(len(searching))
        while pending.size:
            who = searching[pending]
            state[who] += np.uint64(GAMMA)
            r1 = _mix_many(state[who])
            lo, high = low[pending], low[pending] * np.uint64(2) - np.uint64(1)
            settled = np.zeros(len(pending), dtype=bool)
            for candidate in (r1 & high, (r1 >> np.uint64(32)) & high):
                open_ = ~settled
                below = open_ & (candidate < lo)
                inside = open_ & ~below & (candidate < n)
                passed[pending[below]] = True
                result[who[inside]] = candidate[inside]
                settled |= below | inside
            pending = pending[~settled]
        x[searching[passed]] ^= low[passed]
        live = searching[passed]
        live = live[x[live] != 0]
    return result.astype(np.uint16)


class JumpBackAlgorithm(StatelessRangeHash):
    """JumpBackHash over the servers, in configuration order."""

    name: ClassVar[str] = "jumpback"

    @classmethod
    def binding(cls, buckets: int) -> c_jumpback.CJumpBack:
        return c_jumpback.CJumpBack(buckets)

    reference_bucket = staticmethod(jumpback_reference)
    vectorised_buckets = staticmethod(jumpback_vectorised)
