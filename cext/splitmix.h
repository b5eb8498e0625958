/* SplitMix64 (Steele, Lea and Flood, "Fast Splittable Pseudorandom Number Generators",
 * OOPSLA 2014), the generator that AnchorHash's, MementoHash's and DxHash's rehashes draw
 * from here and that JumpBackHash takes in hash4j's `jumpBackHashSplitMix64`.
 *
 * A generator seeded with s yields mix(s + gamma), mix(s + 2 gamma), ...: output i is
 * `splitmix64_at(s, i)`, so the i-th rehash of a key is a function of the key and i alone,
 * the same in C, in numpy and in plain Python (harness/core/splitmix.py). */
#ifndef RING_HARNESS_SPLITMIX_H
#define RING_HARNESS_SPLITMIX_H

#include <stdint.h>

#define SPLITMIX64_GAMMA 0x9e3779b97f4a7c15ULL

/* The output function (Stafford's "variant 13" finaliser). */
static inline uint64_t splitmix64_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Output `index` (from 0) of the generator seeded with `seed`. */
static inline uint64_t splitmix64_at(uint64_t seed, uint64_t index)
{
    return splitmix64_mix(seed + (index + 1) * SPLITMIX64_GAMMA);
}

#endif
