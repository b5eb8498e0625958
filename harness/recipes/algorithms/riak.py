"""Riak's fixed ring: `ring_creation_size` partitions claimed by nodes, as riak_core does.

`ALGORITHMS["riak"].build(servers, ring_creation_size=64, target_n_val=4)`. Read from
basho/riak_core (src/chash.erl, src/riak_core_ring.erl, src/riak_core_apl.erl and the
claim modules `harness.recipes.algorithms.riak_claim` models):

- The ring is Q = `ring_creation_size` partitions (a power of 2, 8 to 1,024, 64 by
  default) of the 160-bit SHA-1 space, partition i starting at i * 2**160 / Q.
- A key's index is SHA-1 of `term_to_binary({Bucket, Key})` (`chash:key_of` of
  `riak_core_util:chash_std_keyfun`), bucket and key as Erlang binaries: the bytes
  131, 104, 2, then 109, a 4-byte big-endian length and the bytes, for each.
- A key belongs to the partition *after* the one its index falls in
  (`chash:successors` splits the ring at `index div increment + 1`), and its
  preference list is that partition's owner and the next N - 1 partitions' owners
  (`riak_core_apl`'s primaries; a node can appear twice when the ring breaks
  `target_n_val`).
- Owners: the servers join one at a time in the order listed, from a fresh ring of the
  first (`riak_claim.joined`); a server leaving is `riak_claim.left` (`without`), which
  draws its ties from `seed`.

Forms: the key hash is the top 64 bits of the SHA-1 index (enough for Q <= 2**64);
`lookup_many` reads a table of each partition's successor's owner, the vectorised
reference computes `(hash >> (64 - log2 Q)) + 1 mod Q` and the plain reference does
the same per key with Python integers. Servers must weigh 1 (Riak has no weights) and be
at most Q.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence
from typing import Any, ClassVar, Self

import numpy as np
import numpy.typing as npt

from harness.core.params import Param
from harness.core.servers import Server
from harness.recipes.algorithms.base import Algorithm, OneForm, unweighted_problem
from harness.recipes.algorithms.riak_claim import joined, left

#: seconds per partition and squared node of the joins' claims in plain Python (0.58 s
#: at 1,024 partitions and 100 nodes; 31 s at 1,024 and 1,024), with a margin
CLAIM_SECONDS = 6e-8
_TERM_BINARY = struct.Struct(">BI")


def term_to_binary_pair(bucket: bytes, key: bytes) -> bytes:
    """Erlang's external term format of `{Bucket, Key}`, both binaries."""
    return (b"\x83\x68\x02" + _TERM_BINARY.pack(109, len(bucket)) + bucket
            + _TERM_BINARY.pack(109, len(key)) + key)


def key_index(bucket: bytes, key: bytes) -> int:
    """The key's 160-bit index on the ring (`chash:key_of({Bucket, Key})`)."""
    return int.from_bytes(hashlib.sha1(term_to_binary_pair(bucket, key)).digest(), "big")


def _power_of_two(value: int) -> str | None:
    """Riak's ring_size validators: a power of 2 (from 8 to 1,024, the bounds)."""
    return None if value & (value - 1) == 0 else "a power of 2 from 8 to 1,024"


class RiakAlgorithm(OneForm):
    """riak_core's ring of Q partitions, claimed by the servers as they join."""

    name: ClassVar[str] = "riak"
    #: a build: its partitions claimed (66 us a partition, 1,024 on 64 servers); the
    #: claim's growth with the servers is priced by `estimated_seconds`; measured by
    #: benchmarks/build_rates.py (2026-12-05, best of 2, load average 3.9), with a margin
    build_seconds_per_entry: ClassVar[float | None] = 100e-6
    declared: ClassVar[tuple[Param, ...]] = (
        Param("ring_creation_size", "int", 64,
              "partitions of the ring (Riak's ring_size: a power of 2, 8 to 1,024)",
              minimum=8, maximum=1024, check=_power_of_two),
        Param("target_n_val", "int", 4, "how far apart claim keeps a node's partitions "
              "(Riak's target_n_val, default 4)", minimum=1, maximum=64),
        Param("bucket", "str", "default", "the bucket hashed with each key"),
        Param("seed", "int", 0, "seed of a leave's random choice among equal nodes",
              minimum=0, maximum=2**64 - 1),
    )

    def __init__(self, servers: Sequence[Server], params: dict[str, Any],
                 owners: Sequence[str] | None = None) -> None:
        super().__init__(servers, params)
        self.size = int(self._params["ring_creation_size"])
        self.target_n = int(self._params["target_n_val"])
        self._bucket = str(self._params["bucket"]).encode()
        names = [s.name for s in self._servers]
        #: the owner of each partition, by name, in index order
        self.owners: list[str] = (list(owners) if owners is not None
                                  else joined(self.size, names, self.target_n))
        index = {name: i for i, name in enumerate(names)}
        self._owner_index = [index[n] for n in self.owners]
        self._bits = self.size.bit_length() - 1
        self._next_owner = np.array(self._owner_index[1:] + self._owner_index[:1],
                                    dtype=np.uint16)

    @classmethod
    def check_servers(cls, servers: Sequence[Server], params: dict[str, Any]) -> str | None:
        size = int(params["ring_creation_size"])
        if len(servers) > size:
            return (f"at most the ring's {size:,} partitions, since a node claims whole "
                    f"partitions (got {len(servers):,} servers)")
        return unweighted_problem("Riak", servers)

    @classmethod
    def estimated_entries(cls, servers: Sequence[Server], params: dict[str, Any]) -> int:
        return int(params["ring_creation_size"])

    @classmethod
    def estimated_seconds(cls, servers: Sequence[Server], params: dict[str, Any], *,
                          reference_keys: int, fast_keys: int,
                          plain_keys: int) -> tuple[float, str]:
        """The joins' claims, and SHA-1 of each key in Python (1 us) besides the lookups
        (0.3 us a key in plain Python, 10 ns in numpy); nothing for a fleet it refuses
        (more servers than partitions), which is never built."""
        size = int(params["ring_creation_size"])
        if len(servers) > size:
            return 0.0, ""
        claim = CLAIM_SECONDS * size * len(servers) ** 2
        keys = (plain_keys * 0.3e-6 + (reference_keys + fast_keys) * 1e-8
                + (reference_keys + fast_keys) * 1e-6)
        return 2 * (claim + keys), (f"claim of {size:,} partitions by {len(servers):,} "
                                    "nodes joining one at a time")

    @classmethod
    def label_for(cls, params: dict[str, Any]) -> str:
        return f"riak Q={params['ring_creation_size']}"

    @classmethod
    def build(cls, servers: Sequence[Server], **params: Any) -> Self:
        return cls(servers, cls.checked_params(servers, params))

    @property
    def key_bits(self) -> int:
        return 64

    @property
    def entries(self) -> int:
        return self.size

    @property
    def entry_size(self) -> int:
        return 2

    @property
    def nbytes(self) -> int:
        return int(self._next_owner.nbytes)

    def hash_keys(self, keys: Sequence[bytes]) -> npt.NDArray[np.unsignedinteger]:
        """The top 64 bits of each key's SHA-1 index."""
        return np.fromiter((key_index(self._bucket, k) >> 96 for k in keys),
                           dtype=np.uint64, count=len(keys))

    def partitions(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.int64]:
        """Each key's first partition: the one after the partition its index falls in."""
        within = np.asarray(key_hashes, dtype=np.uint64) >> np.uint64(64 - self._bits)
        return ((within.astype(np.int64) + 1) % self.size).astype(np.int64)

    def lookup(self, key_hash: int) -> int:
        return int(self._next_owner[key_hash >> (64 - self._bits)])

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        within = np.asarray(key_hashes, dtype=np.uint64) >> np.uint64(64 - self._bits)
        owners: npt.NDArray[np.uint16] = self._next_owner[within]
        return owners

    def reference_owners(
        self, key_hashes: npt.NDArray[np.unsignedinteger]
    ) -> npt.NDArray[np.uint16]:
        return np.asarray(self._owner_index, dtype=np.uint16)[self.partitions(key_hashes)]

    def reference_lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> list[int]:
        shift, size, owners = 64 - self._bits, self.size, self._owner_index
        return [owners[((int(h) >> shift) + 1) % size] for h in key_hashes]

    def preference_lists(self, key_hashes: npt.NDArray[np.unsignedinteger],
                         copies: int) -> npt.NDArray[np.uint16]:
        """Each key's primaries: the owners of its partition and the next copies - 1."""
        first = self.partitions(key_hashes)
        steps = (first[:, None] + np.arange(copies)[None, :]) % self.size
        lists: npt.NDArray[np.uint16] = np.asarray(self._owner_index, dtype=np.uint16)[steps]
        return lists

    def slot_counts(self) -> npt.NDArray[np.int64]:
        return np.bincount(self._owner_index, minlength=len(self._servers)).astype(np.int64)

    def exact_shares(self) -> npt.NDArray[np.float64]:
        return self.slot_counts().astype(np.float64) / self.size

    def without(self, index: int) -> Algorithm | None:
        """The ring after server `index` leaves as Riak's claimant removes it
        (`riak_claim.left`), the others renumbered."""
        names = [s.name for s in self._servers]
        owners = left(self.owners, names[index], names, self.target_n,
                      int(self._params["seed"]))
        rest = [s for i, s in enumerate(self._servers) if i != index]
        return RiakAlgorithm(rest, self._params, owners)
