/* JumpBackHash (see jumpback.h), step for step as hash4j's
 * AbstractConsistentJumpBackBucketHasher.getBucket with its SplitMix64 generator. */
#include "jumpback.h"

#include "splitmix.h"

static inline int highest_bit(uint32_t x) { return 31 - __builtin_clz(x); }

uint32_t jumpback_bucket(uint64_t key, uint32_t buckets)
{
    if (buckets <= 1)
        return 0;
    uint64_t state = key + SPLITMIX64_GAMMA;
    uint64_t r0 = splitmix64_mix(state);
    /* Bit i of x says whether range [2**i, 2**(i+1)) holds the key's last bucket. */
    uint32_t x = (uint32_t)(r0 ^ (r0 >> 32)) & (UINT32_MAX >> __builtin_clz(buckets - 1));
    for (;;) {
        if (x == 0)
            return 0;
        uint32_t low = 1u << highest_bit(x);
        /* A fresh random offset in the range: the half of r0 picked by the parity of the
         * ranges still to visit (Java's shift by 32 * popcount, taken mod 64). */
        uint32_t offset = (uint32_t)(r0 >> ((__builtin_popcount(x) & 1) * 32));
        uint32_t bucket = low + (offset & (low - 1));
        if (bucket < buckets)
            return bucket;
        uint32_t high = (low << 1) - 1;
        for (;;) {
            state += SPLITMIX64_GAMMA;
            uint64_t r1 = splitmix64_mix(state);
            bucket = (uint32_t)r1 & high;
            if (bucket < low)
                break;
            if (bucket < buckets)
                return bucket;
            bucket = (uint32_t)(r1 >> 32) & high;
            if (bucket < low)
                break;
            if (bucket < buckets)
                return bucket;
        }
        x ^= low;
    }
}

void jumpback_many(const uint64_t *keys, size_t count, uint32_t buckets, uint16_t *out)
{
    for (size_t i = 0; i < count; i++)
        out[i] = (uint16_t)jumpback_bucket(keys[i], buckets);
}
