/* The client-trait hashes, batch form (trait_hashes.h says what each is). */
#include "trait_hashes.h"

static inline uint32_t rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }
static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline uint32_t read32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

static inline uint64_t read64(const uint8_t *p)
{
    return (uint64_t)read32(p) | ((uint64_t)read32(p + 4) << 32);
}

static uint32_t fnv32(const uint8_t *p, size_t n, int xor_first)
{
    uint32_t h = 0x811C9DC5u;
    for (size_t i = 0; i < n; i++)
        h = xor_first ? (h ^ p[i]) * 0x01000193u : (h * 0x01000193u) ^ p[i];
    return h;
}

static uint64_t fnv64(const uint8_t *p, size_t n, int xor_first)
{
    uint64_t h = 0xCBF29CE484222325ull;
    for (size_t i = 0; i < n; i++)
        h = xor_first ? (h ^ p[i]) * 0x100000001B3ull : (h * 0x100000001B3ull) ^ p[i];
    return h;
}

static uint32_t one_at_a_time(const uint8_t *p, size_t n)
{
    uint32_t h = 0;
    for (size_t i = 0; i < n; i++) {
        h += p[i];
        h += h << 10;
        h ^= h >> 6;
    }
    h += h << 3;
    h ^= h >> 11;
    h += h << 15;
    return h;
}

static uint32_t murmur3_32(const uint8_t *p, size_t n, uint32_t seed)
{
    const uint32_t c1 = 0xCC9E2D51u, c2 = 0x1B873593u;
    uint32_t h = seed;
    size_t whole = n / 4 * 4;
    for (size_t i = 0; i < whole; i += 4) {
        uint32_t k = read32(p + i) * c1;
        h ^= rotl32(k, 15) * c2;
        h = rotl32(h, 13) * 5 + 0xE6546B64u;
    }
    uint32_t k = 0;
    switch (n & 3) {
    case 3: k ^= (uint32_t)p[whole + 2] << 16; /* fall through */
    case 2: k ^= (uint32_t)p[whole + 1] << 8; /* fall through */
    case 1:
        k ^= p[whole];
        h ^= rotl32(k * c1, 15) * c2;
    }
    h ^= (uint32_t)n;
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    return h ^ (h >> 16);
}

#define P32_1 0x9E3779B1u
#define P32_2 0x85EBCA77u
#define P32_3 0xC2B2AE3Du
#define P32_4 0x27D4EB2Fu
#define P32_5 0x165667B1u

static inline uint32_t xxh32_round(uint32_t acc, uint32_t lane)
{
    return rotl32(acc + lane * P32_2, 13) * P32_1;
}

static uint32_t xxh32(const uint8_t *p, size_t n, uint32_t seed)
{
    const uint8_t *end = p + n;
    uint32_t h;
    if (n >= 16) {
        uint32_t v1 = seed + P32_1 + P32_2, v2 = seed + P32_2, v3 = seed, v4 = seed - P32_1;
        const uint8_t *limit = end - 16;
        do {
            v1 = xxh32_round(v1, read32(p));
            v2 = xxh32_round(v2, read32(p + 4));
            v3 = xxh32_round(v3, read32(p + 8));
            v4 = xxh32_round(v4, read32(p + 12));
            p += 16;
        } while (p <= limit);
        h = rotl32(v1, 1) + rotl32(v2, 7) + rotl32(v3, 12) + rotl32(v4, 18);
    } else {
        h = seed + P32_5;
    }
    h += (uint32_t)n;
    while (end - p >= 4) {
        h = rotl32(h + read32(p) * P32_3, 17) * P32_4;
        p += 4;
    }
    while (p < end) {
        h = rotl32(h + (*p) * P32_5, 11) * P32_1;
        p++;
    }
    h ^= h >> 15;
    h *= P32_2;
    h ^= h >> 13;
    h *= P32_3;
    return h ^ (h >> 16);
}

#define P64_1 0x9E3779B185EBCA87ull
#define P64_2 0xC2B2AE3D27D4EB4Full
#define P64_3 0x165667B19E3779F9ull
#define P64_4 0x85EBCA77C2B2AE63ull
#define P64_5 0x27D4EB2F165667C5ull

static inline uint64_t xxh64_round(uint64_t acc, uint64_t lane)
{
    return rotl64(acc + lane * P64_2, 31) * P64_1;
}

static inline uint64_t xxh64_merge(uint64_t acc, uint64_t v)
{
    return (acc ^ xxh64_round(0, v)) * P64_1 + P64_4;
}

static uint64_t xxh64(const uint8_t *p, size_t n, uint64_t seed)
{
    const uint8_t *end = p + n;
    uint64_t h;
    if (n >= 32) {
        uint64_t v1 = seed + P64_1 + P64_2, v2 = seed + P64_2, v3 = seed, v4 = seed - P64_1;
        const uint8_t *limit = end - 32;
        do {
            v1 = xxh64_round(v1, read64(p));
            v2 = xxh64_round(v2, read64(p + 8));
            v3 = xxh64_round(v3, read64(p + 16));
            v4 = xxh64_round(v4, read64(p + 24));
            p += 32;
        } while (p <= limit);
        h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);
        h = xxh64_merge(h, v1);
        h = xxh64_merge(h, v2);
        h = xxh64_merge(h, v3);
        h = xxh64_merge(h, v4);
    } else {
        h = seed + P64_5;
    }
    h += (uint64_t)n;
    while (end - p >= 8) {
        h ^= xxh64_round(0, read64(p));
        h = rotl64(h, 27) * P64_1 + P64_4;
        p += 8;
    }
    if (end - p >= 4) {
        h ^= (uint64_t)read32(p) * P64_1;
        h = rotl64(h, 23) * P64_2 + P64_3;
        p += 4;
    }
    while (p < end) {
        h ^= (*p) * P64_5;
        h = rotl64(h, 11) * P64_1;
        p++;
    }
    h ^= h >> 33;
    h *= P64_2;
    h ^= h >> 29;
    h *= P64_3;
    return h ^ (h >> 32);
}

int trait_hash_many(const uint8_t *data, const uint64_t *offsets, size_t count, int kind,
                    uint64_t seed, uint64_t *out)
{
    if (kind < TRAIT_FNV1_32 || kind > TRAIT_XXH64)
        return -1;
    for (size_t i = 0; i < count; i++) {
        const uint8_t *p = data + offsets[i];
        size_t n = (size_t)(offsets[i + 1] - offsets[i]);
        switch (kind) {
        case TRAIT_FNV1_32: out[i] = fnv32(p, n, 0); break;
        case TRAIT_FNV1A_32: out[i] = fnv32(p, n, 1); break;
        case TRAIT_FNV1_64: out[i] = fnv64(p, n, 0); break;
        case TRAIT_FNV1A_64: out[i] = fnv64(p, n, 1); break;
        case TRAIT_OAAT_32: out[i] = one_at_a_time(p, n); break;
        case TRAIT_MURMUR3_32: out[i] = murmur3_32(p, n, (uint32_t)seed); break;
        case TRAIT_XXH32: out[i] = xxh32(p, n, (uint32_t)seed); break;
        default: out[i] = xxh64(p, n, seed); break;
        }
    }
    return 0;
}
