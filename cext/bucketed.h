/* ring-harness C core: the bucketed layout (32-bit hashes, 4 bytes per entry).
 *
 * The top 16 bits of a position select one of 2**16 buckets and are not
 * stored: an entry keeps only the low 16 bits next to its owner. A table of
 * 2**16 + 1 offsets says where each bucket starts: offsets[b] is the number
 * of entries in buckets < b, so bucket b is entries[offsets[b] .. offsets[b+1])
 * and offsets[2**16] is the number of entries. Same lookup convention as
 * ring.h: first entry >= key hash, wrapping to entry 0.
 * Bound in Python by harness/core/native/bucketed.py.
 */
#ifndef RING_HARNESS_BUCKETED_H
#define RING_HARNESS_BUCKETED_H

#include <stddef.h>
#include <stdint.h>

#define RING_BUCKET_BITS 16
#define RING_BUCKETS (1u << RING_BUCKET_BITS)

struct ring_bucket_entry {
    uint16_t low;
    uint16_t idx;
};

size_t ring_bucket_entry_size(void);
size_t ring_bucket_entry_idx_offset(void);

/* Fills offsets (RING_BUCKETS + 1 of them) and entries (n) from sorted
 * positions. Returns 0, or -1 if positions are not strictly increasing (the
 * outputs are then unspecified). n must be at least 1 and below 2**32. */
int ring_bucketed_build(uint32_t *offsets, struct ring_bucket_entry *entries,
                        const uint32_t *positions, const uint16_t *owners, size_t n);

uint16_t ring_bucketed_lookup(const uint32_t *offsets, const struct ring_bucket_entry *entries,
                              uint32_t key);
void ring_bucketed_lookup_many(const uint32_t *offsets, const struct ring_bucket_entry *entries,
                               const uint32_t *keys, size_t m, uint16_t *out);

#endif
