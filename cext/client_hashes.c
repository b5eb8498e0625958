/* The key hashes of Kafka's default partitioner, Redis Cluster and twemproxy: see
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
