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
- `cassandra_token`: Cassandra's `Murmur3Partitioner.getToken` (apache/cassandra,
  src/java/org/apache/cassandra/dht/Murmur3Partitioner.java): the first 64 bits of
  MurmurHash3 x64 128 with seed 0 as `org.apache.cassandra.utils.MurmurHash.hash3_x64_128`
  computes them, as a signed 64-bit token. Its blocks read bytes unsigned, but its tail
  reads each byte as a Java `byte` cast to `long`, sign-extended: a tail byte >= 0x80
  sets every bit above its own, so keys with such bytes get other tokens than the
  reference MurmurHash3 gives. `Long.MIN_VALUE` is normalised to `Long.MAX_VALUE` (no key
  may have the minimum token), and the empty key has the minimum token.
"""

from __future__ import annotations

from typing import AnyStr

__all__ = ["KAFKA_SEED", "REDIS_SLOTS", "cassandra_token", "hash_tag", "kafka_partition",
           "murmur2_32", "redis_keyslot", "twemproxy_fnv1a_64", "twemproxy_murmur"]

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


def hash_tag(key: AnyStr) -> AnyStr:
    """What Redis Cluster hashes of a key (`keyHashSlot`, src/cluster.c): the text between
    the first `{` and the first `}` after it when that is not empty, else all of it; for a
    key's bytes or its name alike (the braces are ASCII, so both split a UTF-8 key at the
    same place)."""
    opening, closing = ("{", "}") if isinstance(key, str) else (b"{", b"}")
    start = key.find(opening)
    if start >= 0:
        end = key.find(closing, start + 1)
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


MASK64 = 2**64 - 1
_C1, _C2 = 0x87C37B91114253D5, 0x4CF5AD432745937F
#: Cassandra's token range: a signed 64-bit integer
TOKEN_MIN, TOKEN_MAX = -(2**63), 2**63 - 1


def _rotl64(v: int, n: int) -> int:
    return ((v << n) | (v >> (64 - n))) & MASK64


def _fmix64(k: int) -> int:
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & MASK64
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & MASK64
    return k ^ (k >> 33)


def _tail_word(tail: bytes) -> int:
    """Tail bytes as Cassandra xors them in: each a signed byte widened to 64 bits."""
    word = 0
    for i, byte in enumerate(tail):
        word ^= ((byte - 256 if byte >= 0x80 else byte) << (8 * i)) & MASK64
    return word


def cassandra_token(key: bytes) -> int:
    """Cassandra's Murmur3Partitioner token of `key`, a signed 64-bit integer."""
    if not key:
        return TOKEN_MIN
    h1 = h2 = 0
    blocks = len(key) // 16
    for i in range(blocks):
        k1 = int.from_bytes(key[16 * i:16 * i + 8], "little")
        k2 = int.from_bytes(key[16 * i + 8:16 * i + 16], "little")
        h1 ^= (_rotl64((k1 * _C1) & MASK64, 31) * _C2) & MASK64
        h1 = (_rotl64(h1, 27) + h2) & MASK64
        h1 = (h1 * 5 + 0x52DCE729) & MASK64
        h2 ^= (_rotl64((k2 * _C2) & MASK64, 33) * _C1) & MASK64
        h2 = (_rotl64(h2, 31) + h1) & MASK64
        h2 = (h2 * 5 + 0x38495AB5) & MASK64
    tail = key[16 * blocks:]
    if len(tail) > 8:
        h2 ^= (_rotl64((_tail_word(tail[8:]) * _C2) & MASK64, 33) * _C1) & MASK64
    if tail:
        h1 ^= (_rotl64((_tail_word(tail[:8]) * _C1) & MASK64, 31) * _C2) & MASK64
    h1 ^= len(key)
    h2 ^= len(key)
    h1 = (h1 + h2) & MASK64
    h2 = (h2 + h1) & MASK64
    h1 = (_fmix64(h1) + _fmix64(h2)) & MASK64
    token = h1 - 2**64 if h1 >= 2**63 else h1
    return TOKEN_MAX if token == TOKEN_MIN else token


def cassandra_position(token: int) -> int:
    """A token's place on an unsigned 64-bit ring: token + 2**63, which keeps the order."""
    return token + 2**63
