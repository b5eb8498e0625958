/* The key hashes of Kafka's default partitioner, Redis Cluster, twemproxy and Cassandra: see
 * client_hashes.h for where each is defined. Checked against plain-Python references and,
 * live, against kafka-python, redis-server and nutcracker (tests/live/test_clients_live.py). */
#include "client_hashes.h"

#define MURMUR2_M 0x5bd1e995u
#define MURMUR2_R 24

uint32_t murmur2_32(const uint8_t *data, size_t length, uint32_t seed)
{
    uint32_t h = seed ^ (uint32_t)length;
    size_t blocks = length / 4 * 4;
    for (size_t i = 0; i < blocks; i += 4) {
        uint32_t k = (uint32_t)data[i] | (uint32_t)data[i + 1] << 8
                     | (uint32_t)data[i + 2] << 16 | (uint32_t)data[i + 3] << 24;
        k *= MURMUR2_M;
        k ^= k >> MURMUR2_R;
        k *= MURMUR2_M;
        h *= MURMUR2_M;
        h ^= k;
    }
    switch (length - blocks) {
    case 3:
        h ^= (uint32_t)data[blocks + 2] << 16;
        /* fall through */
    case 2:
        h ^= (uint32_t)data[blocks + 1] << 8;
        /* fall through */
    case 1:
        h ^= data[blocks];
        h *= MURMUR2_M;
        break;
    default:
        break;
    }
    h ^= h >> 13;
    h *= MURMUR2_M;
    h ^= h >> 15;
    return h;
}

/* CRC-16/XMODEM (poly 0x1021, init 0, no reflection), bit by bit: keys are short and a
 * table would be 512 bytes of cache for no gain at these lengths. */
static uint32_t crc16_xmodem(const uint8_t *data, size_t length)
{
    uint32_t crc = 0;
    for (size_t i = 0; i < length; i++) {
        crc ^= (uint32_t)data[i] << 8;
        for (int bit = 0; bit < 8; bit++)
            crc = (crc & 0x8000u) ? ((crc << 1) ^ 0x1021u) & 0xFFFFu : (crc << 1) & 0xFFFFu;
    }
    return crc;
}

uint32_t redis_keyslot(const uint8_t *data, size_t length)
{
    size_t open = 0;
    while (open < length && data[open] != '{') open++;
    if (open < length) {
        size_t close = open + 1;
        while (close < length && data[close] != '}') close++;
        if (close < length && close > open + 1)
            return crc16_xmodem(data + open + 1, close - open - 1) & (REDIS_CLUSTER_SLOTS - 1);
    }
    return crc16_xmodem(data, length) & (REDIS_CLUSTER_SLOTS - 1);
}

uint32_t twemproxy_fnv1a_64(const uint8_t *data, size_t length)
{
    uint32_t hash = (uint32_t)0xcbf29ce484222325ULL;
    for (size_t i = 0; i < length; i++) {
        hash ^= (uint32_t)(int32_t)(int8_t)data[i];
        hash *= (uint32_t)0x100000001b3ULL;
    }
    return hash;
}

void kafka_partition_many(const uint8_t *data, const uint64_t *offsets, size_t count,
                          uint32_t partitions, uint16_t *out)
{
    for (size_t i = 0; i < count; i++) {
        uint32_t h = murmur2_32(data + offsets[i], (size_t)(offsets[i + 1] - offsets[i]),
                                KAFKA_MURMUR2_SEED);
        out[i] = (uint16_t)((h & 0x7fffffffu) % partitions);
    }
}

void kafka_murmur2_many(const uint8_t *data, const uint64_t *offsets, size_t count,
                        uint32_t *out)
{
    for (size_t i = 0; i < count; i++)
        out[i] = murmur2_32(data + offsets[i], (size_t)(offsets[i + 1] - offsets[i]),
                            KAFKA_MURMUR2_SEED);
}

void redis_keyslot_many(const uint8_t *data, const uint64_t *offsets, size_t count,
                        uint32_t *out)
{
    for (size_t i = 0; i < count; i++)
        out[i] = redis_keyslot(data + offsets[i], (size_t)(offsets[i + 1] - offsets[i]));
}

void redis_route_many(const uint8_t *data, const uint64_t *offsets, size_t count,
                      const uint16_t *slot_owners, uint16_t *out)
{
    for (size_t i = 0; i < count; i++)
        out[i] = slot_owners[redis_keyslot(data + offsets[i],
                                           (size_t)(offsets[i + 1] - offsets[i]))];
}

void twemproxy_hash_many(const uint8_t *data, const uint64_t *offsets, size_t count, int kind,
                         uint32_t *out)
{
    for (size_t i = 0; i < count; i++) {
        const uint8_t *key = data + offsets[i];
        size_t length = (size_t)(offsets[i + 1] - offsets[i]);
        out[i] = kind == 1 ? twemproxy_fnv1a_64(key, length)
                           : murmur2_32(key, length, 0xdeadbeefu * (uint32_t)length);
    }
}

static uint64_t rotl64(uint64_t v, int n)
{
    return (v << n) | (v >> (64 - n));
}

static uint64_t fmix64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

static uint64_t block64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* A tail byte as Cassandra reads it: (long) of a Java byte, sign-extended. */
static uint64_t signed_byte(uint8_t b)
{
    return (uint64_t)(int64_t)(int8_t)b;
}

int64_t cassandra_murmur3_token(const uint8_t *data, size_t length)
{
    const uint64_t c1 = 0x87c37b91114253d5ULL, c2 = 0x4cf5ad432745937fULL;
    uint64_t h1 = 0, h2 = 0, k1 = 0, k2 = 0;
    size_t blocks = length / 16;
    if (length == 0)
        return INT64_MIN;
    for (size_t i = 0; i < blocks; i++) {
        k1 = block64(data + 16 * i);
        k2 = block64(data + 16 * i + 8);
        k1 *= c1; k1 = rotl64(k1, 31); k1 *= c2; h1 ^= k1;
        h1 = rotl64(h1, 27); h1 += h2; h1 = h1 * 5 + 0x52dce729;
        k2 *= c2; k2 = rotl64(k2, 33); k2 *= c1; h2 ^= k2;
        h2 = rotl64(h2, 31); h2 += h1; h2 = h2 * 5 + 0x38495ab5;
    }
    const uint8_t *tail = data + 16 * blocks;
    size_t rest = length & 15;
    k1 = 0;
    k2 = 0;
    for (size_t i = rest; i > 8; i--)
        k2 ^= signed_byte(tail[i - 1]) << (8 * (i - 9));
    if (rest > 8) {
        k2 *= c2; k2 = rotl64(k2, 33); k2 *= c1; h2 ^= k2;
    }
    for (size_t i = rest < 8 ? rest : 8; i > 0; i--)
        k1 ^= signed_byte(tail[i - 1]) << (8 * (i - 1));
    if (rest > 0) {
        k1 *= c1; k1 = rotl64(k1, 31); k1 *= c2; h1 ^= k1;
    }
    h1 ^= (uint64_t)length;
    h2 ^= (uint64_t)length;
    h1 += h2;
    h2 += h1;
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1 += h2;
    if (h1 == 0x8000000000000000ULL)  /* normalize: Long.MIN_VALUE is kept for no key */
        return INT64_MAX;
    return (int64_t)h1;
}

void cassandra_position_many(const uint8_t *data, const uint64_t *offsets, size_t count,
                             uint64_t *out)
{
    for (size_t i = 0; i < count; i++) {
        int64_t token = cassandra_murmur3_token(data + offsets[i],
                                                (size_t)(offsets[i + 1] - offsets[i]));
        out[i] = (uint64_t)token ^ 0x8000000000000000ULL;
    }
}
