"""SplitMix64 (Steele, Lea and Flood, "Fast Splittable Pseudorandom Number Generators",
OOPSLA 2014) in plain Python and numpy, exactly as cext/splitmix.h computes it.

A generator seeded with s yields mix(s + gamma), mix(s + 2 gamma), ...; output i is
`splitmix64_at(s, i)`. AnchorHash, MementoHash and DxHash rehash a key with it (the
i-th rehash of key hash h is `splitmix64_at(h, i)`), and JumpBackHash draws from it as
hash4j's `jumpBackHashSplitMix64` does.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

GAMMA = 0x9E3779B97F4A7C15
MASK64 = 2**64 - 1
_MIX1, _MIX2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


def splitmix64_mix(z: int) -> int:
    """The output function (Stafford's "variant 13" finaliser), on a 64-bit int."""
    z = ((z ^ (z >> 30)) * _MIX1) & MASK64
    z = ((z ^ (z >> 27)) * _MIX2) & MASK64
    return z ^ (z >> 31)


def splitmix64_at(seed: int, index: int) -> int:
    """Output `index` (from 0) of the generator seeded with `seed`."""
    return splitmix64_mix((seed + (index + 1) * GAMMA) & MASK64)


def splitmix64_at_many(seeds: npt.NDArray[np.uint64],
                       indexes: npt.NDArray[np.unsignedinteger] | int) -> npt.NDArray[np.uint64]:
    """`splitmix64_at` over arrays (uint64 arithmetic wraps as C's does)."""
    index = np.asarray(indexes, dtype=np.uint64)
    # Wrapping is the point: numpy warns of it only for a 0-d (scalar) index.
    with np.errstate(over="ignore"):
        z = np.asarray(seeds, dtype=np.uint64) + (index + np.uint64(1)) * np.uint64(GAMMA)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(_MIX1)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(_MIX2)
    return np.asarray(z ^ (z >> np.uint64(31)), dtype=np.uint64)
