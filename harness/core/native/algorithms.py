"""Bindings of cext/algorithms.c: the consistent-hashing algorithms beyond the ring.

Jump (`CJump`), Maglev (`CMaglevTable`), multi-probe (`CMultiProbe`), rendezvous
(`CRendezvousNodes`), bounded loads (`CBoundedLoad`) and weighted rendezvous
(`CWeightedRendezvous`, `wrendezvous_score`). Each holds its C arrays (from `ffi.new`)
and routes batches of key hashes in one C call; jump, Maglev and weighted rendezvous
look one key up through a ScalarLookup (harness.core.native.scalar). The hashes they
use are cext/hashes.c's, bound by harness.core.native.hashes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.native._c import address, c_input, ffi, lib, u16_out, u64_in
from harness.core.native.scalar import ScalarLookup

__all__ = [
    "CBoundedLoad",
    "CJump",
    "CMaglevTable",
    "CMultiProbe",
    "CRendezvousNodes",
    "CWeightedRendezvous",
    "wrendezvous_score",
]


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
        keys = u64_in(key_hashes)
        out = np.empty(len(keys), dtype=np.uint16)
        lib.jump_many(ffi.from_buffer("uint64_t[]", keys), len(keys), self.buckets, u16_out(out))
        return out

    def lookup_many_portable(
        self, key_hashes: npt.NDArray[np.unsignedinteger]
    ) -> npt.NDArray[np.uint16]:
        """`lookup_many` by the portable lanes even where the CPU has AVX-512 (for tests)."""
        keys = u64_in(key_hashes)
        out = np.empty(len(keys), dtype=np.uint16)
        lib.jump_many_portable(ffi.from_buffer("uint64_t[]", keys), len(keys), self.buckets,
                               u16_out(out))
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
            "maglev", address(self._table), table_size, 0, self._table)

    @property
    def nbytes(self) -> int:
        return int(ffi.sizeof(self._table))

    def slots(self) -> npt.NDArray[np.uint16]:
        """A copy of the table: the owner of each slot."""
        return np.frombuffer(ffi.buffer(self._table), dtype=np.uint16).copy()

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        keys = u64_in(key_hashes)
        out = np.empty(len(keys), dtype=np.uint16)
        lib.maglev_lookup_many(self._table, self.table_size, ffi.from_buffer("uint64_t[]", keys),
                               len(keys), u16_out(out))
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
        keys = u64_in(key_hashes)
        out = np.empty(len(keys), dtype=np.uint16)
        lib.multiprobe_lookup_many(self._points, self._owners, self.entries, self._seeds,
                                   self.probes, ffi.from_buffer("uint64_t[]", keys), len(keys),
                                   u16_out(out))
        return out


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
        keys = u64_in(indexes)
        if len(keys) and int(keys.max()) >= len(offsets) - 1:
            raise HarnessError(f"key index {int(keys.max())} is not in the key table "
                               f"({len(offsets) - 1} keys): rendezvous lookups take the "
                               "indexes hash_keys gave in this process")
        if len(offsets) and int(offsets[-1]) > len(data):
            raise HarnessError("key table offsets point past its data")
        out = np.empty(len(keys), dtype=np.uint16)
        lib.rendezvous_pick_many(
            self._nodes, self.count, data, ffi.from_buffer("uint64_t[]", offsets),
            ffi.from_buffer("uint64_t[]", keys), len(keys), u16_out(out))
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
        ffi.memmove(self._positions, c_input(positions, self._dtype), ffi.sizeof(self._positions))
        self._owners = ffi.new("uint16_t[]", len(owners))
        ffi.memmove(self._owners, c_input(owners, np.uint16), ffi.sizeof(self._owners))
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
        keys = c_input(key_hashes, self._dtype)
        loads = np.zeros(self.servers, dtype=np.uint64)
        served = ffi.new("uint64_t *")
        out = np.empty(len(keys), dtype=np.uint16)
        self._route(self._ring, ffi.from_buffer("uint64_t[]", loads, require_writable=True),
                    served, ffi.from_buffer(f"uint{self.bits}_t[]", keys), len(keys),
                    u16_out(out))
        return out


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
            "rendezvous-weighted", address(self._nodes), self.count, 0, self._nodes)

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
        keys = u64_in(key_hashes)
        out = np.empty(len(keys), dtype=np.uint16)
        lib.wrendezvous_pick_many(self._nodes, self.count, ffi.from_buffer("uint64_t[]", keys),
                                  len(keys), u16_out(out))
        return out
