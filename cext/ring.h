/* ring-harness C core: ring entries in several memory layouts, and lookups.
 *
 * Lookup convention (shared with every layout): the owner of key hash h is
 * the first entry whose hash is >= h; past the last entry it wraps to the
 * first. Entries are sorted by hash, with no duplicate hashes.
 * Bound in Python by harness/core/native/ring.py.
 */
#ifndef RING_HARNESS_RING_H
#define RING_HARNESS_RING_H

#include <stddef.h>
#include <stdint.h>

/* cffi:begin */
/* Natural layout: the uint32_t forces 4-byte alignment, so the compiler
 * rounds the struct up to 8 bytes; the last 2 bytes are padding. */
struct ring_entry_aligned {
    uint32_t hash;
    uint16_t idx;
};
/* cffi:end */

/* cffi:begin packed */
/* Packed layout: the same 6 bytes of data with no padding (alignment 1). */
struct ring_entry_packed {
    uint32_t hash;
    uint16_t idx;
} __attribute__((packed));
/* cffi:end */

/* cffi:begin */
/* 64-bit hashes: 8-byte alignment pads 10 bytes of data to 16 (6 of padding). */
struct ring_entry_aligned64 {
    uint64_t hash;
    uint16_t idx;
};
/* cffi:end */

/* cffi:begin packed */
/* 64-bit hashes packed: the raw 10 bytes. */
struct ring_entry_packed64 {
    uint64_t hash;
    uint16_t idx;
} __attribute__((packed));
/* cffi:end */

/* cffi:begin */
/* Sizes and offsets as this compiler laid them out, for the import-time
 * check against what cffi believes. */
size_t ring_entry_aligned_size(void);
size_t ring_entry_packed_size(void);
size_t ring_entry_aligned64_size(void);
size_t ring_entry_packed64_size(void);
size_t ring_entry_aligned_idx_offset(void);
size_t ring_entry_packed_idx_offset(void);
size_t ring_entry_aligned64_idx_offset(void);
size_t ring_entry_packed64_idx_offset(void);

void ring_fill_aligned(struct ring_entry_aligned *entries, const uint32_t *positions,
                       const uint16_t *owners, size_t n);
void ring_fill_packed(struct ring_entry_packed *entries, const uint32_t *positions,
                      const uint16_t *owners, size_t n);
void ring_fill_aligned64(struct ring_entry_aligned64 *entries, const uint64_t *positions,
                         const uint16_t *owners, size_t n);
void ring_fill_packed64(struct ring_entry_packed64 *entries, const uint64_t *positions,
                        const uint16_t *owners, size_t n);

uint16_t ring_lookup_aligned(const struct ring_entry_aligned *entries, size_t n, uint32_t key);
uint16_t ring_lookup_packed(const struct ring_entry_packed *entries, size_t n, uint32_t key);
uint16_t ring_lookup_aligned64(const struct ring_entry_aligned64 *entries, size_t n,
                               uint64_t key);
uint16_t ring_lookup_packed64(const struct ring_entry_packed64 *entries, size_t n,
                              uint64_t key);

void ring_lookup_many_aligned(const struct ring_entry_aligned *entries, size_t n,
                              const uint32_t *keys, size_t m, uint16_t *out);
void ring_lookup_many_packed(const struct ring_entry_packed *entries, size_t n,
                             const uint32_t *keys, size_t m, uint16_t *out);
void ring_lookup_many_aligned64(const struct ring_entry_aligned64 *entries, size_t n,
                                const uint64_t *keys, size_t m, uint16_t *out);
void ring_lookup_many_packed64(const struct ring_entry_packed64 *entries, size_t n,
                               const uint64_t *keys, size_t m, uint16_t *out);
/* cffi:end */

#endif
