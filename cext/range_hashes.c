/* BinomialHash, FlipHash and PowerCH lookups (see range_hashes.h for what each matches). Every
 * product wraps modulo 2**64, as Java's long and Rust's wrapping_mul do. */
#include "range_hashes.h"

/* ---- BinomialHash ---- */

/* The largest power of two <= x, for x >= 1 (Java's Integer.highestOneBit). */
static inline uint32_t highest_one_bit(uint32_t x)
{
    return (uint32_t)1 << (31 - __builtin_clz(x));
}

/* The paper's rehash: a step of jump's LCG, squared and scaled by `seed`, top half kept. */
static inline uint64_t binomial_rehash(uint64_t value, uint32_t seed)
{
    uint64_t h = 2862933555777941757ULL * value + 1;
    return (h * h * (uint64_t)seed) >> 32;
}

/* A uniform node of the tree level `bucket` sits in (levels 0 and 1 hold one node each). */
static inline uint32_t binomial_relocate(uint32_t bucket, uint64_t hash)
{
    if (bucket < 2)
        return bucket;
    uint32_t level = highest_one_bit(bucket);
    uint32_t filter = level - 1;
    return level + ((uint32_t)binomial_rehash(hash, filter) & filter);
}

uint16_t binomial_bucket(uint64_t hash, uint32_t buckets)
{
    if (buckets < 2)
        return 0;
    uint32_t enclosing = highest_one_bit(buckets);
    if (buckets > enclosing)
        enclosing <<= 1;
    uint32_t enclosing_filter = enclosing - 1, minor_filter = enclosing_filter >> 1;
    uint32_t bucket = binomial_relocate((uint32_t)hash & enclosing_filter, hash);
    if (bucket < buckets)
        return (uint16_t)bucket;
    /* Up to four fresh draws in the enclosing tree; one in the minor tree stops them. */
    uint64_t h = hash;
    for (int i = 0; i < 4; i++) {
        h = binomial_rehash(h, enclosing_filter);
        bucket = binomial_relocate((uint32_t)h & enclosing_filter, h);
        if (bucket <= minor_filter)
            break;
        if (bucket < buckets)
            return (uint16_t)bucket;
    }
    return (uint16_t)binomial_relocate((uint32_t)hash & minor_filter, hash);
}

void binomial_many(const uint64_t *hashes, size_t count, uint32_t buckets, uint16_t *out)
{
    for (size_t i = 0; i < count; i++)
        out[i] = binomial_bucket(hashes[i], buckets);
}

/* ---- FlipHash ---- */

#define FLIPHASH_MAX_DRAWS 64

/* fliphash_64's keyed hash family h(key, r, i), seed 0: two multiply-xorshift rounds keyed by
 * the odd multipliers 2r + 1 and 2i + 1. */
static inline uint64_t fliphash_mix(uint64_t key, uint32_t level, uint32_t draw)
{
    uint64_t k = key * ((uint64_t)level * 2 + 1);
    k = (k ^ (k >> 27)) * 0x3C79AC492BA7B653ULL;
    k = k * ((uint64_t)draw * 2 + 1);
    k = (k ^ (k >> 33)) * 0x1C69B3F74AC4AE35ULL;
    return k ^ (k >> 27);
}

static inline uint32_t floor_log2_64(uint64_t x)
{
    return 63 - (uint32_t)__builtin_clzll(x);
}

/* FlipHash over a power-of-two range [0, mask]: the key's masked bits, all of them below the
 * top one flipped by a hash keyed on that top bit's position. */
static inline uint64_t fliphash_pow2(uint64_t key, uint64_t hash, uint64_t mask)
{
    uint64_t masked = hash & mask;
    if (masked == 0)
        return 0;
    uint32_t top = floor_log2_64(masked);
    uint64_t below_top = ((uint64_t)1 << top) - 1;
    return masked ^ (fliphash_mix(key, top, 0) & below_top);
}

uint16_t fliphash_bucket(uint64_t key, uint32_t buckets)
{
    uint64_t range_end = (uint64_t)buckets - 1;
    if (range_end == 0)
        return 0;
    uint32_t top = floor_log2_64(range_end);
    uint64_t mask = top == 63 ? ~(uint64_t)0 : ((uint64_t)2 << top) - 1;
    uint64_t hash = fliphash_mix(key, 0, 0);
    uint64_t pow2 = fliphash_pow2(key, hash, mask);
    if (pow2 <= range_end)
        return (uint16_t)pow2;
    /* Draws in the upper half [mask/2 + 1, mask]: one at or below range_end is the answer,
     * one in the lower half (or 64 misses) falls back to the half-size range. */
    for (uint32_t i = 1; i <= FLIPHASH_MAX_DRAWS; i++) {
        uint64_t draw = fliphash_mix(key, top, i) & mask;
        if (draw <= mask >> 1)
            break;
        if (draw <= range_end)
            return (uint16_t)draw;
    }
    return (uint16_t)fliphash_pow2(key, hash, mask >> 1);
}

void fliphash_many(const uint64_t *keys, size_t count, uint32_t buckets, uint16_t *out)
{
    for (size_t i = 0; i < count; i++)
        out[i] = fliphash_bucket(keys[i], buckets);
}

/* ---- PowerCH ---- */

/* PCG32 (XSH RR 64/32): a 64-bit LCG state and an odd increment that names the stream. */
struct pcg32 {
    uint64_t state, increment;
};

static inline void pcg32_step(struct pcg32 *rng)
{
    rng->state = rng->state * 6364136223846793005ULL + rng->increment;
}

/* The output of the current state, which it does not advance (as the crate's next_u32). */
static inline uint32_t pcg32_output(const struct pcg32 *rng)
{
    uint32_t rotate = (uint32_t)(rng->state >> 59);
    uint32_t shifted = (uint32_t)(((rng->state >> 18) ^ rng->state) >> 27);
    return (shifted >> rotate) | (shifted << ((32 - rotate) & 31));
}

static inline struct pcg32 pcg32_seeded(uint64_t state, uint64_t stream)
{
    struct pcg32 rng = {state, (stream << 1) | 1};
    rng.state += rng.increment;
    pcg32_step(&rng);
    return rng;
}

/* The paper's f: over [0, mask] (mask + 1 a power of two), the key's masked bits keep their
 * top bit t and draw the bits below it from the stream keyed by (key, t). Returns the
 * bucket; *rng is left where f stopped, for g to go on from. */
static inline uint32_t powerch_f(uint64_t key, uint32_t mask, struct pcg32 *rng)
{
    uint32_t bits = (uint32_t)(key & mask);
    if (bits == 0)
        return 0;
    uint32_t top = 31 - (uint32_t)__builtin_clz(bits);
    uint32_t level = (uint32_t)1 << top;
    *rng = pcg32_seeded(key, top);
    return level + (pcg32_output(rng) & (level - 1));
}

/* The paper's g: jumps up from s, like jump's loop, while the next jump stays below n. */
static inline uint32_t powerch_g(uint32_t buckets, uint32_t start, struct pcg32 *rng)
{
    uint64_t x = start;
    for (;;) {
        uint64_t scaled = (x + 1) * (uint64_t)UINT32_MAX;
        uint64_t draw = (uint64_t)pcg32_output(rng) + 1;
        if ((uint64_t)buckets * draw <= scaled)
            return (uint32_t)x;
        pcg32_step(rng);
        x = scaled / draw;
    }
}

uint16_t powerch_bucket(uint64_t key, uint32_t buckets)
{
    if (buckets < 2)
        return 0;
    uint32_t mask = buckets - 1;
    mask |= mask >> 1;
    mask |= mask >> 2;
    mask |= mask >> 4;
    mask |= mask >> 8;
    mask |= mask >> 16;
    uint32_t half_mask = mask >> 1;
    /* powerch_f seeds it whenever first >= buckets (the key's bits were not 0); the
     * initialiser only tells the compiler so. */
    struct pcg32 rng = {0, 1};
    uint32_t first = powerch_f(key, mask, &rng);
    if (first < buckets)
        return (uint16_t)first;
    pcg32_step(&rng);
    uint32_t second = powerch_g(buckets, half_mask, &rng);
    if (second > half_mask)
        return (uint16_t)second;
    return (uint16_t)powerch_f(key, half_mask, &rng);
}

void powerch_many(const uint64_t *keys, size_t count, uint32_t buckets, uint16_t *out)
{
    for (size_t i = 0; i < count; i++)
        out[i] = powerch_bucket(keys[i], buckets);
}
