/* The hash functions (see hashes.h for what each matches; the pieces that algorithms.c
 * inlines into its lookups are defined there). */
#include "hashes.h"

/* ---- FNV-1a 32 + MurmurHash3's fmix32 ---- */

void hash_fnv1a_fmix32_many(const uint8_t *buf, const uint64_t *offsets, size_t m, uint32_t *out)
{
    for (size_t i = 0; i < m; i++) {
        uint32_t h = 2166136261u; /* FNV-1a 32-bit offset basis */
        for (uint64_t p = offsets[i]; p < offsets[i + 1]; p++) {
            h ^= buf[p];
            h *= 16777619u; /* FNV-1a 32-bit prime */
        }
        /* MurmurHash3 fmix32: spreads names that differ in one character */
        h ^= h >> 16;
        h *= 0x85ebca6bu;
        h ^= h >> 13;
        h *= 0xc2b2ae35u;
        h ^= h >> 16;
        out[i] = h;
    }
}

/* ---- xxHash64, as the reference XXH64 computes it (little-endian reads) ---- */

static inline uint64_t read_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static inline uint32_t read_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline uint64_t xxh64_merge(uint64_t acc, uint64_t lane)
{
    acc ^= xxh64_round(0, lane);
    return acc * XXH_PRIME64_1 + XXH_PRIME64_4;
}

uint64_t xxh64(const char *text, size_t length, uint64_t seed)
{
    const uint8_t *p = (const uint8_t *)text, *end = p + length;
    uint64_t h;
    if (length >= 32) {
        uint64_t v1 = seed + XXH_PRIME64_1 + XXH_PRIME64_2, v2 = seed + XXH_PRIME64_2;
        uint64_t v3 = seed, v4 = seed - XXH_PRIME64_1;
        const uint8_t *limit = end - 32;
        do {
            v1 = xxh64_round(v1, read_le64(p));
            v2 = xxh64_round(v2, read_le64(p + 8));
            v3 = xxh64_round(v3, read_le64(p + 16));
            v4 = xxh64_round(v4, read_le64(p + 24));
            p += 32;
        } while (p <= limit);
        h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);
        h = xxh64_merge(h, v1);
        h = xxh64_merge(h, v2);
        h = xxh64_merge(h, v3);
        h = xxh64_merge(h, v4);
    } else {
        h = seed + XXH_PRIME64_5;
    }
    h += (uint64_t)length;
    for (; p + 8 <= end; p += 8) {
        h ^= xxh64_round(0, read_le64(p));
        h = rotl64(h, 27) * XXH_PRIME64_1 + XXH_PRIME64_4;
    }
    if (p + 4 <= end) {
        h ^= (uint64_t)read_le32(p) * XXH_PRIME64_1;
        h = rotl64(h, 23) * XXH_PRIME64_2 + XXH_PRIME64_3;
        p += 4;
    }
    for (; p < end; p++) {
        h ^= (uint64_t)(*p) * XXH_PRIME64_5;
        h = rotl64(h, 11) * XXH_PRIME64_1;
    }
    h ^= h >> 33;
    h *= XXH_PRIME64_2;
    h ^= h >> 29;
    h *= XXH_PRIME64_3;
    h ^= h >> 32;
    return h;
}

void xxh64_many(const char *data, const uint64_t *offsets, size_t count, uint64_t seed,
                uint64_t *out)
{
    for (size_t i = 0; i < count; i++)
        out[i] = xxh64(data + offsets[i], (size_t)(offsets[i + 1] - offsets[i]), seed);
}

/* ---- MurmurHash3_x86_32 ---- */

uint32_t murmur3_32(const char *text, size_t length, uint32_t seed)
{
    const uint8_t *data = (const uint8_t *)text;
    uint32_t h1 = seed;
    size_t blocks = length / 4 * 4;
    for (size_t i = 0; i < blocks; i += 4)
        h1 = mix_block(h1, load_le32(data + i));
    return murmur_finish(h1, data + blocks, length - blocks, (uint32_t)length);
}

/* ---- MurmurHash64A, as mcrouter's murmur_hash_64A (see hashes.h) ---- */

#define MURMUR64A_M 0xc6a4a7935bd1e995ULL
#define MURMUR64A_R 47

uint64_t murmur64a(const char *text, size_t length, uint64_t seed)
{
    const uint8_t *data = (const uint8_t *)text;
    uint64_t h = seed ^ ((uint64_t)length * MURMUR64A_M);
    size_t blocks = length / 8 * 8;
    for (size_t i = 0; i < blocks; i += 8) {
        uint64_t k = read_le64(data + i);
        k *= MURMUR64A_M;
        k ^= k >> MURMUR64A_R;
        k *= MURMUR64A_M;
        h ^= k;
        h *= MURMUR64A_M;
    }
    size_t tail = length - blocks;
    if (tail) {
        /* The reference's fall-through switch: bytes 6..0 of the tail, then one multiply. */
        for (size_t i = tail; i-- > 0;)
            h ^= (uint64_t)data[blocks + i] << (8 * i);
        h *= MURMUR64A_M;
    }
    h ^= h >> MURMUR64A_R;
    h *= MURMUR64A_M;
    h ^= h >> MURMUR64A_R;
    return h;
}

void murmur64a_many(const char *data, const uint64_t *offsets, size_t count, uint64_t seed,
                    uint64_t *out)
{
    for (size_t i = 0; i < count; i++)
        out[i] = murmur64a(data + offsets[i], (size_t)(offsets[i + 1] - offsets[i]), seed);
}

/* ---- CityHash's Hash128to64, as mcrouter's RendezvousHashHelper.h (see hashes.h) ---- */

#define CITY_KMUL 0x9ddfea08eb382d69ULL

uint64_t hash128to64(uint64_t upper, uint64_t lower)
{
    uint64_t a = (lower ^ upper) * CITY_KMUL;
    a ^= a >> 47;
    uint64_t b = (upper ^ a) * CITY_KMUL;
    b ^= b >> 47;
    return b * CITY_KMUL;
}

/* ---- SipHash-2-4, from the paper's description (section 2): four 64-bit words of state,
 * c = 2 rounds per message word, d = 4 rounds of finalization ---- */

#define SIP_ROUND(v0, v1, v2, v3)                                                          \
    do {                                                                                   \
        v0 += v1; v1 = rotl64(v1, 13); v1 ^= v0; v0 = rotl64(v0, 32);                      \
        v2 += v3; v3 = rotl64(v3, 16); v3 ^= v2;                                           \
        v0 += v3; v3 = rotl64(v3, 21); v3 ^= v0;                                           \
        v2 += v1; v1 = rotl64(v1, 17); v1 ^= v2; v2 = rotl64(v2, 32);                      \
    } while (0)

uint64_t siphash24(const uint8_t *data, size_t length, const uint8_t *key)
{
    uint64_t k0 = read_le64(key), k1 = read_le64(key + 8);
    /* the initial constants spell "somepseudorandomlygeneratedbytes" */
    uint64_t v0 = k0 ^ 0x736f6d6570736575ULL, v1 = k1 ^ 0x646f72616e646f6dULL;
    uint64_t v2 = k0 ^ 0x6c7967656e657261ULL, v3 = k1 ^ 0x7465646279746573ULL;
    size_t whole = length - length % 8;
    for (size_t i = 0; i < whole; i += 8) {
        uint64_t m = read_le64(data + i);
        v3 ^= m;
        SIP_ROUND(v0, v1, v2, v3);
        SIP_ROUND(v0, v1, v2, v3);
        v0 ^= m;
    }
    /* the last word: the remaining bytes, and the length's low byte in the top byte */
    uint64_t last = (uint64_t)(length & 0xff) << 56;
    for (size_t i = whole; i < length; i++)
        last |= (uint64_t)data[i] << (8 * (i - whole));
    v3 ^= last;
    SIP_ROUND(v0, v1, v2, v3);
    SIP_ROUND(v0, v1, v2, v3);
    v0 ^= last;
    v2 ^= 0xff;
    for (int r = 0; r < 4; r++)
        SIP_ROUND(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}

void siphash24_many(const uint8_t *data, const uint64_t *offsets, size_t count,
                    const uint8_t *key, uint64_t *out)
{
    for (size_t i = 0; i < count; i++)
        out[i] = siphash24(data + offsets[i], (size_t)(offsets[i + 1] - offsets[i]), key);
}

int siphash24_numbered(const uint8_t *prefix, size_t prefix_length, uint64_t count,
                       const uint8_t *key, uint64_t *out)
{
    /* the prefix, then up to 20 decimal digits of a uint64_t */
    uint8_t name[SIPHASH_PREFIX_MAX + 20];
    if (prefix_length > SIPHASH_PREFIX_MAX)
        return -1;
    for (size_t i = 0; i < prefix_length; i++)
        name[i] = prefix[i];
    for (uint64_t j = 0; j < count; j++) {
        uint8_t digits[20];
        size_t n = 0;
        uint64_t rest = j;
        do {
            digits[n++] = (uint8_t)('0' + rest % 10);
            rest /= 10;
        } while (rest);
        for (size_t d = 0; d < n; d++)
            name[prefix_length + d] = digits[n - 1 - d];
        out[j] = siphash24(name, prefix_length + n, key);
    }
    return 0;
}
