"""Rendezvous (highest random weight) hashing: Thaler & Ravishankar, "Using
Name-Based Mappings to Increase Hit Rates" (1998), exactly as pymemcache 4's
`RendezvousHash` scores it.

`ALGORITHMS["rendezvous"].build(servers)` takes no parameters and holds one
small record per server. It has no weights (pymemcache has none): servers
must all weigh 1. Server `name` scores key k as MurmurHash3_x86_32 (seed 0)
of `name + "-" + k` (UTF-8); the highest score wins and a tie goes to the
greater name. For ASCII names and keys, `route([k])` is pymemcache's
`RendezvousHash(names).get_node(k.decode())` (pymemcache hashes characters, not
bytes, so it agrees only on ASCII; and it formats a `bytes` key as "b'k'").

What `lookup` takes. The score hashes the key's bytes together with each
server's name, so no fixed-width hash of the key alone can give the same
picks: a 32- or 64-bit key hash would be a different algorithm. The honest
"key hash" is therefore the key itself, by reference: `hash_keys` stores each
distinct key once in the process's key table (`KEYS`) and returns its index
there (uint64), and `lookup(i)` / `lookup_many(indexes)` score the stored key
against every server, O(N) per key as rendezvous is. Indexes stay valid for
the life of the process, so the same indexes can be routed before and after
a server is added or removed. The key table is the workload's, not the
algorithm's: `nbytes` counts only the per-server records.

Fast paths in C (cext/algorithms.c): each server's prefix `name + "-"` is
hashed once up to its last whole 4-byte block, and each key's blocks are mixed
once for each of the (at most four) places a prefix can end inside a block, so
scoring a key against one more server costs one chain step per key block. The
references hash the whole string.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Self

import numpy as np
import numpy.typing as npt

from harness.core.native import algorithms as c_algorithms
from harness.core.servers import Server
from harness.recipes.algorithms.base import OneForm, unweighted_problem

MASK32 = 0xFFFFFFFF
C1, C2 = 0xCC9E2D51, 0x1B873593


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """MurmurHash3_x86_32, in plain Python."""
    h1 = seed
    whole = len(data) // 4 * 4
    for i in range(0, whole, 4):
        k1 = (int.from_bytes(data[i:i + 4], "little") * C1) & MASK32
        k1 = (((k1 << 15) | (k1 >> 17)) * C2) & MASK32
        h1 ^= k1
        h1 = ((((h1 << 13) | (h1 >> 19)) & MASK32) * 5 + 0xE6546B64) & MASK32
    if len(data) > whole:
        k1 = (int.from_bytes(data[whole:], "little") * C1) & MASK32
        h1 ^= (((k1 << 15) | (k1 >> 17)) * C2) & MASK32
    h1 ^= len(data)
    h1 ^= h1 >> 16
    h1 = (h1 * 0x85EBCA6B) & MASK32
    h1 ^= h1 >> 13
    h1 = (h1 * 0xC2B2AE35) & MASK32
    return h1 ^ (h1 >> 16)


def _rotl(x: npt.NDArray[np.uint32], r: int) -> npt.NDArray[np.uint32]:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def murmur3_32_rows(rows: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint32]:
    """MurmurHash3_x86_32 (seed 0) of each row of a 2-D uint8 array, vectorised over rows."""
    count, length = rows.shape
    whole = length // 4 * 4
    h1 = np.zeros(count, dtype=np.uint32)
    blocks = np.ascontiguousarray(rows[:, :whole]).view("<u4").astype(np.uint32)
    c1, c2 = np.uint32(C1), np.uint32(C2)
    for b in range(whole // 4):
        h1 ^= _rotl(blocks[:, b] * c1, 15) * c2
        h1 = _rotl(h1, 13) * np.uint32(5) + np.uint32(0xE6546B64)
    if length > whole:
        k1 = np.zeros(count, dtype=np.uint32)
        for i in range(length - whole):
            k1 |= rows[:, whole + i].astype(np.uint32) << np.uint32(8 * i)
        h1 ^= _rotl(k1 * c1, 15) * c2
    h1 ^= np.uint32(length & MASK32)
    h1 ^= h1 >> np.uint32(16)
    h1 *= np.uint32(0x85EBCA6B)
    h1 ^= h1 >> np.uint32(13)
    h1 *= np.uint32(0xC2B2AE35)
    h1 ^= h1 >> np.uint32(16)
    return h1


class KeyTable:
    """Every distinct key routed by rendezvous in this process, stored once; a key's
    index here is what rendezvous lookups take."""

    def __init__(self) -> None:
        self._index: dict[bytes, int] = {}
        self.keys: list[bytes] = []
        self._data = bytearray()
        self._offsets = [0]
        self._arrays: tuple[bytes, npt.NDArray[np.uint64]] | None = None

    def __len__(self) -> int:
        return len(self.keys)

    def indexes(self, keys: Sequence[bytes]) -> npt.NDArray[np.uint64]:
        """Each key's index, adding the keys not seen before."""
        out = np.empty(len(keys), dtype=np.uint64)
        index = self._index
        for k, key in enumerate(keys):
            i = index.get(key)
            if i is None:
                key = bytes(key)
                i = index[key] = len(self.keys)
                self.keys.append(key)
                self._data += key
                self._offsets.append(len(self._data))
                self._arrays = None
            out[k] = i
        # Made now, with the keys, so that lookups allocate nothing for the table.
        self.arrays()
        return out

    def arrays(self) -> tuple[bytes, npt.NDArray[np.uint64]]:
        """The keys end to end, and where each starts (plus the end): what C reads."""
        if self._arrays is None:
            self._arrays = (bytes(self._data), np.array(self._offsets, dtype=np.uint64))
        return self._arrays

    def lookup_keys(self, indexes: npt.NDArray[np.unsignedinteger]) -> list[bytes]:
        keys = self.keys
        return [keys[int(i)] for i in indexes]


#: the process's key table, shared by every rendezvous instance
KEYS = KeyTable()


class RendezvousAlgorithm(OneForm):
    """pymemcache's rendezvous hashing over the servers (no weights)."""

    name: ClassVar[str] = "rendezvous"
    #: a build: each server's key table (132 us a server on 1,000 servers); measured by
    #: benchmarks/build_rates.py (2026-12-05, best of 2, load average 3.9), with a margin
    build_seconds_per_entry: ClassVar[float | None] = 200e-6

    def __init__(self, servers: Sequence[Server], params: dict[str, Any]) -> None:
        super().__init__(servers, params)
        # Only the C records are kept: the memory figures count what routing needs.
        self._nodes = c_algorithms.CRendezvousNodes(self._prefixes(), self._ranks())
        keys, pick = KEYS.keys, self._nodes.pick

        def lookup(key_hash: int) -> int:
            return pick(keys[key_hash])

        self.lookup: Callable[[int], int] = lookup

    def _prefixes(self) -> list[bytes]:
        """What each server's scores hash before the key: its name and "-"."""
        return [f"{s.name}-".encode() for s in self._servers]

    def _ranks(self) -> list[int]:
        """Each server's place in name order (a tie goes to the greater name)."""
        by_name = sorted(range(len(self._servers)), key=lambda i: self._servers[i].name)
        ranks = [0] * len(self._servers)
        for rank, i in enumerate(by_name):
            ranks[i] = rank
        return ranks

    @classmethod
    def estimated_seconds(cls, servers: Sequence[Server], params: dict[str, Any], *,
                          reference_keys: int, fast_keys: int,
                          plain_keys: int) -> tuple[float, str]:
        """Every key scores every server: in pure Python for the plain reference (7.7 us a
        score, pymemcache's murmur3 as written), in numpy for the vectorised one (97 ns) and
        in C (8 ns); measured on 1,000 servers and 20,000 keys, with a margin of 1.5."""
        n = len(servers)
        seconds = 1.5 * n * (plain_keys * 7.7e-6 + reference_keys * 97e-9 + fast_keys * 8e-9)
        return seconds, (f"rendezvous scores all {n:,} servers for each key, "
                         f"{plain_keys:,} of them in plain Python")

    @classmethod
    def check_servers(cls, servers: Sequence[Server], params: dict[str, Any]) -> str | None:
        return unweighted_problem("rendezvous", servers)

    @classmethod
    def estimated_entries(cls, servers: Sequence[Server], params: dict[str, Any]) -> int:
        return len(servers)

    @classmethod
    def label_for(cls, params: dict[str, Any]) -> str:
        return "murmur3"

    @classmethod
    def build(cls, servers: Sequence[Server], **params: Any) -> Self:
        return cls(servers, cls.checked_params(servers, params))

    @property
    def key_bits(self) -> int:
        return 64

    @property
    def entries(self) -> int:
        return len(self._servers)

    @property
    def entry_size(self) -> int:
        return self._nodes.nbytes // len(self._servers)

    @property
    def nbytes(self) -> int:
        return self._nodes.nbytes

    def hash_keys(self, keys: Sequence[bytes]) -> npt.NDArray[np.unsignedinteger]:
        return KEYS.indexes(keys)

    def route(self, keys: Sequence[bytes]) -> npt.NDArray[np.uint16]:
        return self.lookup_many(KEYS.indexes(keys))

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        data, offsets = KEYS.arrays()
        return self._nodes.pick_many(data, offsets, key_hashes)

    def reference_owners(
        self, key_hashes: npt.NDArray[np.unsignedinteger]
    ) -> npt.NDArray[np.uint16]:
        keys = KEYS.lookup_keys(np.asarray(key_hashes))
        owners = np.zeros(len(keys), dtype=np.uint16)
        lengths = np.fromiter((len(k) for k in keys), dtype=np.int64, count=len(keys))
        for length in np.unique(lengths):
            where = np.flatnonzero(lengths == length)
            rows = np.frombuffer(b"".join(keys[i] for i in where), dtype=np.uint8).reshape(
                len(where), int(length))
            best = np.full(len(where), -1, dtype=np.int64)
            best_rank = np.full(len(where), -1, dtype=np.int64)
            for server, (prefix, rank) in enumerate(zip(self._prefixes(), self._ranks(),
                                                        strict=True)):
                head = np.broadcast_to(np.frombuffer(prefix, dtype=np.uint8),
                                       (len(where), len(prefix)))
                score = murmur3_32_rows(np.hstack([head, rows])).astype(np.int64)
                wins = (score > best) | ((score == best) & (rank > best_rank))
                best[wins], best_rank[wins] = score[wins], rank
                owners[where[wins]] = server
        return owners

    def scores(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.int64]:
        """keys x servers: each server's score for each key, with its name rank below it
        (score * 2**16 + rank), so that the larger number wins, a tie going to the greater
        name: the order the owner is picked by, for every server (replica sets)."""
        keys = KEYS.lookup_keys(np.asarray(key_hashes))
        out = np.zeros((len(keys), len(self._servers)), dtype=np.int64)
        lengths = np.fromiter((len(k) for k in keys), dtype=np.int64, count=len(keys))
        for length in np.unique(lengths):
            where = np.flatnonzero(lengths == length)
            rows = np.frombuffer(b"".join(keys[i] for i in where), dtype=np.uint8).reshape(
                len(where), int(length))
            for server, (prefix, rank) in enumerate(zip(self._prefixes(), self._ranks(),
                                                        strict=True)):
                head = np.broadcast_to(np.frombuffer(prefix, dtype=np.uint8),
                                       (len(where), len(prefix)))
                score = murmur3_32_rows(np.hstack([head, rows])).astype(np.int64)
                out[where, server] = (score << 16) + rank
        return out

    def ranked_reference(self, key_hash: int, copies: int) -> list[int]:
        """The `copies` best servers for one key, best first, in plain Python: highest
        score, a tie to the greater name (the first is `reference_lookup_many`'s owner)."""
        (key,) = KEYS.lookup_keys(np.array([key_hash], dtype=np.uint64))
        ranked = sorted(range(len(self._servers)), reverse=True,
                        key=lambda i: (murmur3_32(self._prefixes()[i] + key),
                                       self._servers[i].name))
        return ranked[:copies]

    def reference_lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> list[int]:
        owners, prefixes = [], self._prefixes()
        for key in KEYS.lookup_keys(np.asarray(key_hashes)):
            scores = [(murmur3_32(prefix + key), s.name)
                      for prefix, s in zip(prefixes, self._servers, strict=True)]
            owners.append(scores.index(max(scores)))
        return owners

    def exact_shares(self) -> None:
        # Each key's owner depends on the key's bytes, not on a position in a hash space.
        return None
