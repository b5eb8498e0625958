"""Bindings of cext/trait_hashes.c: the hashes client traits add (FNV-1 and FNV-1a 32 and
64, one-at-a-time, MurmurHash3_x86_32, xxHash32 and xxHash64 with a seed), a batch of
names per C call."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.native._c import ffi, lib

__all__ = ["TRAIT_HASH_KINDS", "trait_hash_many"]

#: trait_hashes.h's kinds, by the names harness.core.trait_hashes gives them
TRAIT_HASH_KINDS = {"fnv1-32": 0, "fnv1a-32": 1, "fnv1-64": 2, "fnv1a-64": 3, "oaat-32": 4,
                    "murmur3-32": 5, "xxh32": 6, "xxh64": 7}


def trait_hash_many(names: Sequence[bytes], hash_name: str,
                    seed: int = 0) -> npt.NDArray[np.uint64]:
    """Each name's hash, widened to 64 bits (a 32-bit hash's high half is 0)."""
    offsets = np.zeros(len(names) + 1, dtype=np.uint64)
    np.cumsum(np.fromiter((len(n) for n in names), dtype=np.uint64, count=len(names)),
              out=offsets[1:])
    out = np.empty(len(names), dtype=np.uint64)
    status = lib.trait_hash_many(b"".join(names), ffi.from_buffer("uint64_t[]", offsets),
                                 len(names), TRAIT_HASH_KINDS[hash_name], seed,
                                 ffi.from_buffer("uint64_t[]", out, require_writable=True))
    if status != 0:
        raise HarnessError(f"trait_hash_many: unknown kind for {hash_name!r}")
    return out
