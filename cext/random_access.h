/* ring-harness C core: the "one random access" reference for batch lookups.
 *
 * A ring too large for the caches costs every lookup at least one random read
 * from memory. This reads, for each key, one 4-byte element of an array of the
 * ring's size at an index spread uniformly by the key hash (multiply-shift),
 * with no dependence between keys, so the core keeps as many reads in flight
 * as it can: the floor a batch lookup of that ring is measured against.
 * Bound in Python by harness/core/native/random_access.py.
 */
#ifndef RING_HARNESS_RANDOM_ACCESS_H
#define RING_HARNESS_RANDOM_ACCESS_H

#include <stddef.h>
#include <stdint.h>

/* cffi:begin */
/* out[i] = array[(keys[i] * n) >> 32] (as uint16_t), for i < m. */
void ring_random_reads(const uint32_t *array, size_t n, const uint32_t *keys, size_t m,
                       uint16_t *out);
/* cffi:end */

#endif
