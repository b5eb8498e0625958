"""Bindings of cext/hashes.c: the hash functions, one key or a batch of keys per C call.

FNV-1a + fmix32 and xxHash64 hash names for harness.core.hashing; MurmurHash3_x86_32,
MurmurHash64A and hash128to64 are the hashes of rendezvous and weighted rendezvous
(harness.core.native.algorithms), exposed here so that tests check them against their
references. SipHash-2-4 is the keyed hash: a batch of names, or an attacker's numbered
candidates (a prefix and a decimal number) formatted and hashed in C.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.native._c import ffi, lib

__all__ = [
    "fnv1a_fmix32_many",
    "hash128to64",
    "murmur3_32",
    "murmur64a",
    "murmur64a_many",
    "siphash24",
    "siphash24_many",
    "siphash24_numbered",
    "xxh64_many",
]

#: bytes of a SipHash key, and the longest prefix `siphash24_numbered` takes (hashes.h)
SIPHASH_KEY_BYTES = 16
SIPHASH_PREFIX_MAX = 200


def fnv1a_fmix32_many(names: Sequence[bytes]) -> npt.NDArray[np.uint32]:
    """FNV-1a + fmix32 over many names, in one C call over a joined buffer."""
    lengths = np.fromiter((len(n) for n in names), dtype=np.uint64, count=len(names))
    offsets = np.zeros(len(names) + 1, dtype=np.uint64)
    np.cumsum(lengths, out=offsets[1:])
    joined = b"".join(names)
    out = np.empty(len(names), dtype=np.uint32)
    lib.hash_fnv1a_fmix32_many(
        ffi.from_buffer("uint8_t[]", joined),
        ffi.from_buffer("uint64_t[]", offsets),
        len(names),
        ffi.from_buffer("uint32_t[]", out, require_writable=True),
    )
    return out


def xxh64_many(names: Sequence[bytes], seed: int = 0) -> npt.NDArray[np.uint64]:
    """xxHash64 of many names, in one C call over a joined buffer."""
    lengths = np.fromiter((len(n) for n in names), dtype=np.uint64, count=len(names))
    offsets = np.zeros(len(names) + 1, dtype=np.uint64)
    np.cumsum(lengths, out=offsets[1:])
    out = np.empty(len(names), dtype=np.uint64)
    lib.xxh64_many(b"".join(names), ffi.from_buffer("uint64_t[]", offsets), len(names), seed,
                   ffi.from_buffer("uint64_t[]", out, require_writable=True))
    return out


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """Standard MurmurHash3_x86_32 of `data`."""
    return int(lib.murmur3_32(data, len(data), seed))


def murmur64a(data: bytes, seed: int) -> int:
    """MurmurHash64A of `data`, as mcrouter's murmur_hash_64A (hashes.c)."""
    return int(lib.murmur64a(data, len(data), seed))


def murmur64a_many(keys: Sequence[bytes], seed: int) -> npt.NDArray[np.uint64]:
    """MurmurHash64A of many keys, in one C call over a joined buffer."""
    offsets = np.zeros(len(keys) + 1, dtype=np.uint64)
    np.cumsum([len(k) for k in keys], out=offsets[1:])
    out = np.empty(len(keys), dtype=np.uint64)
    lib.murmur64a_many(b"".join(keys), ffi.from_buffer("uint64_t[]", offsets), len(keys), seed,
                       ffi.from_buffer("uint64_t[]", out, require_writable=True))
    return out


def hash128to64(upper: int, lower: int) -> int:
    """CityHash's Hash128to64, as mcrouter's RendezvousHashHelper.h (hashes.c)."""
    return int(lib.hash128to64(upper, lower))


def _check_key(key: bytes) -> None:
    if len(key) != SIPHASH_KEY_BYTES:
        raise HarnessError(f"a SipHash key must be {SIPHASH_KEY_BYTES} bytes "
                           f"(got {len(key)})")


def siphash24(data: bytes, key: bytes) -> int:
    """SipHash-2-4 of `data` under the 16-byte `key`: the 64-bit integer of the paper."""
    _check_key(key)
    return int(lib.siphash24(data, len(data), key))


def siphash24_many(names: Sequence[bytes], key: bytes) -> npt.NDArray[np.uint64]:
    """SipHash-2-4 of many names under `key`, in one C call over a joined buffer."""
    _check_key(key)
    offsets = np.zeros(len(names) + 1, dtype=np.uint64)
    np.cumsum([len(n) for n in names], out=offsets[1:])
    out = np.empty(len(names), dtype=np.uint64)
    lib.siphash24_many(ffi.from_buffer("uint8_t[]", b"".join(names) or b"\0"),
                       ffi.from_buffer("uint64_t[]", offsets), len(names), key,
                       ffi.from_buffer("uint64_t[]", out, require_writable=True))
    return out


def siphash24_numbered(prefix: bytes, count: int, key: bytes) -> npt.NDArray[np.uint64]:
    """SipHash-2-4 under `key` of `prefix + str(j).encode()` for j in range(count), the
    names formatted in C."""
    _check_key(key)
    if len(prefix) > SIPHASH_PREFIX_MAX:
        raise HarnessError(f"a candidate prefix must be at most {SIPHASH_PREFIX_MAX} bytes "
                           f"(got {len(prefix)})")
    out = np.empty(count, dtype=np.uint64)
    lib.siphash24_numbered(prefix or b"\0", len(prefix), count, key,
                           ffi.from_buffer("uint64_t[]", out, require_writable=True))
    return out
