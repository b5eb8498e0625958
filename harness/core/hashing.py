"""Hash functions that place names (server points and keys) on the ring.

Each hash maps bytes to an unsigned integer of `bits` bits. `hash_one` hashes
a single name; `hash_many` hashes a sequence of names into a numpy array
(uint32 or uint64), which is what ring generation and key workloads use.

Byte orders are part of each definition, since they decide where points land:
- blake2b-32 / blake2b-64: first 4 / 8 bytes of the default (64-byte) BLAKE2b
  digest, big-endian ("BLAKE2b truncated to 32 bits", as in "Consistent
  Hashing from Scratch, and Why Cloudflare Deleted 90% of It"); batches of
  names up to one 128-byte block are hashed in C, eight at a time
  (cext/blake2b_lanes.c), and `hash_one` calls hashlib.
- md5-32: first 4 bytes of the MD5 digest, big-endian (the Python ring of
  Semicolony's "Consistent hashing simulator"); batches are hashed by our own MD5 in C
  (cext/md5_many.c, from RFC 1321), `hash_one` calls hashlib.
- fnv1a-fmix32: 32-bit FNV-1a, then MurmurHash3's fmix32 finalizer (the hash
  of Semicolony's "Consistent hashing simulator"); computed in C for batches.
- crc32: zlib's CRC-32 (IEEE 802.3), as nginx, Pingora and groupcache hash keys;
  batches in one C call to zlib (cext/crc32_many.c), `hash_one` calls Python's zlib.

Keyed hashes (`KEYED_HASHES`) take a secret 16-byte key, so that whoever does not
hold it cannot tell where a name lands (Aumasson and Bernstein, "SipHash: a fast
short-input PRF"); `get_hash(name, key)` binds the key:
- siphash24-64: SipHash-2-4's 64-bit output, the integer the paper defines (its
  digest read little-endian); siphash24-32: the low 32 bits of it. `one` calls the
  `siphash24` library, batches run in C (cext/hashes.c); tests check both against the
  paper's reference vectors.

`hash_numbered` hashes an attacker's numbered candidates (a prefix and j = 0, 1, ...
in decimal) with the names formatted in C, for the brute force of hostile keys.

Outside the ring's hashes: `xxh64` / `xxh64_many`, xxHash64 with a seed (the
integer digest), as Envoy hashes Maglev hosts and keys; jump, maglev and
multi-probe hash keys with it (seed 0). The batch form runs in C and is
tested against the xxhash library, which `xxh64` calls.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import siphash24
import xxhash

from harness.core.errors import HarnessError, UnknownNameError
from harness.core.machine import usable_cores
from harness.core.native import crc32_many as c_crc32
from harness.core.native import generate as c_generate
from harness.core.native import hashes as c_hashes
from harness.core.native import md5_many as c_md5

FNV32_OFFSET_BASIS = 2166136261
FNV32_PRIME = 16777619
MASK32 = 0xFFFFFFFF


def fmix32(h: int) -> int:
    """MurmurHash3's 32-bit finalizer: every input bit affects every output bit."""
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & MASK32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & MASK32
    h ^= h >> 16
    return h


def fnv1a32(data: bytes) -> int:
    """Plain 32-bit FNV-1a."""
    h = FNV32_OFFSET_BASIS
    for byte in data:
        h = ((h ^ byte) * FNV32_PRIME) & MASK32
    return h


def _blake2b_32(data: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(data).digest()[:4], "big")


def _blake2b_64(data: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(data).digest()[:8], "big")


def _md5_32(data: bytes) -> int:
    return int.from_bytes(hashlib.md5(data).digest()[:4], "big")


def _fnv1a_fmix32(data: bytes) -> int:
    return fmix32(fnv1a32(data))


def _crc32(data: bytes) -> int:
    return zlib.crc32(data)


def _digest_prefixes_many(
    digest: Callable[[bytes], bytes], width: int, names: Sequence[bytes]
) -> npt.NDArray[np.unsignedinteger]:
    """Batch form of a hashlib hash: join the digest prefixes, read them big-endian."""
    raw = b"".join([digest(name)[:width] for name in names])
    big_endian = np.dtype(f">u{width}")
    return np.frombuffer(raw, dtype=big_endian).astype(f"u{width}")


def _blake2b_digest(data: bytes) -> bytes:
    return hashlib.blake2b(data).digest()


def _blake2b_prefixes_many(width: int, names: Sequence[bytes]) -> npt.NDArray[np.unsignedinteger]:
    """Batch BLAKE2b prefixes: in C, eight names at a time, when every name fits one block
    (keys and point names do); through hashlib otherwise."""
    if all(len(name) <= c_generate.BLAKE2B_BLOCK_BYTES for name in names):
        return c_generate.blake2b_prefixes_many(names, width)
    return _digest_prefixes_many(_blake2b_digest, width, names)


def _md5_32_many(names: Sequence[bytes]) -> npt.NDArray[np.unsignedinteger]:
    return c_md5.md5_prefix32_many(names, "big")


def _fnv1a_fmix32_many(names: Sequence[bytes]) -> npt.NDArray[np.unsignedinteger]:
    return c_hashes.fnv1a_fmix32_many(names)


def _crc32_many(names: Sequence[bytes]) -> npt.NDArray[np.unsignedinteger]:
    return c_crc32.crc32_many(names)


@dataclass(frozen=True)
class HashFunction:
    """A named hash: its width in bits, and single and batch forms that agree."""
    name: str
    bits: int
    one: Callable[[bytes], int]
    many: Callable[[Sequence[bytes]], npt.NDArray[np.unsignedinteger]]

    @property
    def dtype(self) -> np.dtype[np.unsignedinteger]:
        return np.dtype(np.uint32 if self.bits == 32 else np.uint64)


HASHES: dict[str, HashFunction] = {
    h.name: h
    for h in [
        HashFunction(
            "blake2b-32", 32, _blake2b_32, lambda n: _blake2b_prefixes_many(4, n)
        ),
        HashFunction(
            "blake2b-64", 64, _blake2b_64, lambda n: _blake2b_prefixes_many(8, n)
        ),
        HashFunction("md5-32", 32, _md5_32, _md5_32_many),
        HashFunction("fnv1a-fmix32", 32, _fnv1a_fmix32, _fnv1a_fmix32_many),
        HashFunction("crc32", 32, _crc32, _crc32_many),
    ]
}


#: bytes of a keyed hash's secret key
KEY_BYTES = c_hashes.SIPHASH_KEY_BYTES


def _siphash24_64(data: bytes, key: bytes) -> int:
    return int.from_bytes(siphash24.siphash24(data, key=key).digest(), "little")


def _siphash24_32(data: bytes, key: bytes) -> int:
    return _siphash24_64(data, key) & MASK32


def _siphash24_32_many(names: Sequence[bytes], key: bytes) -> npt.NDArray[np.unsignedinteger]:
    return (c_hashes.siphash24_many(names, key) & MASK32).astype(np.uint32)


@dataclass(frozen=True)
class KeyedHash:
    """A hash that takes a secret key: its width, and single and batch forms of (names, key)."""
    name: str
    bits: int
    one: Callable[[bytes, bytes], int]
    many: Callable[[Sequence[bytes], bytes], npt.NDArray[np.unsignedinteger]]

    def with_key(self, key: bytes) -> HashFunction:
        """This hash under `key`, as a `HashFunction` like the others."""
        if len(key) != KEY_BYTES:
            raise HarnessError(f"hash {self.name!r} needs a key of {KEY_BYTES} bytes "
                               f"(got {len(key)})")
        return HashFunction(self.name, self.bits, lambda data: self.one(data, key),
                            lambda names: self.many(names, key))


KEYED_HASHES: dict[str, KeyedHash] = {
    h.name: h
    for h in [
        KeyedHash("siphash24-32", 32, _siphash24_32, _siphash24_32_many),
        KeyedHash("siphash24-64", 64, _siphash24_64, c_hashes.siphash24_many),
    ]
}
#: every hash name a ring may use, keyed or not
HASH_NAMES: tuple[str, ...] = tuple(sorted([*HASHES, *KEYED_HASHES]))


def is_keyed(name: str) -> bool:
    """Whether the hash called `name` takes a secret key."""
    return name in KEYED_HASHES


def hash_bits(name: str) -> int:
    """The width of the hash called `name`, keyed or not."""
    if name in KEYED_HASHES:
        return KEYED_HASHES[name].bits
    return get_hash(name).bits


def get_hash(name: str, key: bytes | None = None) -> HashFunction:
    """The hash called `name` (a keyed one under `key`), or an error that lists the valid
    names, or says that a keyed hash needs a key and an unkeyed one takes none."""
    if name in KEYED_HASHES:
        if key is None:
            raise HarnessError(f"hash {name!r} is keyed: it needs a secret key of "
                               f"{KEY_BYTES} bytes")
        return KEYED_HASHES[name].with_key(key)
    try:
        function = HASHES[name]
    except KeyError:
        raise UnknownNameError("hash", name, list(HASH_NAMES)) from None
    if key is not None:
        raise HarnessError(f"hash {name!r} takes no key (the keyed ones: "
                           f"{', '.join(KEYED_HASHES)})")
    return function


def hash_one(name: str, data: bytes | str, key: bytes | None = None) -> int:
    """Hash one name with the hash called `name` (a keyed one under `key`)."""
    if isinstance(data, str):
        data = data.encode()
    return get_hash(name, key).one(data)


def hash_many(name: str, names: Sequence[bytes],
              key: bytes | None = None) -> npt.NDArray[np.unsignedinteger]:
    """Hash a batch of encoded names into a uint32 (or uint64) array."""
    return get_hash(name, key).many(names)


def hash_numbered(name: str, prefix: bytes, count: int,
                  key: bytes | None = None) -> npt.NDArray[np.unsignedinteger]:
    """The hashes of `prefix + str(j).encode()` for j in range(count), as `hash_many` gives
    them, with the names formatted and hashed in C (no name list is built): SipHash by
    hashes.c, the hashes the ring generator knows by generate.c on every core."""
    function = get_hash(name, key)
    if name in KEYED_HASHES:
        assert key is not None
        full = c_hashes.siphash24_numbered(prefix, count, key)
        return full if function.bits == 64 else (full & MASK32).astype(np.uint32)
    if name not in c_generate.GENERATED_HASHES:
        return function.many([prefix + str(j).encode() for j in range(count)])
    segments = [(_TEMPLATE_NAME, 0, 0), (_TEMPLATE_NUMBER, 0, 0)]
    points, owners = c_generate.generate_points(name, b"", segments, [prefix], [count],
                                                usable_cores())
    if owners is not None:  # a 64-bit hash: positions and owners apart
        return points
    # packed words, position << 16 | owner (owner 0 here)
    return (points >> np.uint64(16)).astype(np.uint32)


#: template segments of cext/generate.h: the "server's" name (here the prefix), the number
_TEMPLATE_NAME, _TEMPLATE_NUMBER = 1, 2


def xxh64(data: bytes, seed: int = 0) -> int:
    """xxHash64 of `data` with `seed` (Envoy's `HashUtil::xxHash64`)."""
    return xxhash.xxh64_intdigest(data, seed)


def xxh64_many(names: Sequence[bytes], seed: int = 0) -> npt.NDArray[np.uint64]:
    """xxHash64 of each name, into a uint64 array (computed in C; `xxh64` is the library's)."""
    return c_hashes.xxh64_many(names, seed)
