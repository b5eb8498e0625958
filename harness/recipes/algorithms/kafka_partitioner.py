"""Kafka's default partitioner: hash mod N, the baseline the consistent-hashing articles warn
about, as the clients that route most records by key compute it.

`ALGORITHMS["kafka-murmur2"].build(servers)` takes no parameters and holds no table: server
i is partition i, and a key's partition is `toPositive(murmur2(key)) % N`, where murmur2 is
MurmurHash2 with seed 0x9747b28c and toPositive clears the sign bit (`& 0x7fffffff`, not
abs). That is Apache Kafka's Java producer (`Utils.murmur2`, `Utils.toPositive`, the
built-in partitioner for keyed records) and kafka-python 3.0's `DefaultPartitioner`
(`kafka/partitioner/default.py`), against whose own `murmur2` the tests check every key.
librdkafka's default (`consistent_random`, CRC-32) is not this; only its `murmur2_random`
is.

What it cannot do, refused before any work: weights (a partition is a partition: servers
must all weigh 1). Any partition can be removed for the movement metric: the remaining
servers are renumbered, as a topic rebuilt with one partition fewer would be, which is
why nearly every key moves.

Forms: `route` hashes and reduces in one C call (cext/client_hashes.c); `lookup_many` is
numpy's `&` and `%` on the key hashes; the plain-Python reference is the definition above.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Self

import numpy as np
import numpy.typing as npt

from harness.core.native import client_hashes as c_client_hashes
from harness.core.servers import Server
from harness.recipes.algorithms.base import OneForm, unweighted_problem

#: toPositive: the sign bit cleared
POSITIVE = 0x7FFFFFFF


class KafkaMurmur2Algorithm(OneForm):
    """Kafka's default partitioner over the servers, partition i being servers[i]."""

    name: ClassVar[str] = "kafka-murmur2"
    #: a build: nothing but its servers (10 to 60 ns a server on 1,000); measured by
    #: benchmarks/build_rates.py (2026-12-05, best of 2, load average 3.9), with a margin
    build_seconds_per_entry: ClassVar[float | None] = 200e-9

    @classmethod
    def check_servers(cls, servers: Sequence[Server], params: dict[str, Any]) -> str | None:
        return unweighted_problem("Kafka's partitioner", servers)

    @classmethod
    def estimated_entries(cls, servers: Sequence[Server], params: dict[str, Any]) -> int:
        return len(servers)

    @classmethod
    def estimated_seconds(cls, servers: Sequence[Server], params: dict[str, Any], *,
                          reference_keys: int, fast_keys: int,
                          plain_keys: int) -> tuple[float, str]:
        """A mask and a modulo per key hash: 0.15 us each in plain Python, 4 ns in numpy,
        measured on 100,000 hashes, with a margin of 2."""
        seconds = 2 * (plain_keys * 0.15e-6 + (reference_keys + fast_keys) * 4e-9)
        return seconds, f"{plain_keys:,} partitions computed in plain Python"

    @classmethod
    def label_for(cls, params: dict[str, Any]) -> str:
        return "kafka murmur2"

    @classmethod
    def build(cls, servers: Sequence[Server], **params: Any) -> Self:
        return cls(servers, cls.checked_params(servers, params))

    @property
    def key_bits(self) -> int:
        return 32

    @property
    def entries(self) -> int:
        return len(self._servers)

    @property
    def entry_size(self) -> int:
        return 0

    @property
    def nbytes(self) -> int:
        return 0

    def hash_keys(self, keys: Sequence[bytes]) -> npt.NDArray[np.unsignedinteger]:
        return c_client_hashes.kafka_murmur2_many(keys)

    def route(self, keys: Sequence[bytes]) -> npt.NDArray[np.uint16]:
        return c_client_hashes.kafka_partition_many(keys, len(self._servers))

    def lookup(self, key_hash: int) -> int:
        return (key_hash & POSITIVE) % len(self._servers)

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        hashes = np.asarray(key_hashes, dtype=np.uint64)
        return ((hashes & np.uint64(POSITIVE)) % np.uint64(len(self._servers))).astype(np.uint16)

    def reference_owners(
        self, key_hashes: npt.NDArray[np.unsignedinteger]
    ) -> npt.NDArray[np.uint16]:
        positive = np.asarray(key_hashes, dtype=np.int64) & POSITIVE
        owners: npt.NDArray[np.uint16] = np.remainder(positive, len(self._servers)).astype(
            np.uint16)
        return owners

    def reference_lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> list[int]:
        partitions = len(self._servers)
        return [(int(h) & POSITIVE) % partitions for h in key_hashes]

    def exact_shares(self) -> npt.NDArray[np.float64]:
        # 2**31 positive hashes shared by remainder: the first 2**31 % N partitions get one more.
        n = len(self._servers)
        counts = np.full(n, (POSITIVE + 1) // n, dtype=np.float64)
        counts[: (POSITIVE + 1) % n] += 1
        return counts / (POSITIVE + 1)
