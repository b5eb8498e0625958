/* ring-harness C core: the hash functions (FNV-1a + fmix32, xxHash64, MurmurHash3_x86_32,
 * MurmurHash64A, CityHash's Hash128to64), each computed exactly as the implementation it
 * is named after (see the comment above each). Bound in Python by
 * harness/core/native/hashes.py.
 *
 * The exported functions are defined in hashes.c. The pieces that algorithms.c uses
 * inside its per-key loops are defined here, `static inline`, so that they stay inlined
 * there as they were when both lived in one file: the xxHash64 round (every probe of a
 * multi-probe lookup) and MurmurHash3's block mixing and finalizer (every node's
 * rendezvous score). hash128to64 stays an exported function in hashes.c, called from
 * weighted rendezvous's scores as before: being exported from a -fPIC library (cffi's
 * wrapper calls it), it was never inlined into them, but called through the PLT even
 * from the same file, so moving it changes no code. Making it inline would speed those
 * scores up and move their benchmark baselines: a change of its own, not part of a move.
 */
#ifndef RING_HARNESS_HASHES_H
#define RING_HARNESS_HASHES_H

#include <stddef.h>
#include <stdint.h>

/* cffi:begin */
/* 32-bit FNV-1a followed by the MurmurHash3 fmix32 finalizer, over m names
 * stored back to back in buf; name i is buf[offsets[i] .. offsets[i+1]). */
void hash_fnv1a_fmix32_many(const uint8_t *buf, const uint64_t *offsets, size_t m, uint32_t *out);

/* ---- xxHash64 (Yann Collet's XXH64), as the reference computes it (little-endian reads) ---- */

/* xxHash64 of `length` bytes with `seed`. */
uint64_t xxh64(const char *data, size_t length, uint64_t seed);
/* xxHash64 of many keys stored end to end (key i is data[offsets[i]:offsets[i + 1]]). */
void xxh64_many(const char *data, const uint64_t *offsets, size_t count, uint64_t seed,
                uint64_t *out);
/* cffi:end */

#define XXH_PRIME64_1 0x9E3779B185EBCA87ULL
#define XXH_PRIME64_2 0xC2B2AE3D27D4EB4FULL
#define XXH_PRIME64_3 0x165667B19E3779F9ULL
#define XXH_PRIME64_4 0x85EBCA77C2B2AE63ULL
#define XXH_PRIME64_5 0x27D4EB2F165667C5ULL

static inline uint64_t rotl64(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

static inline uint64_t xxh64_round(uint64_t acc, uint64_t input)
{
    acc += input * XXH_PRIME64_2;
    acc = rotl64(acc, 31);
    return acc * XXH_PRIME64_1;
}

/* xxh64() of the 8 little-endian bytes of `value`: XXH64's path for an input
 * of one 8-byte lane, without going through memory. Inline: multi-probe's
 * lookups (algorithms.c) hash every probe of every key with it. */
static inline uint64_t xxh64_of_u64(uint64_t value, uint64_t seed)
{
    uint64_t h = seed + XXH_PRIME64_5 + 8;
    h ^= xxh64_round(0, value);
    h = rotl64(h, 27) * XXH_PRIME64_1 + XXH_PRIME64_4;
    h ^= h >> 33;
    h *= XXH_PRIME64_2;
    h ^= h >> 29;
    h *= XXH_PRIME64_3;
    h ^= h >> 32;
    return h;
}

/* ---- MurmurHash3_x86_32 (Austin Appleby, public domain) ---- */

/* cffi:begin */
/* Standard MurmurHash3_x86_32. */
uint32_t murmur3_32(const char *data, size_t length, uint32_t seed);
/* cffi:end */

/* Its pieces, inline: rendezvous (algorithms.c) keeps a node's state after its
 * prefix's whole blocks and scores every key against every node with them. */
#define MURMUR_C1 0xcc9e2d51u
#define MURMUR_C2 0x1b873593u

static inline uint32_t rotl32(uint32_t x, int r)
{
    return (x << r) | (x >> (32 - r));
}

static inline uint32_t load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline uint32_t mix_k1(uint32_t k1)
{
    k1 *= MURMUR_C1;
    k1 = rotl32(k1, 15);
    return k1 * MURMUR_C2;
}

static inline uint32_t mix_block(uint32_t h1, uint32_t k1)
{
    h1 ^= mix_k1(k1);
    h1 = rotl32(h1, 13);
    return h1 * 5 + 0xe6546b64u;
}

/* The last 0 to 3 bytes, the length, and the finalizer. */
static inline uint32_t murmur_finish(uint32_t h1, const uint8_t *tail, size_t tail_len,
                                     uint32_t total_len)
{
    uint32_t k1 = 0;
    if (tail_len >= 3)
        k1 ^= (uint32_t)tail[2] << 16;
    if (tail_len >= 2)
        k1 ^= (uint32_t)tail[1] << 8;
    if (tail_len >= 1) {
        k1 ^= tail[0];
        h1 ^= mix_k1(k1);
    }
    h1 ^= total_len;
    h1 ^= h1 >> 16;
    h1 *= 0x85ebca6bu;
    h1 ^= h1 >> 13;
    h1 *= 0xc2b2ae35u;
    h1 ^= h1 >> 16;
    return h1;
}

/* ---- MurmurHash64A (Austin Appleby, public domain) and CityHash's Hash128to64 ----
 * As facebook/mcrouter computes them: mcrouter/lib/fbi/hash.c (murmur_hash_64A: blocks
 * read as little-endian words on the x86-64 it runs on, tail bytes unsigned, the seed a
 * uint32 widened to 64 bits) and mcrouter/lib/RendezvousHashHelper.h (hash128to64). */

/* cffi:begin */
/* MurmurHash64A (MurmurHash2's 64-bit hash for 64-bit platforms), as mcrouter's
 * murmur_hash_64A: words read little-endian, tail bytes unsigned. */
uint64_t murmur64a(const char *data, size_t length, uint64_t seed);
/* MurmurHash64A of many keys stored end to end (key i is data[offsets[i]:offsets[i + 1]]). */
void murmur64a_many(const char *data, const uint64_t *offsets, size_t count, uint64_t seed,
                    uint64_t *out);

/* CityHash's Hash128to64 of (upper, lower), as mcrouter's RendezvousHashHelper.h has it. */
uint64_t hash128to64(uint64_t upper, uint64_t lower);

/* ---- SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input PRF") ----
 * The 64-bit output as the paper defines it: the key is two little-endian 64-bit words,
 * the message is read in little-endian 8-byte words, and the result is the integer
 * v0 ^ v1 ^ v2 ^ v3 (its digest is that integer's 8 little-endian bytes). */

/* SipHash-2-4 of `length` bytes under the 16-byte `key`. */
uint64_t siphash24(const uint8_t *data, size_t length, const uint8_t *key);
/* SipHash-2-4 of many names stored end to end (name i is data[offsets[i]:offsets[i + 1]]). */
void siphash24_many(const uint8_t *data, const uint64_t *offsets, size_t count,
                    const uint8_t *key, uint64_t *out);
/* cffi:end */
/* SipHash-2-4 of the names `prefix` + decimal(j) for j = 0 .. count - 1 (an attacker's
 * numbered candidates), formatted here so that no name list is built. Returns -1 when
 * the prefix is longer than SIPHASH_PREFIX_MAX bytes, else 0. */
#define SIPHASH_PREFIX_MAX 200
/* cffi:begin */
int siphash24_numbered(const uint8_t *prefix, size_t prefix_length, uint64_t count,
                       const uint8_t *key, uint64_t *out);
/* cffi:end */

#endif
