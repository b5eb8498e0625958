/* JumpBackHash (Otmar Ertl, "JumpBackHash: Say Goodbye to the Modulo Operation to
 * Distribute Keys Uniformly to Buckets", arXiv:2403.18682, 2024), exactly as hash4j's
 * ConsistentHashing.jumpBackHashSplitMix64: the key hash seeds SplitMix64 (splitmix.h)
 * and the buckets are found backwards, from the highest power-of-two range down, with no
 * division. Bound in Python by
 * harness/core/native/jumpback.py; the plain-Python definition is
 * harness/recipes/algorithms/jumpback.py's. */
#ifndef RING_HARNESS_JUMPBACK_H
#define RING_HARNESS_JUMPBACK_H

#include <stddef.h>
#include <stdint.h>

/* cffi:begin */
/* The bucket in [0, buckets) of a key hash; buckets from 1 to 2**31 - 1. */
uint32_t jumpback_bucket(uint64_t key, uint32_t buckets);
void jumpback_many(const uint64_t *keys, size_t count, uint32_t buckets, uint16_t *out);
/* cffi:end */

#endif
