"""Hash mod N with any key hash: what python-memcached, gomemcache and many in-house
clients route with.

`ALGORITHMS["modulo"].build(servers, key_hash=..., shift=..., mask_bits=..., weights=...)`:
a key's bytes (its text encoded as `key_encoding` says, cut to `key_max_bytes`) are hashed
with `key_hash` (any hash of `harness.core.trait_hashes`), shifted right by `shift` and
masked to `mask_bits` bits (0: no mask); the server is the bucket at that value mod the
number of buckets. With `weights = "none"` the buckets are the servers, which must all
weigh 1; with `"repeat"` each server fills as many buckets as its integer weight, in
server order (python-memcached 1.59's `buckets`).

- python-memcached 1.59: `key_hash = "crc32"`, `shift = 16`, `mask_bits = 15`,
  `weights = "repeat"` (its `cmemcache_hash`, `(crc32(key) >> 16) & 0x7fff`).
- gomemcache's `ServerList` (bradfitz/gomemcache): `key_hash = "crc32"`, the rest at
  their defaults (`crc32.ChecksumIEEE(key) % len(addrs)`).

Forms: one, numpy over the key hashes; the plain-Python reference is the definition above.
Removing a server renumbers the others, as a client given the shorter list does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Self

import numpy as np
import numpy.typing as npt

from harness.core.params import Param
from harness.core.servers import Server
from harness.core.trait_hashes import TRAIT_HASH_NAMES, TRAIT_HASHES
from harness.recipes.algorithms.base import OneForm, unweighted_problem
from harness.recipes.constructions.client_traits import KEY_ENCODINGS, ClientTraits

WEIGHTS = ("none", "repeat")
#: most buckets "repeat" fills (a weight is a count of buckets)
MAX_BUCKETS = 1 << 20


class ModuloAlgorithm(OneForm):
    """A key's (shifted, masked) hash mod the number of buckets."""

    name: ClassVar[str] = "modulo"
    #: a build: nothing but its servers (35 to 40 ns a server on 1,000); measured by
    #: benchmarks/build_rates.py (2026-12-05, best of 2, load average 3.9), with a margin
    build_seconds_per_entry: ClassVar[float | None] = 200e-9
    #: a client's recipe, routed in plain Python: [comparison] measures it only when named
    compared_by_default: ClassVar[bool] = False
    declared: ClassVar[tuple[Param, ...]] = (
        Param("key_hash", "choice", "crc32", "hash of keys", choices=TRAIT_HASH_NAMES),
        Param("shift", "int", 0, "bits the hash is shifted right", minimum=0, maximum=63),
        Param("mask_bits", "int", 0, "bits of the shifted hash kept (0: all)",
              minimum=0, maximum=64),
        Param("weights", "choice", "none", "'none': one bucket a server, all of weight 1; "
              "'repeat': a server fills as many buckets as its integer weight",
              choices=WEIGHTS),
        Param("key_encoding", "choice", "utf-8", "bytes of a key's text", choices=KEY_ENCODINGS),
        Param("key_max_bytes", "int", 0, "a key cut to its first N bytes (0: whole)",
              minimum=0, maximum=2**20),
    )

    @classmethod
    def check_servers(cls, servers: Sequence[Server], params: dict[str, Any]) -> str | None:
        if params.get("weights", "none") == "none":
            return unweighted_problem("modulo with weights = 'none'", servers)
        for server in servers:
            if server.weight != int(server.weight) or server.weight < 1:
                return (f"positive integer weights for weights = 'repeat' (server "
                        f"{server.name!r} has {server.weight})")
        if sum(int(s.weight) for s in servers) > MAX_BUCKETS:
            return f"weights summing to at most {MAX_BUCKETS:,} buckets"
        return None

    @classmethod
    def estimated_entries(cls, servers: Sequence[Server], params: dict[str, Any]) -> int:
        if params.get("weights", "none") == "repeat":
            return sum(int(s.weight) for s in servers)
        return len(servers)

    @classmethod
    def estimated_seconds(cls, servers: Sequence[Server], params: dict[str, Any], *,
                          reference_keys: int, fast_keys: int,
                          plain_keys: int) -> tuple[float, str]:
        """A key hashed in Python (up to 10 us for the plain-Python hashes, murmur3 at 16
        bytes measured at 8.5 us), then a shift, mask and modulo: 12 us a key, a margin of
        about 1.4 on the slowest."""
        seconds = 12e-6 * (plain_keys + reference_keys + fast_keys)
        return seconds, f"{plain_keys + reference_keys + fast_keys:,} keys hashed by modulo"

    @classmethod
    def label_for(cls, params: dict[str, Any]) -> str:
        return f"modulo {params.get('key_hash', 'crc32')}"

    @classmethod
    def build(cls, servers: Sequence[Server], **params: Any) -> Self:
        return cls(servers, cls.checked_params(servers, params))

    def __init__(self, servers: Sequence[Server], params: dict[str, Any]) -> None:
        super().__init__(servers, params)
        self._traits = ClientTraits(key_encoding=params["key_encoding"],
                                    key_max_bytes=params["key_max_bytes"])
        repeat = params["weights"] == "repeat"
        self._buckets = np.repeat(np.arange(len(servers), dtype=np.uint16),
                                  [int(s.weight) if repeat else 1 for s in servers])

    @property
    def key_bits(self) -> int:
        return TRAIT_HASHES[self._params["key_hash"]].bits

    @property
    def entries(self) -> int:
        return len(self._buckets)

    @property
    def entry_size(self) -> int:
        return 2

    @property
    def nbytes(self) -> int:
        return int(self._buckets.nbytes)

    def hash_keys(self, keys: Sequence[bytes]) -> npt.NDArray[np.unsignedinteger]:
        if self._params["key_encoding"] != "utf-8" or self._params["key_max_bytes"]:
            keys = [self._traits.key_bytes(key) for key in keys]
        return TRAIT_HASHES[self._params["key_hash"]].many(keys)

    def _reduced(self, key_hash: int) -> int:
        value = key_hash >> int(self._params["shift"])
        mask_bits = int(self._params["mask_bits"])
        if mask_bits:
            value &= (1 << mask_bits) - 1
        return value % len(self._buckets)

    def lookup(self, key_hash: int) -> int:
        return int(self._buckets[self._reduced(int(key_hash))])

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        values = np.asarray(key_hashes, dtype=np.uint64) >> np.uint64(self._params["shift"])
        if self._params["mask_bits"] and self._params["mask_bits"] < 64:
            values &= np.uint64((1 << self._params["mask_bits"]) - 1)
        owners: npt.NDArray[np.uint16] = self._buckets[values % np.uint64(len(self._buckets))]
        return owners

    def reference_owners(
        self, key_hashes: npt.NDArray[np.unsignedinteger]
    ) -> npt.NDArray[np.uint16]:
        return np.array(self.reference_lookup_many(key_hashes), dtype=np.uint16)

    def reference_lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> list[int]:
        return [self.lookup(int(h)) for h in key_hashes]

    def exact_shares(self) -> npt.NDArray[np.float64] | None:
        return None
