"""The key hashes of clients that route by a hash and a fixed table, in plain Python: the
definitions the C batch forms (cext/client_hashes.c) are checked against.

- `murmur2_32`: MurmurHash2, 32 bits, words little-endian. Kafka's default partitioner
  hashes a record's key bytes with it, seed 0x9747b28c (Apache Kafka's
  `org.apache.kafka.common.utils.Utils.murmur2`; kafka-python 3.0,
  `kafka/partitioner/default.py`); twemproxy 0.5.0's `murmur` (src/hashkit/nc_murmur.c)
  seeds it with 0xdeadbeef times the key's length.
- `redis_keyslot`: Redis Cluster's `keyHashSlot` (redis 7.0, src/cluster.c): CRC-16/XMODEM
  (polynomial 0x1021, initial value 0) of the key, or of its hash tag when it has one, the
  bytes between its first `{` and the first `}` after that, if there is at least one;
  then the low 14 bits (16,384 slots).
- `twemproxy_fnv1a_64`: twemproxy 0.5.0's `fnv1a_64` (src/hashkit/nc_fnv.c). Despite the
  name it is a 32-bit hash: the 64-bit offset basis and prime are truncated to 32 bits
  (0x84222325 and 0x1b3), and each byte is read as a signed C `char`.
"""

from __future__ import annotations

__all__ = ["KAFKA_SEED", "REDIS_SLOTS", "kafka_partition", "murmur2_32", "redis_keyslot",
           "twemproxy_fnv1a_64", "twemproxy_murmur"]

MASK32 = 0xFFFFFFFF
MURMUR2_M = 0x5BD1E995
#: Kafka's murmur2 seed, and the number of Redis Cluster's hash slots
KAFKA_SEED = 0x9747B28C
REDIS_SLOTS = 16384


def murmur2_32(data: bytes, seed: int) -> int:
    """MurmurHash2 (Austin Appleby), 32 bits, of `data` with `seed`."""
    length = len(data)
    h = (seed ^ length) & MASK32
    blocks = length // 4 * 4
    for i in range(0, blocks, 4):
        k = int.from_bytes(data[i:i + 4], "little")
        k = (k * MURMUR2_M) & MASK32
        k ^= k >> 24
        k = (k * MURMUR2_M) & MASK32
        h = ((h * MURMUR2_M) & MASK32) ^ k
    tail = data[blocks:]
    if tail:
        for shift, byte in reversed(list(enumerate(tail))):
            h ^= byte << (8 * shift)
        h = (h * MURMUR2_M) & MASK32
    h ^= h >> 13
    h = (h * MURMUR2_M) & MASK32
    return h ^ (h >> 15)


def kafka_partition(key: bytes, partitions: int) -> int:
    """Kafka's default partition of a keyed record: `toPositive(murmur2(key)) % partitions`,
    where toPositive clears the sign bit (it is not abs)."""
    return (murmur2_32(key, KAFKA_SEED) & 0x7FFFFFFF) % partitions


def crc16_xmodem(data: bytes) -> int:
    """CRC-16/XMODEM, bit by bit (its check value: b"123456789" -> 0x31C3)."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def hash_tag(key: bytes) -> bytes:
    """What Redis Cluster hashes of a key: its hash tag if it has a non-empty one, else all."""
    start = key.find(b"{")
    if start >= 0:
        end = key.find(b"}", start + 1)
        if end > start + 1:
            return key[start + 1:end]
    return key


def redis_keyslot(key: bytes) -> int:
    """Redis Cluster's slot of a key, 0 to 16,383."""
    return crc16_xmodem(hash_tag(key)) & (REDIS_SLOTS - 1)


def twemproxy_fnv1a_64(data: bytes) -> int:
    """twemproxy 0.5.0's `fnv1a_64` key hash (32 bits, signed chars)."""
    h = 0xCBF29CE484222325 & MASK32
    for byte in data:
        h = ((h ^ ((byte - 256) & MASK32 if byte >= 0x80 else byte)) * 0x1B3) & MASK32
    return h


def twemproxy_murmur(data: bytes) -> int:
    """twemproxy 0.5.0's `murmur` key hash: MurmurHash2 seeded with 0xdeadbeef * length."""
    return murmur2_32(data, (0xDEADBEEF * len(data)) & MASK32)
