"""PowerCH, the power consistent hash: Leu, "Fast Consistent Hashing in Constant Time"
(arXiv 2307.12448).

`ALGORITHMS["powerch"].build(servers)` takes no parameters and holds no table. With N
buckets and m the smallest power of two >= N, the paper combines two auxiliary
functions of the key:

- f(key, m - 1), a consistent hash onto the power-of-two range [0, m): the key's low
  bits b = key & (m - 1) keep their top bit t, and the bits below it are drawn from a
  generator seeded by (key, t), so the result lies in [2**t, 2**(t+1)) and never
  changes while that interval stays inside the range;
- g(key, N, m/2 - 1), jump's weighted walk started at m/2 - 1: from x, the next
  candidate is floor((x + 1) / U) for a uniform U, taken while it stays below N.

A lookup returns r1 = f(key, m - 1) if r1 < N; otherwise r2 = g(...) if r2 > m/2 - 1
(the walk reached the upper half); otherwise f(key, m/2 - 1), which is always valid.
Each step succeeds with probability at least 1/2, so a lookup takes constant expected
time whatever N; the walk of g, not a table, gives the upper half its uniform share.

Implementations differ in the generator they draw from. We match the Rust crate
power-consistent-hash (DXist/power-consistent-hash at commit 25bd442, Rinat Shigapov),
bit for bit: `PowerConsistentHasher::hash_u64(key)` with PCG32 (XSH RR 64/32) streams,
f seeded by state = key and stream = t, g continuing f's stream one step on, and g's
uniform taken as (32-bit output + 1) / (2**32 - 1), in integer arithmetic. The crate
refuses N = 1; here one bucket owns every key. Its published values for N = 96 and the vectors in
tests/unit/test_algorithms_powerch.py were computed with it (on x86-64, where it finds the
top bit with `bsr`); the code here is our own. The Java PowerEngine of SUPSI-DTI-ISIN/
java-consistent-hashing-algorithms draws from its configured hash function instead,
so it routes differently and is not matched. Like jump, PowerCH can remove only the
last bucket (`removal_problem`).

Fast paths: batch and scalar lookups in C (cext/range_hashes.c), the scalar one through
the vectorcall wrapper jump uses.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import numpy.typing as npt

from harness.recipes.algorithms.range_hash import RangeHashAlgorithm

MASK64 = 2**64 - 1
MASK32 = 2**32 - 1
#: PCG's 64-bit LCG multiplier
PCG_MULTIPLIER = 6364136223846793005


def _pcg_output(state: int) -> int:
    rotate = state >> 59
    shifted = (((state >> 18) ^ state) >> 27) & MASK32
    return ((shifted >> rotate) | (shifted << (32 - rotate))) & MASK32


def _pcg_seeded(key: int, stream: int) -> tuple[int, int]:
    increment = ((stream << 1) | 1) & MASK64
    state = (key + increment) & MASK64
    return (state * PCG_MULTIPLIER + increment) & MASK64, increment


def _f(key: int, mask: int) -> tuple[int, tuple[int, int] | None]:
    bits = key & mask
    if bits == 0:
        return 0, None
    top = bits.bit_length() - 1
    rng = _pcg_seeded(key, top)
    return (1 << top) + (_pcg_output(rng[0]) & ((1 << top) - 1)), rng


def powerch_reference(key: int, buckets: int) -> int:
    """The lookup, step by step, in plain Python (64-bit wrap)."""
    if buckets < 2:
        return 0
    mask = (1 << (buckets - 1).bit_length()) - 1
    half_mask = mask >> 1
    first, rng = _f(key, mask)
    if first < buckets:
        return first
    assert rng is not None  # first >= buckets >= 2, so the key's bits were not 0
    state, increment = rng
    state = (state * PCG_MULTIPLIER + increment) & MASK64
    x = half_mask
    while True:
        scaled = (x + 1) * MASK32
        draw = _pcg_output(state) + 1
        if buckets * draw <= scaled:
            break
        state = (state * PCG_MULTIPLIER + increment) & MASK64
        x = scaled // draw
    if x > half_mask:
        return x
    return _f(key, half_mask)[0]


def _pcg_output_many(states: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    rotate = states >> np.uint64(59)
    shifted = (((states >> np.uint64(18)) ^ states) >> np.uint64(27)) & np.uint64(MASK32)
    left = (shifted << ((np.uint64(32) - rotate) & np.uint64(31))) & np.uint64(MASK32)
    return np.asarray((shifted >> rotate) | left, dtype=np.uint64)


def _f_many(keys: npt.NDArray[np.uint64], mask: int,
            ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64], npt.NDArray[np.uint64]]:
    """f over an array: the buckets, and each key's generator (state, increment) after f."""
    bits = keys & np.uint64(mask)
    # The top set bit's position, from the binary exponent: exact, since masks are below
    # 2**16; keys whose bits are 0 get bucket 0 and an unused generator.
    _, exponent = np.frexp(bits.astype(np.float64))
    top = np.maximum(exponent - 1, 0).astype(np.uint64)
    increment = (top << np.uint64(1)) | np.uint64(1)
    states = (keys + increment) * np.uint64(PCG_MULTIPLIER) + increment
    level = np.uint64(1) << top
    buckets = level + (_pcg_output_many(states) & (level - np.uint64(1)))
    return np.where(bits == 0, np.uint64(0), buckets), states, increment


def powerch_vectorised(key_hashes: npt.NDArray[np.unsignedinteger],
                       buckets: int) -> npt.NDArray[np.uint16]:
    """The same steps over a whole array: each round of g advances the keys still walking."""
    keys = np.array(key_hashes, dtype=np.uint64)
    if buckets < 2:
        return np.zeros(len(keys), dtype=np.uint16)
    mask = (1 << (buckets - 1).bit_length()) - 1
    half_mask = mask >> 1
    owner, states, increments = _f_many(keys, mask)
    over = np.flatnonzero(owner >= buckets)
    walked = np.full(len(over), half_mask, dtype=np.uint64)
    # g, for the keys f put past N: `walking` indexes `over`, x is each walk's position.
    walking = np.arange(len(over))
    increment = increments[over]
    state = states[over] * np.uint64(PCG_MULTIPLIER) + increment
    x = walked.copy()
    while walking.size:
        scaled = (x + np.uint64(1)) * np.uint64(MASK32)
        draw = _pcg_output_many(state) + np.uint64(1)
        stopped = np.uint64(buckets) * draw <= scaled
        walked[walking[stopped]] = x[stopped]
        going = ~stopped
        walking, increment = walking[going], increment[going]
        state = state[going] * np.uint64(PCG_MULTIPLIER) + increment
        x = scaled[going] // draw[going]
    owner[over] = walked
    # Walks that never left the lower half fall back to f over it.
    fallen = over[walked <= np.uint64(half_mask)]
    owner[fallen] = _f_many(keys[fallen], half_mask)[0]
    return owner.astype(np.uint16)


class PowerCHAlgorithm(RangeHashAlgorithm):
    """PowerCH over the servers, in configuration order."""

    name: ClassVar[str] = "powerch"
    kind = "powerch"
    # The worst N measured, 20,000 keys on this project's 2-core machine: 8.3 us a key in
    # plain Python (N = 96), 0.31 us in numpy (N = 3).
    plain_seconds: ClassVar[float] = 8.3e-6
    vectorised_seconds: ClassVar[float] = 0.31e-6

    reference_bucket = staticmethod(powerch_reference)
    vectorised_buckets = staticmethod(powerch_vectorised)
