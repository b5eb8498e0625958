/* The hashes client traits add to the ring's (harness/core/trait_hashes.py defines each in
 * plain Python, the tests hold these to it and to the xxhash library):
 *
 * - FNV-1 and FNV-1a, 32 and 64 bits (Fowler, Noll and Vo's offset bases and primes);
 * - Bob Jenkins' one-at-a-time hash, 32 bits;
 * - MurmurHash3_x86_32 (Austin Appleby's SMHasher), with a seed;
 * - xxHash32 and xxHash64 with a seed, written from the format's specification
 *   (Yann Collet's "xxHash fast digest algorithm", doc/xxhash_spec.md): stripes of four
 *   lanes, then the tail, then the avalanche.
 *
 * Multi-byte words are read little-endian byte by byte, whatever the host's order. */
#ifndef RING_TRAIT_HASHES_H
#define RING_TRAIT_HASHES_H

#include <stddef.h>
#include <stdint.h>

enum trait_hash_kind {
    TRAIT_FNV1_32 = 0,
    TRAIT_FNV1A_32 = 1,
    TRAIT_FNV1_64 = 2,
    TRAIT_FNV1A_64 = 3,
    TRAIT_OAAT_32 = 4,
    TRAIT_MURMUR3_32 = 5,
    TRAIT_XXH32 = 6,
    TRAIT_XXH64 = 7,
};

/* cffi:begin */
/* The hash of the given kind (0 FNV-1 32, 1 FNV-1a 32, 2 FNV-1 64, 3 FNV-1a 64,
 * 4 one-at-a-time, 5 MurmurHash3_x86_32, 6 xxHash32, 7 xxHash64; the seed is taken by 5, 6
 * and 7, its low 32 bits by 5 and 6) of many names stored end to end (name i is
 * data[offsets[i]:offsets[i + 1]]), each widened to 64 bits. Returns 0, or -1 for an
 * unknown kind (out untouched). */
int trait_hash_many(const uint8_t *data, const uint64_t *offsets, size_t count, int kind,
                    uint64_t seed, uint64_t *out);
/* cffi:end */

#endif
