"""Bindings of cext/client_hashes.c: the key hashes of clients that route by a hash of the
key and a fixed table, Kafka's default partitioner, Redis Cluster's key slots and
twemproxy's non-MD5 key hashes, and Cassandra's Murmur3Partitioner tokens, a batch of keys
per C call (client_hashes.h says where each is defined)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from harness.core.native._c import ffi, lib, u16_out

__all__ = [
    "KAFKA_MURMUR2_SEED",
    "REDIS_CLUSTER_SLOTS",
    "TWEMPROXY_HASH_KINDS",
    "cassandra_murmur3_token",
    "cassandra_position_many",
    "kafka_murmur2_many",
    "kafka_partition_many",
    "murmur2_32",
    "redis_keyslot",
    "redis_keyslot_many",
    "redis_route_many",
    "twemproxy_fnv1a_64",
    "twemproxy_hash_many",
]

#: client_hashes.h
KAFKA_MURMUR2_SEED = 0x9747B28C
REDIS_CLUSTER_SLOTS = 16384
#: twemproxy_hash_many's kinds (MD5 is hashed by harness.core.hashing, not here)
TWEMPROXY_HASH_KINDS = {"fnv1a_64": 1, "murmur": 2}


def _joined(keys: Sequence[bytes]) -> tuple[bytes, npt.NDArray[np.uint64]]:
    offsets = np.zeros(len(keys) + 1, dtype=np.uint64)
    np.cumsum(np.fromiter((len(k) for k in keys), dtype=np.uint64, count=len(keys)),
              out=offsets[1:])
    return b"".join(keys), offsets


def _u32_out(count: int) -> tuple[npt.NDArray[np.uint32], object]:
    out = np.empty(count, dtype=np.uint32)
    return out, ffi.from_buffer("uint32_t[]", out, require_writable=True)


def murmur2_32(data: bytes, seed: int) -> int:
    """MurmurHash2, 32 bits, of `data` with `seed`."""
    return int(lib.murmur2_32(data, len(data), seed))


def redis_keyslot(data: bytes) -> int:
    """Redis Cluster's slot of one key (its hash tag's, if it has one)."""
    return int(lib.redis_keyslot(data, len(data)))


def twemproxy_fnv1a_64(data: bytes) -> int:
    """twemproxy 0.5.0's hash_fnv1a_64 of one key (a 32-bit hash: client_hashes.h)."""
    return int(lib.twemproxy_fnv1a_64(data, len(data)))


def kafka_murmur2_many(keys: Sequence[bytes]) -> npt.NDArray[np.uint32]:
    """Kafka's murmur2 of many keys, in one C call."""
    joined, offsets = _joined(keys)
    out, buffer = _u32_out(len(keys))
    lib.kafka_murmur2_many(joined, ffi.from_buffer("uint64_t[]", offsets), len(keys), buffer)
    return out


def kafka_partition_many(keys: Sequence[bytes], partitions: int) -> npt.NDArray[np.uint16]:
    """Kafka's default partition of many keys among `partitions`, hashed and reduced in C."""
    joined, offsets = _joined(keys)
    out = np.empty(len(keys), dtype=np.uint16)
    lib.kafka_partition_many(joined, ffi.from_buffer("uint64_t[]", offsets), len(keys),
                             partitions, u16_out(out))
    return out


def redis_keyslot_many(keys: Sequence[bytes]) -> npt.NDArray[np.uint32]:
    """The Redis Cluster slot of many keys, in one C call."""
    joined, offsets = _joined(keys)
    out, buffer = _u32_out(len(keys))
    lib.redis_keyslot_many(joined, ffi.from_buffer("uint64_t[]", offsets), len(keys), buffer)
    return out


def redis_route_many(keys: Sequence[bytes],
                     slot_owners: npt.NDArray[np.uint16]) -> npt.NDArray[np.uint16]:
    """The owners of many keys through a table of 16384 slot owners, in one C call."""
    assert slot_owners.dtype == np.uint16 and slot_owners.shape == (REDIS_CLUSTER_SLOTS,)
    table = np.ascontiguousarray(slot_owners)
    joined, offsets = _joined(keys)
    out = np.empty(len(keys), dtype=np.uint16)
    lib.redis_route_many(joined, ffi.from_buffer("uint64_t[]", offsets), len(keys),
                         ffi.from_buffer("uint16_t[]", table), u16_out(out))
    return out


def twemproxy_hash_many(keys: Sequence[bytes], hash_name: str) -> npt.NDArray[np.uint32]:
    """twemproxy's `fnv1a_64` or `murmur` key hash of many keys, in one C call."""
    joined, offsets = _joined(keys)
    out, buffer = _u32_out(len(keys))
    lib.twemproxy_hash_many(joined, ffi.from_buffer("uint64_t[]", offsets), len(keys),
                            TWEMPROXY_HASH_KINDS[hash_name], buffer)
    return out


def cassandra_murmur3_token(data: bytes) -> int:
    """Cassandra's Murmur3Partitioner token of one key (signed 64 bits)."""
    return int(lib.cassandra_murmur3_token(data, len(data)))


def cassandra_position_many(keys: Sequence[bytes]) -> npt.NDArray[np.uint64]:
    """The ring positions (token + 2**63) of many keys' Cassandra tokens, in one C call."""
    joined, offsets = _joined(keys)
    out = np.empty(len(keys), dtype=np.uint64)
    lib.cassandra_position_many(joined, ffi.from_buffer("uint64_t[]", offsets), len(keys),
                                ffi.from_buffer("uint64_t[]", out, require_writable=True))
    return out
