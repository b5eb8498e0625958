"""BinomialHash: Coluzzi, Brocco, Antonucci and Leidi, "BinomialHash: A Constant Time,
Minimal Memory Consistent Hashing Algorithm" (arXiv 2406.19836).

`ALGORITHMS["binomial"].build(servers)` takes no parameters and holds no table. The
buckets 0..N-1 are the nodes of a binary tree laid out level by level (level l holds
buckets 2**(l-1) .. 2**l - 1; buckets 0 and 1 form the root). The enclosing tree is the
smallest one that holds N buckets (E = 2**ceil(log2 N) - 1 its filter), the minor tree
the one a level shallower (M = E >> 1), which holds only valid buckets. A lookup of key
hash h, in the order the authors' reference engine takes the steps:

1. take h & E, a node of the enclosing tree, and move it to a uniformly chosen node of
   the same level ("relocate within level": level base plus rehash(h, base - 1) masked);
   return it if it is below N;
2. otherwise draw again, up to four times: h' = rehash(h', E), relocated the same way; a
   draw below N but above M is returned, a draw inside the minor tree stops the draws;
3. fall back to h & M, relocated, which is always valid.

`rehash(v, s)` is one step of jump's 64-bit LCG, squared and multiplied by s, keeping
the top 32 bits. Step 1 alone makes the minor tree's keys stay put when N grows, and
the bounded draws of step 2 spread the keys of the missing nodes over the upper level:
adding bucket N moves keys only to it. The draws that run out leave the minor tree a
little more than its share; the paper bounds that imbalance and shows it falling
exponentially with the number of draws (four here). It shows at small N just above a
power of two: at N = 10 the keys-per-server CV is 0.8%, where 1,000,000 keys alone give
0.3%; at N = 1,000 it is key noise.

Facts taken from the authors' reference code, SUPSI-DTI-ISIN/java-consistent-hashing-
algorithms, `BinomialEngine.getBucket` at commit 68803f8: the LCG multiplier and the
rehash arithmetic, the four draws, the Java int casts (the low 32 bits of h before
masking). `lookup_many` equals that engine bit for bit on the 64-bit hash it is given
(tests/unit/test_algorithms_binomial.py holds vectors computed with it); the code here is
our own. Like jump, BinomialHash can remove only the last bucket (`removal_problem`).

Fast paths: batch and scalar lookups in C (cext/range_hashes.c), the scalar one through
the vectorcall wrapper jump uses.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import numpy.typing as npt

from harness.recipes.algorithms.range_hash import RangeHashAlgorithm

#: jump's 64-bit LCG multiplier, the base of BinomialHash's rehash
MULTIPLIER = 2862933555777941757
MASK64 = 2**64 - 1
#: the draws of step 2 before falling back to the minor tree (the engine's loop bound)
DRAWS = 4


def _rehash(value: int, seed: int) -> int:
    h = (MULTIPLIER * value + 1) & MASK64
    return ((h * h * seed) & MASK64) >> 32


def _relocate(bucket: int, key_hash: int) -> int:
    if bucket < 2:
        return bucket
    level = 1 << (bucket.bit_length() - 1)
    return level + (_rehash(key_hash, level - 1) & (level - 1))


def binomial_reference(key_hash: int, buckets: int) -> int:
    """The lookup, step by step, in plain Python (64-bit wrap)."""
    if buckets < 2:
        return 0
    enclosing = (1 << (buckets - 1).bit_length()) - 1
    minor = enclosing >> 1
    bucket = _relocate(key_hash & enclosing, key_hash)
    if bucket < buckets:
        return bucket
    h = key_hash
    for _ in range(DRAWS):
        h = _rehash(h, enclosing)
        bucket = _relocate(h & enclosing, h)
        if bucket <= minor:
            break
        if bucket < buckets:
            return bucket
    return _relocate(key_hash & minor, key_hash)


def _rehash_many(values: npt.NDArray[np.uint64], seeds: npt.NDArray[np.uint64] | np.uint64,
                 ) -> npt.NDArray[np.uint64]:
    h = values * np.uint64(MULTIPLIER) + np.uint64(1)
    return np.asarray((h * h * seeds) >> np.uint64(32), dtype=np.uint64)


def _relocate_many(nodes: npt.NDArray[np.uint64],
                   hashes: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    # The level's first node: the highest set bit, by smearing it down and halving.
    smeared = nodes.copy()
    for shift in (1, 2, 4, 8, 16):
        smeared |= smeared >> np.uint64(shift)
    level = (smeared >> np.uint64(1)) + np.uint64(1)
    filters = level - np.uint64(1)
    moved = level + (_rehash_many(hashes, filters) & filters)
    return np.where(nodes < 2, nodes, moved)


def binomial_vectorised(key_hashes: npt.NDArray[np.unsignedinteger],
                        buckets: int) -> npt.NDArray[np.uint16]:
    """The same steps over a whole array: each draw advances the keys still drawing."""
    hashes = np.array(key_hashes, dtype=np.uint64)
    if buckets < 2:
        return np.zeros(len(hashes), dtype=np.uint16)
    enclosing = np.uint64((1 << (buckets - 1).bit_length()) - 1)
    minor = enclosing >> np.uint64(1)
    owner = _relocate_many(hashes & enclosing, hashes)
    drawing = np.flatnonzero(owner >= buckets)
    drawn = hashes[drawing]
    for _ in range(DRAWS):
        drawn = _rehash_many(drawn, enclosing)
        bucket = _relocate_many(drawn & enclosing, drawn)
        found = (bucket > minor) & (bucket < buckets)
        owner[drawing[found]] = bucket[found]
        going_on = (bucket > minor) & ~found
        drawing, drawn = drawing[going_on], drawn[going_on]
    # Keys whose draws stopped in the minor tree, or ran out, fall back to it.
    fallen = np.flatnonzero(owner >= buckets)
    owner[fallen] = _relocate_many(hashes[fallen] & minor, hashes[fallen])
    return owner.astype(np.uint16)


class BinomialAlgorithm(RangeHashAlgorithm):
    """BinomialHash over the servers, in configuration order."""

    name: ClassVar[str] = "binomial"
    kind = "binomial"
    # The worst N measured (N = 2**k + 1, where most keys draw), 20,000 keys on this
    # project's 2-core machine: 6.3 us a key in plain Python, 0.29 us in numpy.
    plain_seconds: ClassVar[float] = 6.3e-6
    vectorised_seconds: ClassVar[float] = 0.29e-6

    reference_bucket = staticmethod(binomial_reference)
    vectorised_buckets = staticmethod(binomial_vectorised)
