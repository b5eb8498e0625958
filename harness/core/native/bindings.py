"""The bindings of the compiled C core (`harness.core.native.compiled`: `_ring_c`, `_scalar`).

Everything it exposes takes and returns plain Python and numpy values; the
cffi `ffi`/`lib` objects never leave this module. Arrays are allocated, and
batch lookups and the LRU replay (cext/lru.c) run, through cffi; a scalar
lookup is a `_scalar.ScalarLookup` bound to the same array, because
cffi's multi-argument call path costs more than the search itself
(cext/scalar.c). C struct sizes are checked at import, because cffi reports a
packed/unpacked mismatch between its cdef and the compiler only at first use.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError

try:
    from harness.core.native.compiled import _ring_c, _scalar
except ImportError as exc:  # pragma: no cover - depends on how the package was installed
    raise HarnessError(
        "the C core (harness.core.native.compiled) is not built; install the package with "
        "`pip install .` (or `python setup.py build_ext --inplace` in a checkout)"
    ) from exc

ffi, lib = _ring_c.ffi, _ring_c.lib
ScalarLookup = _scalar.ScalarLookup


def _address(cdata: Any) -> int:
    """The address of a cffi array, for a ScalarLookup (which keeps the array alive)."""
    return int(ffi.cast("uintptr_t", cdata))


def _c_input(array: npt.ArrayLike, dtype: type[np.generic]) -> npt.NDArray[Any]:
    """`array` as C-contiguous and aligned `dtype`, copied only if it is not already.

    C reads the elements through typed pointers: from a misaligned buffer (a view at an
    odd byte offset, which np.ascontiguousarray passes through unchanged) that is
    undefined behaviour, reported by tox -e sanitize as "load of misaligned address".
    """
    contiguous = np.ascontiguousarray(array, dtype=dtype)
    return contiguous if contiguous.flags.aligned else contiguous.copy()


def _u32_buffer(array: npt.NDArray[Any]) -> Any:
    return ffi.from_buffer("uint32_t[]", array)


@dataclass(frozen=True)
class StructSpec:
    """What a layout promises about its C struct: stride, offset of idx, hash width."""

    size: int
    idx_offset: int
    hash_bits: int

    @property
    def hash_ctype(self) -> str:
        return f"uint{self.hash_bits}_t"

    @property
    def hash_dtype(self) -> type[np.unsignedinteger]:
        return np.uint32 if self.hash_bits == 32 else np.uint64


#: struct kind in ring.h (`struct ring_entry_<kind>`) -> what the layout promises
STRUCTS: dict[str, StructSpec] = {
    "aligned": StructSpec(size=8, idx_offset=4, hash_bits=32),
    "packed": StructSpec(size=6, idx_offset=4, hash_bits=32),
    "aligned64": StructSpec(size=16, idx_offset=8, hash_bits=64),
    "packed64": StructSpec(size=10, idx_offset=8, hash_bits=64),
}
#: `struct ring_bucket_entry` (bucketed.h): low 16 bits of the position, then idx
BUCKET_ENTRY = StructSpec(size=4, idx_offset=2, hash_bits=32)
#: buckets of the bucketed layout (top 16 bits of a 32-bit hash), as in bucketed.h
BUCKETS = 2**16


def _check_struct(struct: str, prefix: str, spec: StructSpec) -> None:
    c_size = getattr(lib, f"{prefix}_size")()
    c_offset = getattr(lib, f"{prefix}_idx_offset")()
    ffi_size = ffi.sizeof(struct)
    ffi_offset = ffi.offsetof(struct, "idx")
    if not (c_size == ffi_size == spec.size and c_offset == ffi_offset == spec.idx_offset):
        raise HarnessError(
            f"{struct}: expected size {spec.size} and idx at offset {spec.idx_offset}; "
            f"the C compiler says size {c_size}, offset {c_offset}; cffi says size "
            f"{ffi_size}, offset {ffi_offset}"
        )


def _check_struct_layouts() -> None:
    for kind, spec in STRUCTS.items():
        _check_struct(f"struct ring_entry_{kind}", f"ring_entry_{kind}", spec)
    _check_struct("struct ring_bucket_entry", "ring_bucket_entry", BUCKET_ENTRY)


_check_struct_layouts()


def struct_layout(kind: str) -> tuple[int, int]:
    """(sizeof, offsetof idx) of `struct ring_entry_<kind>` (or `ring_bucket_entry` for
    kind "bucket") as the C compiler laid it out."""
    prefix = "ring_bucket_entry" if kind == "bucket" else f"ring_entry_{kind}"
    return (
        int(getattr(lib, f"{prefix}_size")()),
        int(getattr(lib, f"{prefix}_idx_offset")()),
    )


def _u16_out(array: npt.NDArray[np.uint16]) -> Any:
    return ffi.from_buffer("uint16_t[]", array, require_writable=True)


class CEntryArray:
    """A C array of `struct ring_entry_<kind>` built from sorted positions and owners.

    The array is allocated once with `ffi.new` (malloc underneath, so allocator
    profilers see it) and freed when this object is collected.
    """

    def __init__(
        self,
        kind: str,
        positions: npt.NDArray[np.unsignedinteger],
        owners: npt.NDArray[np.uint16],
    ) -> None:
        if kind not in STRUCTS:
            raise HarnessError(f"no C struct layout {kind!r}; valid: {', '.join(STRUCTS)}")
        spec = STRUCTS[kind]
        self._hash_dtype = spec.hash_dtype
        self._hash_array = f"{spec.hash_ctype}[]"
        positions = _c_input(positions, spec.hash_dtype)
        owners = _c_input(owners, np.uint16)
        self.kind = kind
        self.entries = len(positions)
        self.entry_size = spec.size
        self._array = ffi.new(f"struct ring_entry_{kind}[]", self.entries)
        self._lookup_many = getattr(lib, f"ring_lookup_many_{kind}")
        getattr(lib, f"ring_fill_{kind}")(
            self._array,
            ffi.from_buffer(self._hash_array, positions),
            ffi.from_buffer("uint16_t[]", owners),
            self.entries,
        )
        self.lookup: Callable[[int], int] = ScalarLookup(
            kind, _address(self._array), self.entries, 0, self._array
        )

    @property
    def nbytes(self) -> int:
        return int(ffi.sizeof(self._array))

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        # Keys of the struct's hash type, C-contiguous and aligned, are read in place;
        # anything else is converted once.
        keys = _c_input(key_hashes, self._hash_dtype)
        out = np.empty(len(keys), dtype=np.uint16)
        self._lookup_many(
            self._array,
            self.entries,
            ffi.from_buffer(self._hash_array, keys),
            len(keys),
            _u16_out(out),
        )
        return out


class CBucketedRing:
    """The bucketed layout of bucketed.h: a table of 2**16 + 1 bucket offsets and an
    array of 4-byte `struct ring_bucket_entry`, both built in C from sorted positions.

    Both arrays come from `ffi.new` (malloc), so allocator profilers see them.
    """

    def __init__(self, positions: npt.NDArray[np.uint32], owners: npt.NDArray[np.uint16]) -> None:
        if not 0 < len(positions) < 2**32:
            # Offsets are uint32, and a lookup always reads one entry.
            raise HarnessError(
                f"the bucketed layout holds 1 to 2**32-1 entries (got {len(positions)})"
            )
        positions = _c_input(positions, np.uint32)
        owners = _c_input(owners, np.uint16)
        self.entries = len(positions)
        self._offsets = ffi.new("uint32_t[]", BUCKETS + 1)
        self._array = ffi.new("struct ring_bucket_entry[]", self.entries)
        status = lib.ring_bucketed_build(
            self._offsets,
            self._array,
            _u32_buffer(positions),
            ffi.from_buffer("uint16_t[]", owners),
            self.entries,
        )
        if status != 0:
            raise HarnessError("bucketed layout: positions must be sorted and unique")
        self.lookup: Callable[[int], int] = ScalarLookup(
            "bucketed", _address(self._array), self.entries, _address(self._offsets),
            (self._offsets, self._array),
        )

    @property
    def nbytes(self) -> int:
        """The offset table and the entries: every byte this layout allocated."""
        return int(ffi.sizeof(self._offsets) + ffi.sizeof(self._array))

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        # A uint32, C-contiguous, aligned input is read in place; anything else is converted once.
        keys = _c_input(key_hashes, np.uint32)
        out = np.empty(len(keys), dtype=np.uint16)
        lib.ring_bucketed_lookup_many(
            self._offsets, self._array, _u32_buffer(keys), len(keys), _u16_out(out)
        )
        return out


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


def lru_workspace_bytes(n_servers: int, capacity: int) -> int:
    """Bytes `lru_replay` allocates for these caches, or 0 if cext/lru.c cannot index them."""
    return int(lib.lru_workspace_bytes(n_servers, capacity))


def lru_replay(
    servers: npt.NDArray[np.uint16], keys: npt.NDArray[np.uint32], n_servers: int, capacity: int
) -> npt.NDArray[np.bool_]:
    """cext/lru.c's replay: True where request i missed. The caller has checked the inputs
    (harness.core.cache_model): the C code trusts every server index."""
    servers = _c_input(servers, np.uint16)
    keys = _c_input(keys, np.uint32)
    missed = np.empty(len(keys), dtype=np.uint8)
    status = lib.lru_replay(
        ffi.from_buffer("uint16_t[]", servers),
        _u32_buffer(keys),
        len(keys),
        n_servers,
        capacity,
        ffi.from_buffer("uint8_t[]", missed, require_writable=True),
    )
    if status != 0:
        raise HarnessError(
            f"LRU replay: could not allocate {lru_workspace_bytes(n_servers, capacity):,} bytes "
            f"for {n_servers} caches of {capacity} objects"
        )
    return missed.view(np.bool_)


def xxh64_many(names: Sequence[bytes], seed: int = 0) -> npt.NDArray[np.uint64]:
    """xxHash64 of many names, in one C call over a joined buffer."""
    lengths = np.fromiter((len(n) for n in names), dtype=np.uint64, count=len(names))
    offsets = np.zeros(len(names) + 1, dtype=np.uint64)
    np.cumsum(lengths, out=offsets[1:])
    out = np.empty(len(names), dtype=np.uint64)
    lib.xxh64_many(b"".join(names), ffi.from_buffer("uint64_t[]", offsets), len(names), seed,
                   ffi.from_buffer("uint64_t[]", out, require_writable=True))
    return out


def _u64_in(key_hashes: npt.NDArray[np.unsignedinteger]) -> Any:
    # uint64, C-contiguous and aligned input is read in place; anything else is copied once.
    return _c_input(key_hashes, np.uint64)


class CJump:
    """Jump consistent hash over a fixed number of buckets (algorithms.c): no memory at all."""

    def __init__(self, buckets: int) -> None:
        if not 0 < buckets <= 2**16:
            raise HarnessError(f"jump routes to 1 to 65,536 buckets (got {buckets})")
        self.buckets = buckets
        self.lookup: Callable[[int], int] = ScalarLookup("jump", 0, buckets, 0, None)
        #: one key (bytes) hashed with xxHash64 seed 0 and jumped, in one C call
        self.route_one: Callable[[bytes], int] = ScalarLookup("jump-key", 0, buckets, 0, None)

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        keys = _u64_in(key_hashes)
        out = np.empty(len(keys), dtype=np.uint16)
        lib.jump_many(ffi.from_buffer("uint64_t[]", keys), len(keys), self.buckets, _u16_out(out))
        return out

    def lookup_many_portable(
        self, key_hashes: npt.NDArray[np.unsignedinteger]
    ) -> npt.NDArray[np.uint16]:
        """`lookup_many` by the portable lanes even where the CPU has AVX-512 (for tests)."""
        keys = _u64_in(key_hashes)
        out = np.empty(len(keys), dtype=np.uint16)
        lib.jump_many_portable(ffi.from_buffer("uint64_t[]", keys), len(keys), self.buckets,
                               _u16_out(out))
        return out


class CMaglevTable:
    """A Maglev lookup table of uint16 owners, filled in C as Envoy fills its table.

    Hosts come in Envoy's order (sorted by name); `owners[i]` is the server index
    stored for host i. The table comes from `ffi.new` (malloc), so allocator
    profilers see it.
    """

    def __init__(self, offsets: Sequence[int], skips: Sequence[int], weights: Sequence[float],
                 owners: Sequence[int], max_weight: float, table_size: int) -> None:
        self.table_size = table_size
        self._table = ffi.new("uint16_t[]", table_size)
        status = lib.maglev_fill(
            ffi.new("uint64_t[]", list(offsets)), ffi.new("uint64_t[]", list(skips)),
            ffi.new("double[]", list(weights)), ffi.new("uint16_t[]", list(owners)),
            len(owners), max_weight, table_size, self._table)
        if status != 0:
            raise HarnessError(f"maglev: could not allocate the work arrays for a table of "
                               f"{table_size:,} slots")
        self.lookup: Callable[[int], int] = ScalarLookup(
            "maglev", _address(self._table), table_size, 0, self._table)

    @property
    def nbytes(self) -> int:
        return int(ffi.sizeof(self._table))

    def slots(self) -> npt.NDArray[np.uint16]:
        """A copy of the table: the owner of each slot."""
        return np.frombuffer(ffi.buffer(self._table), dtype=np.uint16).copy()

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        keys = _u64_in(key_hashes)
        out = np.empty(len(keys), dtype=np.uint16)
        lib.maglev_lookup_many(self._table, self.table_size, ffi.from_buffer("uint64_t[]", keys),
                               len(keys), _u16_out(out))
        return out


class CMultiProbe:
    """Multi-probe lookups over sorted points (one per server) and probe seeds (algorithms.c).

    Points, owners and seeds come from `ffi.new` (malloc), so allocator profilers see them.
    """

    def __init__(self, points: npt.NDArray[np.uint64], owners: npt.NDArray[np.uint16],
                 seeds: Sequence[int]) -> None:
        if not 0 < len(points) == len(owners) <= 2**16:
            raise HarnessError(f"multi-probe takes 1 to 65,536 points, one owner each "
                               f"(got {len(points)} and {len(owners)})")
        if not seeds:
            raise HarnessError("multi-probe needs at least one probe seed")
        self.entries, self.probes = len(points), len(seeds)
        self._points = ffi.new("uint64_t[]", [int(p) for p in points])
        self._owners = ffi.new("uint16_t[]", [int(o) for o in owners])
        self._seeds = ffi.new("uint64_t[]", list(seeds))
        one, arrays = lib.multiprobe_lookup, (self._points, self._owners, self.entries,
                                              self._seeds, self.probes)

        def lookup(key_hash: int) -> int:
            return int(one(*arrays, key_hash))

        self.lookup: Callable[[int], int] = lookup

    @property
    def nbytes(self) -> int:
        return int(ffi.sizeof(self._points) + ffi.sizeof(self._owners))

    def points(self) -> npt.NDArray[np.uint64]:
        """The sorted points (a read-only view of the C array)."""
        return np.frombuffer(ffi.buffer(self._points), dtype=np.uint64)

    def owners(self) -> npt.NDArray[np.uint16]:
        """The server of each point (a read-only view of the C array)."""
        return np.frombuffer(ffi.buffer(self._owners), dtype=np.uint16)

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        keys = _u64_in(key_hashes)
        out = np.empty(len(keys), dtype=np.uint16)
        lib.multiprobe_lookup_many(self._points, self._owners, self.entries, self._seeds,
                                   self.probes, ffi.from_buffer("uint64_t[]", keys), len(keys),
                                   _u16_out(out))
        return out


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """Standard MurmurHash3_x86_32 of `data`."""
    return int(lib.murmur3_32(data, len(data), seed))


class CRendezvousNodes:
    """Rendezvous nodes scored as MurmurHash3_x86_32 (seed 0) of `prefix + key`, where
    each prefix's whole 4-byte blocks are hashed once, here (algorithms.c).

    `ranks[i]` is node i's place in name order: a tie goes to the greater rank.
    """

    def __init__(self, prefixes: Sequence[bytes], ranks: Sequence[int]) -> None:
        self.count = len(prefixes)
        if not 0 < self.count <= 2**16:
            raise HarnessError(f"rendezvous picks among 1 to 65,536 nodes (got {self.count})")
        self._nodes = ffi.new("struct rendezvous_node[]", self.count)
        for i, (prefix, rank) in enumerate(zip(prefixes, ranks, strict=True)):
            lib.rendezvous_prepare(self._nodes + i, prefix, len(prefix), rank)
        self._pick = lib.rendezvous_pick

    @property
    def nbytes(self) -> int:
        return int(ffi.sizeof(self._nodes))

    def score(self, node: int, key: bytes) -> int:
        return int(lib.rendezvous_score(self._nodes + node, key, len(key)))

    def pick(self, key: bytes) -> int:
        return int(self._pick(self._nodes, self.count, key, len(key)))

    def pick_many(self, data: bytes, offsets: npt.NDArray[np.uint64],
                  indexes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        """The winner for keys given as indexes into keys stored end to end in `data`
        (key i is data[offsets[i]:offsets[i + 1]])."""
        keys = _u64_in(indexes)
        if len(keys) and int(keys.max()) >= len(offsets) - 1:
            raise HarnessError(f"key index {int(keys.max())} is not in the key table "
                               f"({len(offsets) - 1} keys): rendezvous lookups take the "
                               "indexes hash_keys gave in this process")
        if len(offsets) and int(offsets[-1]) > len(data):
            raise HarnessError("key table offsets point past its data")
        out = np.empty(len(keys), dtype=np.uint16)
        lib.rendezvous_pick_many(
            self._nodes, self.count, data, ffi.from_buffer("uint64_t[]", offsets),
            ffi.from_buffer("uint64_t[]", keys), len(keys), _u16_out(out))
        return out

class CBoundedLoad:
    """Consistent hashing with bounded loads over a ring's arrays, HAProxy's rule (algorithms.c).

    `lookup(h)` is the next request of this object's own stream (its loads start at
    zero; `reset()` empties them again); `lookup_many(hashes)` routes a whole request
    sequence from zero loads, leaving the stream alone. The ring's copies, the weights
    and the stream's loads come from `ffi.new` (malloc), so allocator profilers see them.
    """

    def __init__(self, positions: npt.NDArray[np.unsignedinteger],
                 owners: npt.NDArray[np.uint16], weights: Sequence[int], factor: int) -> None:
        bits = positions.dtype.itemsize * 8
        if bits not in (32, 64) or not 0 < len(positions) == len(owners):
            raise HarnessError(f"bounded loads take a ring of 32- or 64-bit positions, one "
                               f"owner each (got {len(positions)} {bits}-bit positions and "
                               f"{len(owners)} owners)")
        if not 0 < len(weights) <= 2**16 or int(owners.max()) >= len(weights):
            raise HarnessError(f"bounded loads need a weight for every owner (got "
                               f"{len(weights)} weights)")
        self.bits, self.servers = bits, len(weights)
        self._dtype = np.uint32 if bits == 32 else np.uint64
        ctype = "uint32_t" if bits == 32 else "uint64_t"
        self._positions = ffi.new(f"{ctype}[]", len(positions))
        ffi.memmove(self._positions, _c_input(positions, self._dtype), ffi.sizeof(self._positions))
        self._owners = ffi.new("uint16_t[]", len(owners))
        ffi.memmove(self._owners, _c_input(owners, np.uint16), ffi.sizeof(self._owners))
        cumulative = np.concatenate([[0], np.cumsum(weights, dtype=np.uint64)[:-1]])
        self._weights = ffi.new("uint64_t[]", [int(w) for w in weights])
        self._cumulative = ffi.new("uint64_t[]", [int(c) for c in cumulative])
        self._ring = ffi.new("struct bounded_ring *", {
            "positions": self._positions, "owners": self._owners, "points": len(positions),
            "weights": self._weights, "cumulative": self._cumulative,
            "servers": len(weights), "total_weight": int(sum(weights)), "factor": factor})
        self._loads = ffi.new("uint64_t[]", len(weights))
        self._served = ffi.new("uint64_t *")
        self._next = lib.bounded_next32 if bits == 32 else lib.bounded_next64
        self._route = lib.bounded_route32 if bits == 32 else lib.bounded_route64
        ring, loads, served, one = self._ring, self._loads, self._served, self._next

        def lookup(key_hash: int) -> int:
            return int(one(ring, loads, served, key_hash))

        self.lookup: Callable[[int], int] = lookup

    @property
    def nbytes(self) -> int:
        """The ring's copies, the weights and the stream's loads."""
        return int(sum(ffi.sizeof(a) for a in (self._positions, self._owners, self._weights,
                                                self._cumulative, self._loads)))

    def positions(self) -> npt.NDArray[np.unsignedinteger]:
        """The ring's sorted positions (a read-only view of the C array)."""
        return np.frombuffer(ffi.buffer(self._positions), dtype=self._dtype)

    def owners(self) -> npt.NDArray[np.uint16]:
        """The server of each position (a read-only view of the C array)."""
        return np.frombuffer(ffi.buffer(self._owners), dtype=np.uint16)

    def loads(self) -> npt.NDArray[np.uint64]:
        """The stream's load of each server (a copy)."""
        return np.frombuffer(ffi.buffer(self._loads), dtype=np.uint64).copy()

    def reset(self) -> None:
        """Empty the stream: every load back to zero, as if no request had come."""
        ffi.memmove(self._loads, bytes(ffi.sizeof(self._loads)), ffi.sizeof(self._loads))
        self._served[0] = 0

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        keys = _c_input(key_hashes, self._dtype)
        loads = np.zeros(self.servers, dtype=np.uint64)
        served = ffi.new("uint64_t *")
        out = np.empty(len(keys), dtype=np.uint16)
        self._route(self._ring, ffi.from_buffer("uint64_t[]", loads, require_writable=True),
                    served, ffi.from_buffer(f"uint{self.bits}_t[]", keys), len(keys),
                    _u16_out(out))
        return out


def murmur64a(data: bytes, seed: int) -> int:
    """MurmurHash64A of `data`, as mcrouter's murmur_hash_64A (algorithms.c)."""
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
    """CityHash's Hash128to64, as mcrouter's RendezvousHashHelper.h (algorithms.c)."""
    return int(lib.hash128to64(upper, lower))


def wrendezvous_score(weight: float, server_hash: int, key_hash: int) -> float:
    """One weighted-rendezvous score, computed in C exactly as the lookups compute it."""
    return float(lib.wrendezvous_score(weight, server_hash, key_hash))


class CWeightedRendezvous:
    """Weighted rendezvous nodes (name hash, weight), in configuration order: the first
    node of the strictly highest score wins (algorithms.c).

    The nodes come from `ffi.new` (malloc), so allocator profilers see them; a scalar
    lookup is a ScalarLookup bound to them.
    """

    def __init__(self, hashes: Sequence[int], weights: Sequence[float]) -> None:
        self.count = len(hashes)
        if not 0 < self.count == len(weights) <= 2**16:
            raise HarnessError(f"weighted rendezvous picks among 1 to 65,536 nodes, one weight "
                               f"each (got {self.count} and {len(weights)})")
        self._nodes = ffi.new("struct wrendezvous_node[]", self.count)
        for i, (node_hash, weight) in enumerate(zip(hashes, weights, strict=True)):
            self._nodes[i].hash = node_hash
            self._nodes[i].weight = weight
        self.lookup: Callable[[int], int] = ScalarLookup(
            "rendezvous-weighted", _address(self._nodes), self.count, 0, self._nodes)

    @property
    def nbytes(self) -> int:
        return int(ffi.sizeof(self._nodes))

    @property
    def entry_size(self) -> int:
        return int(ffi.sizeof("struct wrendezvous_node"))

    def nodes(self) -> tuple[list[int], list[float]]:
        """Each node's name hash and weight, read back from the C array."""
        nodes = [self._nodes[i] for i in range(self.count)]
        return [int(n.hash) for n in nodes], [float(n.weight) for n in nodes]

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        keys = _u64_in(key_hashes)
        out = np.empty(len(keys), dtype=np.uint16)
        lib.wrendezvous_pick_many(self._nodes, self.count, ffi.from_buffer("uint64_t[]", keys),
                                  len(keys), _u16_out(out))
        return out


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
    return ffi.NULL if owners is None else _u16_out(owners)


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
            _u32_buffer(base_array),
            ffi.from_buffer("uint64_t[]", count_array),
            len(count_array),
            ffi.from_buffer(words, require_writable=True),
            _owners_out(owners),
            threads,
        )
    )
    return words, owners


def split_packed(
    words: npt.NDArray[np.uint64], keep_highest: bool
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint16], int]:
    """Sorted packed words of a 32-bit ring -> unique positions and their owners (lean.h):
    arrays as long as `words` whose first `kept` slots are filled, and `kept`."""
    positions = np.empty(len(words), dtype=np.uint32)
    owners = np.empty(len(words), dtype=np.uint16)
    kept = lib.ring_split_packed32(
        ffi.from_buffer("uint64_t[]", words),
        len(words),
        int(keep_highest),
        ffi.from_buffer("uint32_t[]", positions, require_writable=True),
        _u16_out(owners),
    )
    return positions, owners, int(kept)


def sort_dedupe64(
    positions: npt.NDArray[np.uint64], owners: npt.NDArray[np.uint16], keep_highest: bool,
    threads: int = 1,
) -> int:
    """Sort 64-bit (position, owner) pairs in place on `threads` threads and keep one
    point per position (lean.h); returns how many points lead both arrays afterwards."""
    if not (positions.flags.c_contiguous and owners.flags.c_contiguous):
        raise HarnessError("sort_dedupe64 sorts in place: positions and owners must be contiguous")
    kept = lib.ring_sort_dedupe64(
        ffi.from_buffer("uint64_t[]", positions, require_writable=True),
        _u16_out(owners),
        len(positions),
        int(keep_highest),
        threads,
    )
    return int(kept)


def arc_sums(
    positions: npt.NDArray[np.unsignedinteger], owners: npt.NDArray[np.uint16], servers: int
) -> npt.NDArray[np.float64]:
    """Per-server sums of the arcs ending at its points, in hash units (lean.h)."""
    bits = positions.dtype.itemsize * 8
    positions = np.ascontiguousarray(positions)
    owners = np.ascontiguousarray(owners, dtype=np.uint16)
    size = max(servers, int(owners.max()) + 1 if len(owners) else 0)
    out = np.zeros(size, dtype=np.float64)
    getattr(lib, f"ring_arc_sums{bits}")(
        ffi.from_buffer(f"uint{bits}_t[]", positions),
        ffi.from_buffer("uint16_t[]", owners),
        len(positions),
        ffi.from_buffer("double[]", out, require_writable=True),
    )
    return out


def search_reference(positions: npt.NDArray[np.unsignedinteger]) -> Callable[[int], int]:
    """A plain lower bound over the sorted `positions` (32 or 64 bits), called exactly like
    a C layout's scalar lookup; returns the index of the first position >= the key. The
    timing gate's reference for scalar lookups that run in C (cext/scalar.c)."""
    bits = positions.dtype.itemsize * 8
    if bits not in (32, 64) or len(positions) < 1:
        raise HarnessError(f"a search reference needs 32- or 64-bit positions (got {bits} bits, "
                           f"{len(positions)} of them)")
    array = _c_input(positions, np.uint32 if bits == 32 else np.uint64)
    lookup: Callable[[int], int] = ScalarLookup(f"search{bits}", array.ctypes.data, len(array),
                                                0, array)
    return lookup


def random_reads(array: npt.NDArray[np.uint32], key_hashes: npt.NDArray[np.uint32]) -> Any:
    """One independent read of `array` per key, at index (key * len) >> 32
    (random_access.h); returns the values read, as uint16."""
    keys = np.ascontiguousarray(key_hashes, dtype=np.uint32)
    out = np.empty(len(keys), dtype=np.uint16)
    lib.ring_random_reads(_u32_buffer(array), len(array), _u32_buffer(keys), len(keys),
                          _u16_out(out))
    return out
