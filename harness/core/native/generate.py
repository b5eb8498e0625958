"""Bindings of cext/generate.c and cext/blake2b_lanes.c: ring points named and hashed in C.

`generate_points` formats every point name of a template and hashes it with one of
`GENERATED_HASHES` (generate.h); `generate_nginx` follows nginx's CRC-32 chains.
`blake2b_prefixes_many` is blake2b_lanes.c's batch BLAKE2b-512 over names of up to one
block (`BLAKE2B_BLOCK_BYTES`), the same code that hashes generate.c's short names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.native._c import ffi, lib, u16_out, u32_buffer

__all__ = [
    "BLAKE2B_BLOCK_BYTES",
    "GENERATED_HASHES",
    "Points",
    "blake2b_prefixes_many",
    "generate_nginx",
    "generate_points",
]


#: C hash kinds of generate.h, by the hash names of harness.core.hashing
GENERATED_HASHES = {
    "blake2b-32": 0,
    "blake2b-64": 1,
    "md5-32": 2,
    "fnv1a-fmix32": 3,
    "crc32": 4,
}
#: libketama's kind: each MD5 digest read as four little-endian 32-bit points
_MD5_KETAMA = 5
_GENERATION_ERRORS = {
    -1: "out of memory",
    -2: "OpenSSL's libcrypto failed to hash (is BLAKE2b/MD5 available?)",
    -3: "bad argument",
    -4: "could not start a thread",
}

#: Points as the C generators write them: sorted-ready packed words (32-bit rings),
#: or positions and owners (64-bit rings).
Points = tuple[npt.NDArray[np.unsignedinteger], npt.NDArray[np.uint16] | None]


def _check_generation(status: int) -> None:
    if status != 0:
        raise HarnessError(f"point generation in C: {_GENERATION_ERRORS.get(status, status)}")


def _point_arrays(total: int, bits: int) -> Points:
    """Packed uint64 words (position << 16 | owner) for 32-bit rings; for 64-bit rings,
    positions and owners."""
    if bits == 32:
        return np.empty(total, dtype=np.uint64), None
    return np.empty(total, dtype=np.uint64), np.empty(total, dtype=np.uint16)


def _owners_out(owners: npt.NDArray[np.uint16] | None) -> Any:
    return ffi.NULL if owners is None else u16_out(owners)


def generate_points(
    hash_name: str,
    literals: bytes,
    segments: Sequence[tuple[int, int, int]],
    names: Sequence[bytes],
    counts: Sequence[int],
    threads: int,
    points_per_name: int = 1,
) -> Points:
    """Every point in server order, named and hashed in C (generate.h).

    `segments` are (kind, start, length) with kind 0 = literals[start:start+length],
    1 = the server's name, 2 = the point number j. `points_per_name` 4 is libketama's
    reading of an MD5 digest (hash_name "md5-32" only). Returns packed words for
    32-bit hashes, positions and owners for blake2b-64 (see `Points`).
    """
    if points_per_name == 4 and hash_name == "md5-32":
        kind = _MD5_KETAMA
    elif points_per_name == 1:
        kind = GENERATED_HASHES[hash_name]
    else:
        raise HarnessError(f"no C generator for {points_per_name} points per {hash_name} name")
    count_array = np.asarray(counts, dtype=np.uint64)
    positions, owners = _point_arrays(
        int(count_array.sum()) * points_per_name, 64 if hash_name == "blake2b-64" else 32
    )
    name_offsets = np.zeros(len(names) + 1, dtype=np.uint64)
    np.cumsum([len(n) for n in names], out=name_offsets[1:])
    segment_array = np.asarray(segments, dtype=np.int64).reshape(-1)
    _check_generation(
        lib.ring_generate_points(
            kind,
            # from_buffer needs at least one byte to point at
            ffi.from_buffer("uint8_t[]", literals or b"\0"),
            ffi.from_buffer("int64_t[]", segment_array),
            len(segments),
            ffi.from_buffer("uint8_t[]", b"".join(names) or b"\0"),
            ffi.from_buffer("uint64_t[]", name_offsets),
            ffi.from_buffer("uint64_t[]", count_array),
            len(count_array),
            ffi.from_buffer(positions, require_writable=True),
            _owners_out(owners),
            threads,
        )
    )
    return positions, owners


def generate_nginx(bases: Sequence[int], counts: Sequence[int], threads: int) -> Points:
    """nginx's CRC-32 chains (generate.h), one per server from its base CRC, in server
    order, as packed words."""
    base_array = np.asarray(bases, dtype=np.uint32)
    count_array = np.asarray(counts, dtype=np.uint64)
    words, owners = _point_arrays(int(count_array.sum()), 32)
    _check_generation(
        lib.ring_generate_nginx(
            u32_buffer(base_array),
            ffi.from_buffer("uint64_t[]", count_array),
            len(count_array),
            ffi.from_buffer(words, require_writable=True),
            _owners_out(owners),
            threads,
        )
    )
    return words, owners


#: longest name `blake2b_prefixes_many` hashes: one BLAKE2b block (blake2b_lanes.h)
BLAKE2B_BLOCK_BYTES = 128


def blake2b_prefixes_many(names: Sequence[bytes], width: int) -> npt.NDArray[np.unsignedinteger]:
    """The first `width` (4 or 8) bytes of BLAKE2b-512 of each name, read big-endian, hashed
    eight names at a time in C (blake2b_lanes.h); every name at most one block long."""
    lengths = np.fromiter((len(n) for n in names), dtype=np.uint64, count=len(names))
    offsets = np.zeros(len(names) + 1, dtype=np.uint64)
    np.cumsum(lengths, out=offsets[1:])
    out: npt.NDArray[np.unsignedinteger] = np.empty(
        len(names), dtype=np.uint32 if width == 4 else np.uint64
    )
    status = lib.blake2b512_prefixes_many(
        ffi.from_buffer("uint8_t[]", b"".join(names) or b"\0"),
        ffi.from_buffer("uint64_t[]", offsets),
        len(names),
        width,
        ffi.from_buffer(out, require_writable=True),
    )
    if status != 0:
        raise HarnessError(f"blake2b_prefixes_many: width {width} or a name over one block")
    return out
