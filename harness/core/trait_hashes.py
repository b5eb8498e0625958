"""The hashes real clients place points and keys with, beyond the ring's own (`hashing`).

Each is defined by a plain-Python function (`one`) and has a batch form (`many`) that the
tests hold to it. What each computes, byte order included:

- `fnv1-32`, `fnv1a-32`, `fnv1-64`, `fnv1a-64`: plain FNV-1 and FNV-1a (Fowler, Noll and
  Vo's parameters), no finalizer.
- `oaat-32`: Bob Jenkins' one-at-a-time hash ("A Hash Function for Hash Table Lookup").
- `murmur3-32`: MurmurHash3_x86_32, seed 0 (Austin Appleby's SMHasher).
- `xxh32`, `xxh64`: xxHash32 and xxHash64, seed 0 (`one` calls the `xxhash` library, the
  bindings of the format author's C library).

The batch forms of these eight run in C, our own code (cext/trait_hashes.c, xxHash written
from its specification); MD5 and CRC-32 batches are the ring's C; SHA-1 goes through
hashlib name by name; `crc32-hi15` batches are zlib's CRC-32 in C, shifted.
- `md5-32le`: the first 4 bytes of MD5 read little-endian (libketama's key hash);
  `sha1-32`, `sha1-32le`: the first 4 bytes of SHA-1, big- or little-endian. The ring's
  `md5-32` (big-endian) and `blake2b-32` read their digest likewise.
- `crc32-hi15`: bits 16-30 of zlib's CRC-32, `(crc >> 16) & 0x7fff` (libmemcached's
  `crc` hash and python-memcached's `cmemcache_hash`).

`DIGEST_HASHES` read a whole digest: a client that cuts several points from one digest
(libketama: four) takes word i of it, in the hash's own byte order (`digest_words`).
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import xxhash

from harness.core.hashing import HASHES, HashFunction, fmix32
from harness.core.native import crc32_many as c_crc32
from harness.core.native import md5_many as c_md5
from harness.core.native import trait_hashes as c_trait_hashes

MASK32 = 0xFFFFFFFF
MASK64 = 0xFFFFFFFFFFFFFFFF
FNV = {32: (0x811C9DC5, 0x01000193), 64: (0xCBF29CE484222325, 0x100000001B3)}


def fnv(data: bytes, bits: int, xor_first: bool) -> int:
    """FNV-1 (multiply, then xor) or FNV-1a (xor, then multiply) of `data`."""
    h, prime = FNV[bits]
    mask = (1 << bits) - 1
    for byte in data:
        h = ((h ^ byte) * prime) & mask if xor_first else ((h * prime) & mask) ^ byte
    return h


def one_at_a_time(data: bytes) -> int:
    """Jenkins' one-at-a-time hash, 32 bits."""
    h = 0
    for byte in data:
        h = (h + byte) & MASK32
        h = (h + (h << 10)) & MASK32
        h ^= h >> 6
    h = (h + (h << 3)) & MASK32
    h ^= h >> 11
    return (h + (h << 15)) & MASK32


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """MurmurHash3_x86_32 of `data` with `seed`."""
    c1, c2 = 0xCC9E2D51, 0x1B873593
    h = seed & MASK32
    whole = len(data) // 4 * 4
    for i in range(0, whole, 4):
        k = (int.from_bytes(data[i:i + 4], "little") * c1) & MASK32
        k = ((((k << 15) | (k >> 17)) & MASK32) * c2) & MASK32
        h ^= k
        h = ((((h << 13) | (h >> 19)) & MASK32) * 5 + 0xE6546B64) & MASK32
    if len(data) > whole:
        k = (int.from_bytes(data[whole:], "little") * c1) & MASK32
        h ^= ((((k << 15) | (k >> 17)) & MASK32) * c2) & MASK32
    h ^= len(data) & MASK32
    return fmix32(h)


def _c_many(name: str, dtype: type[np.unsignedinteger]
            ) -> Callable[[Sequence[bytes]], npt.NDArray[np.unsignedinteger]]:
    """The batch form in C (cext/trait_hashes.c)."""
    def many(names: Sequence[bytes]) -> npt.NDArray[np.unsignedinteger]:
        return c_trait_hashes.trait_hash_many(names, name).astype(dtype)
    return many


def _each(function: Callable[[bytes], int], dtype: type[np.unsignedinteger]
          ) -> Callable[[Sequence[bytes]], npt.NDArray[np.unsignedinteger]]:
    def many(names: Sequence[bytes]) -> npt.NDArray[np.unsignedinteger]:
        return np.fromiter((function(name) for name in names), dtype=dtype, count=len(names))
    return many


def _prefix(digest: Callable[[bytes], bytes], order: str) -> Callable[[bytes], int]:
    def one(data: bytes) -> int:
        return int.from_bytes(digest(data)[:4], order)  # type: ignore[arg-type]
    return one


def _md5(data: bytes) -> bytes:
    return hashlib.md5(data).digest()


def _sha1(data: bytes) -> bytes:
    return hashlib.sha1(data).digest()


def _blake2b(data: bytes) -> bytes:
    return hashlib.blake2b(data).digest()


def _xxh32(data: bytes) -> int:
    return xxhash.xxh32_intdigest(data)


def _xxh64(data: bytes) -> int:
    return xxhash.xxh64_intdigest(data)


def _crc32_hi15(data: bytes) -> int:
    return (zlib.crc32(data) >> 16) & 0x7FFF


_NEW: tuple[HashFunction, ...] = (
    HashFunction("fnv1-32", 32, lambda d: fnv(d, 32, False), _c_many("fnv1-32", np.uint32)),
    HashFunction("fnv1a-32", 32, lambda d: fnv(d, 32, True), _c_many("fnv1a-32", np.uint32)),
    HashFunction("fnv1-64", 64, lambda d: fnv(d, 64, False), _c_many("fnv1-64", np.uint64)),
    HashFunction("fnv1a-64", 64, lambda d: fnv(d, 64, True), _c_many("fnv1a-64", np.uint64)),
    HashFunction("oaat-32", 32, one_at_a_time, _c_many("oaat-32", np.uint32)),
    HashFunction("murmur3-32", 32, murmur3_32, _c_many("murmur3-32", np.uint32)),
    HashFunction("xxh32", 32, _xxh32, _c_many("xxh32", np.uint32)),
    HashFunction("xxh64", 64, _xxh64, _c_many("xxh64", np.uint64)),
    HashFunction("md5-32le", 32, _prefix(_md5, "little"),
                 lambda n: c_md5.md5_prefix32_many(n, "little")),
    HashFunction("sha1-32", 32, _prefix(_sha1, "big"), _each(_prefix(_sha1, "big"), np.uint32)),
    HashFunction("sha1-32le", 32, _prefix(_sha1, "little"),
                 _each(_prefix(_sha1, "little"), np.uint32)),
    HashFunction("crc32-hi15", 32, _crc32_hi15,
                 lambda n: ((c_crc32.crc32_many(n) >> 16) & 0x7FFF).astype(np.uint32)),
)

#: every unkeyed hash a client's ring or key may use: the ring's own, then the clients'
TRAIT_HASHES: dict[str, HashFunction] = {**HASHES, **{h.name: h for h in _NEW}}
TRAIT_HASH_NAMES: tuple[str, ...] = tuple(TRAIT_HASHES)


@dataclass(frozen=True)
class Digest:
    """A hash that reads 32-bit words of a digest: the digest, its length and byte order."""

    digest: Callable[[bytes], bytes]
    size: int
    order: str

    @property
    def words(self) -> int:
        return self.size // 4


DIGEST_HASHES: dict[str, Digest] = {
    "md5-32": Digest(_md5, 16, "big"), "md5-32le": Digest(_md5, 16, "little"),
    "sha1-32": Digest(_sha1, 20, "big"), "sha1-32le": Digest(_sha1, 20, "little"),
    "blake2b-32": Digest(_blake2b, 64, "big"),
}


def digest_words(hash_name: str, names: Sequence[bytes], words: int
                 ) -> npt.NDArray[np.uint32]:
    """The first `words` 32-bit words of each name's digest, name by name: shape
    (len(names), words)."""
    spec = DIGEST_HASHES[hash_name]
    raw = b"".join([spec.digest(name)[:4 * words] for name in names])
    dtype = np.dtype("<u4" if spec.order == "little" else ">u4")
    return np.frombuffer(raw, dtype=dtype).astype(np.uint32).reshape(len(names), words)


#: hashes that take a seed (rendezvous scores them with one): name -> hash of (data, seed)
SEEDED_HASHES: dict[str, Callable[[bytes, int], int]] = {
    "murmur3-32": lambda data, seed: murmur3_32(data, seed & MASK32),
    "xxh32": lambda data, seed: xxhash.xxh32_intdigest(data, seed & MASK32),
    "xxh64": lambda data, seed: xxhash.xxh64_intdigest(data, seed & MASK64),
}


def seeded(name: str, seed: int) -> Callable[[bytes], int]:
    """The hash called `name` under `seed` (0: the hash itself, for any hash)."""
    if seed == 0:
        return TRAIT_HASHES[name].one
    function = SEEDED_HASHES[name]
    return lambda data: function(data, seed)
