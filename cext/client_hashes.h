/* The key hashes of clients that route by a hash of the key and a fixed table (no ring):
 * Kafka's default partitioner, Redis Cluster's key slots, and twemproxy's key hashes.
 *
 * - murmur2_32: MurmurHash2 (Austin Appleby), 32 bits, words read little-endian, tail
 *   bytes unsigned. Kafka's Utils.murmur2 is it with seed 0x9747b28c (kafka-python 3.0's
 *   kafka/partitioner/default.py, the Java client's org.apache.kafka.common.utils.Utils);
 *   twemproxy 0.5.0's hash_murmur (src/hashkit/nc_murmur.c) is it with seed
 *   0xdeadbeef * length.
 * - redis_keyslot: Redis Cluster's keyHashSlot (redis 7.0 src/cluster.c): CRC-16/XMODEM
 *   of the key, or of its hash tag (the bytes between the first '{' and the first '}'
 *   after it, when there are any), & 0x3FFF.
 * - twemproxy_fnv1a_64: twemproxy 0.5.0's hash_fnv1a_64 (src/hashkit/nc_fnv.c), which is
 *   not FNV-1a 64: it runs in 32 bits from the 64-bit basis and prime truncated, each byte
 *   read as a C char (signed on x86: bytes >= 0x80 are sign-extended before the xor).
 * - cassandra_murmur3_token: Cassandra's Murmur3Partitioner.getToken (apache/cassandra,
 *   src/java/org/apache/cassandra/dht/Murmur3Partitioner.java): the first 64 bits of
 *   MurmurHash3 x64 128, seed 0, as org.apache.cassandra.utils.MurmurHash.hash3_x64_128
 *   computes it: the 16-byte blocks read little-endian with bytes unsigned, but the tail
 *   bytes read as Java's signed byte, so a tail byte >= 0x80 is sign-extended before its
 *   shift and xor (the result differs from the reference MurmurHash3 for such keys).
 *   Long.MIN_VALUE is normalised to Long.MAX_VALUE, and the empty key is Long.MIN_VALUE
 *   (the partitioner's minimum token). */
#ifndef RING_CLIENT_HASHES_H
#define RING_CLIENT_HASHES_H

#include <stddef.h>
#include <stdint.h>

#define KAFKA_MURMUR2_SEED 0x9747b28cu
#define REDIS_CLUSTER_SLOTS 16384u

/* cffi:begin */
uint32_t murmur2_32(const uint8_t *data, size_t length, uint32_t seed);
uint32_t redis_keyslot(const uint8_t *data, size_t length);
uint32_t twemproxy_fnv1a_64(const uint8_t *data, size_t length);

/* Kafka's partition of many keys stored end to end (key i is
 * data[offsets[i]:offsets[i + 1]]): (murmur2 & 0x7fffffff) % partitions. */
void kafka_partition_many(const uint8_t *data, const uint64_t *offsets, size_t count,
                          uint32_t partitions, uint16_t *out);
/* The murmur2 (Kafka's seed) of many keys stored end to end. */
void kafka_murmur2_many(const uint8_t *data, const uint64_t *offsets, size_t count,
                        uint32_t *out);
/* The Redis Cluster slot of many keys stored end to end. */
void redis_keyslot_many(const uint8_t *data, const uint64_t *offsets, size_t count,
                        uint32_t *out);
/* The owner of many keys stored end to end, through a table of 16384 slot owners. */
void redis_route_many(const uint8_t *data, const uint64_t *offsets, size_t count,
                      const uint16_t *slot_owners, uint16_t *out);
/* twemproxy's key hash of many keys stored end to end: kind 0 md5 (the first four digest
 * bytes, little-endian, computed elsewhere: not here), 1 fnv1a_64, 2 murmur. */
void twemproxy_hash_many(const uint8_t *data, const uint64_t *offsets, size_t count, int kind,
                         uint32_t *out);
/* Cassandra's Murmur3Partitioner token of one key (a signed 64-bit token). */
int64_t cassandra_murmur3_token(const uint8_t *data, size_t length);
/* The ring positions of many keys stored end to end: each token + 2**63 as an unsigned
 * integer, which keeps the tokens' signed order (the ring's lookup rule then matches
 * Cassandra's: a key belongs to the first token >= its own, wrapping). */
void cassandra_position_many(const uint8_t *data, const uint64_t *offsets, size_t count,
                             uint64_t *out);
/* cffi:end */

#endif
