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

/* cffi:begin */
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
/* How the batch lookup runs (bucketed.c says what each trades):
 * window: 0 (search each bucket from the interpolated guess, no window), or the
 *   entries counted around the guess, 8, 16, 24, 32, 48 or 64;
 * depth: keys between reading a key's offsets (prefetching its window) and counting
 *   its window, a power of two, 1 to RING_BUCKETED_MAX_DEPTH;
 * offsets_ahead: keys between prefetching a key's offsets and reading them, 1 to
 *   RING_BUCKETED_MAX_AHEAD;
 * align: windows start on a multiple of this many entries, the one nearest the start
 *   centred on the guess: 1 (centred), 8 or 16 (a 64-byte line, for entries from a
 *   64-byte boundary), at most the window.
 * Every valid tuning routes every key identically; only the time differs. */
struct ring_bucketed_tuning {
    uint32_t window;
    uint32_t depth;
    uint32_t offsets_ahead;
    uint32_t align;
};

#define RING_BUCKETED_MAX_DEPTH 64
#define RING_BUCKETED_MAX_AHEAD 256

/* 1 if the lookup accepts this tuning, else 0. */
int ring_bucketed_tuning_valid(const struct ring_bucketed_tuning *tuning);
/* The tuning chosen by ring size alone when none is given (measured on one Intel Xeon). */
struct ring_bucketed_tuning ring_bucketed_default_tuning(size_t n);
/* out[i] = owner of keys[i], for i < m, run as `tuning` says (NULL: the default for the
 * ring's size). Returns 0, or -1 (nothing written) for an invalid tuning. */
int ring_bucketed_lookup_many(const uint32_t *offsets, const struct ring_bucket_entry *entries,
                              const uint32_t *keys, size_t m, uint16_t *out,
                              const struct ring_bucketed_tuning *tuning);
/* cffi:end */

#endif
