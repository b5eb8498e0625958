"""FlipHash: Masson and Lee, "FlipHash: A Constant-Time Consistent Range-Hashing Algorithm"
(arXiv 2402.17549).

`ALGORITHMS["fliphash"].build(servers)` takes no parameters and holds no table. It rests
on a keyed hash family h(key, r, i) (r a bit position, i a draw number). With N buckets,
range_end = N - 1 and r the bit length of range_end, so that the power-of-two range
[0, 2**r) covers [0, N):

1. over a power-of-two range [0, 2**r) (the paper's flip step): take the key's r low
   hash bits b = h(key, 0, 0) & (2**r - 1); if b is 0 it is the answer, otherwise flip
   every bit below b's top one by h(key, top, 0). A key whose top bit is t stays in
   [2**t, 2**(t+1)) for every range that holds it, which is what makes the result stable
   as r grows, and the flips make that interval uniform;
2. if that bucket is at most range_end, it is the answer;
3. otherwise draw h(key, r - 1, i) & (2**r - 1) for i = 1, 2, ... : a draw in the
   upper half [2**(r-1), 2**r) and at most range_end is the answer, a draw in the
   lower half stops the draws; the authors bound them at 64;
4. when the draws stop, the answer is step 1 over the half range [0, 2**(r-1)).

Each draw succeeds or stops with probability at least 1/2, so a lookup costs a constant
expected number of hashes, whatever N.

Facts taken from the authors' reference code, DataDog/fliphash-rs at commit 00c0ad0:
`fliphash_64(key, ..=range_end)` with seed 0, its keyed hash family (two
multiply-xorshift rounds with multipliers 2r + 1 and 2i + 1 and the constants
0x3C79AC492BA7B653 and 0x1C69B3F74AC4AE35, after Pelle Evensen's moremur mixer) and its
limit of 64 draws. `lookup_many(h)` equals that function on the 64-bit key hash h, bit
for bit (tests/unit/test_algorithms_fliphash.py holds vectors computed with it); the code
here is our own. The Java FlipEngine of SUPSI-DTI-ISIN/java-consistent-hashing-
algorithms keys its hashes differently, so it routes differently and is not matched.
Like jump, FlipHash can remove only the last bucket (`removal_problem`).

Fast paths: batch and scalar lookups in C (cext/range_hashes.c), the scalar one through
the vectorcall wrapper jump uses.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import numpy.typing as npt

from harness.recipes.algorithms.range_hash import RangeHashAlgorithm

MASK64 = 2**64 - 1
#: the reference's bound on the draws of step 3
MAX_DRAWS = 64
#: the keyed hash family's two multipliers (fliphash-rs)
FIRST_MULTIPLIER = 0x3C79AC492BA7B653
SECOND_MULTIPLIER = 0x1C69B3F74AC4AE35


def keyed_hash(key: int, bit: int, draw: int) -> int:
    """h(key, bit, draw), seed 0: the hash family every step draws from."""
    k = (key * (bit * 2 + 1)) & MASK64
    k = ((k ^ (k >> 27)) * FIRST_MULTIPLIER) & MASK64
    k = (k * (draw * 2 + 1)) & MASK64
    k = ((k ^ (k >> 33)) * SECOND_MULTIPLIER) & MASK64
    return k ^ (k >> 27)


def _flip(key: int, key_hash: int, mask: int) -> int:
    masked = key_hash & mask
    if masked == 0:
        return 0
    top = masked.bit_length() - 1
    return masked ^ (keyed_hash(key, top, 0) & ((1 << top) - 1))


def fliphash_reference(key: int, buckets: int) -> int:
    """The lookup, step by step, in plain Python (64-bit wrap)."""
    range_end = buckets - 1
    if range_end == 0:
        return 0
    mask = (1 << range_end.bit_length()) - 1
    key_hash = keyed_hash(key, 0, 0)
    bucket = _flip(key, key_hash, mask)
    if bucket <= range_end:
        return bucket
    top = range_end.bit_length() - 1
    for draw in range(1, MAX_DRAWS + 1):
        candidate = keyed_hash(key, top, draw) & mask
        if candidate <= mask >> 1:
            break
        if candidate <= range_end:
            return candidate
    return _flip(key, key_hash, mask >> 1)


def _keyed_hash_many(keys: npt.NDArray[np.uint64], bits: npt.NDArray[np.uint64] | np.uint64,
                     draw: int) -> npt.NDArray[np.uint64]:
    k = keys * (bits * np.uint64(2) + np.uint64(1))
    k = (k ^ (k >> np.uint64(27))) * np.uint64(FIRST_MULTIPLIER)
    k = k * np.uint64(draw * 2 + 1)
    k = (k ^ (k >> np.uint64(33))) * np.uint64(SECOND_MULTIPLIER)
    return np.asarray(k ^ (k >> np.uint64(27)), dtype=np.uint64)


def _flip_many(keys: npt.NDArray[np.uint64], hashes: npt.NDArray[np.uint64],
               mask: int) -> npt.NDArray[np.uint64]:
    masked = hashes & np.uint64(mask)
    # The top set bit's position, from the binary exponent: exact, since masks are below
    # 2**16 (np.bitwise_count, the direct way, needs numpy 2).
    _, exponent = np.frexp(masked.astype(np.float64))
    top = np.maximum(exponent - 1, 0).astype(np.uint64)
    below_top = (np.uint64(1) << top) - np.uint64(1)
    flipped = masked ^ (_keyed_hash_many(keys, top, 0) & below_top)
    return np.where(masked == 0, np.uint64(0), flipped)


def fliphash_vectorised(key_hashes: npt.NDArray[np.unsignedinteger],
                        buckets: int) -> npt.NDArray[np.uint16]:
    """The same steps over a whole array: each draw advances the keys still drawing."""
    keys = np.array(key_hashes, dtype=np.uint64)
    range_end = buckets - 1
    if range_end == 0:
        return np.zeros(len(keys), dtype=np.uint16)
    mask = (1 << range_end.bit_length()) - 1
    hashes = _keyed_hash_many(keys, np.uint64(0), 0)
    owner = _flip_many(keys, hashes, mask)
    drawing = np.flatnonzero(owner > range_end)
    top = np.uint64(range_end.bit_length() - 1)
    for draw in range(1, MAX_DRAWS + 1):
        if not drawing.size:
            break
        candidate = _keyed_hash_many(keys[drawing], top, draw) & np.uint64(mask)
        upper = candidate > np.uint64(mask >> 1)
        found = upper & (candidate <= range_end)
        owner[drawing[found]] = candidate[found]
        drawing = drawing[upper & ~found]
    # Keys whose draws stopped in the lower half, or ran out, take the half range.
    fallen = np.flatnonzero(owner > range_end)
    owner[fallen] = _flip_many(keys[fallen], hashes[fallen], mask >> 1)
    return owner.astype(np.uint16)


class FlipHashAlgorithm(RangeHashAlgorithm):
    """FlipHash over the servers, in configuration order."""

    name: ClassVar[str] = "fliphash"
    kind = "fliphash"
    # The worst N measured (N = 2**k + 1, where most keys draw), 20,000 keys on this
    # project's 2-core machine: 5.3 us a key in plain Python, 0.12 us in numpy.
    plain_seconds: ClassVar[float] = 5.3e-6
    vectorised_seconds: ClassVar[float] = 0.12e-6

    reference_bucket = staticmethod(fliphash_reference)
    vectorised_buckets = staticmethod(fliphash_vectorised)
