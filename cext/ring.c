#include "ring.h"

/* sizeof and offsetof(idx), as this compiler laid the struct out. */
#define RING_DESCRIBE(SUFFIX, ENTRY)                                                 \
    size_t ring_entry_##SUFFIX##_size(void) { return sizeof(ENTRY); }                \
    size_t ring_entry_##SUFFIX##_idx_offset(void) { return offsetof(ENTRY, idx); }

RING_DESCRIBE(aligned, struct ring_entry_aligned)
RING_DESCRIBE(packed, struct ring_entry_packed)
RING_DESCRIBE(aligned64, struct ring_entry_aligned64)
RING_DESCRIBE(packed64, struct ring_entry_packed64)

/* One definition of fill and lookup, instantiated per layout, so the
 * layouts can differ only in their struct and hash width, never in their logic. */
#define RING_DEFINE(SUFFIX, ENTRY, HASH)                                             \
    void ring_fill_##SUFFIX(ENTRY *entries, const HASH *positions,                   \
                            const uint16_t *owners, size_t n)                        \
    {                                                                                \
        for (size_t i = 0; i < n; i++) {                                             \
            entries[i].hash = positions[i];                                          \
            entries[i].idx = owners[i];                                              \
        }                                                                            \
    }                                                                                \
                                                                                     \
    /* Lower bound: index of the first entry with hash >= key, n if none. */         \
    static inline size_t lower_bound_##SUFFIX(const ENTRY *entries, size_t n,        \
                                              HASH key)                              \
    {                                                                                \
        size_t lo = 0, hi = n;                                                       \
        while (lo < hi) {                                                            \
            size_t mid = lo + (hi - lo) / 2;                                         \
            if (entries[mid].hash < key)                                             \
                lo = mid + 1;                                                        \
            else                                                                     \
                hi = mid;                                                            \
        }                                                                            \
        return lo;                                                                   \
    }                                                                                \
                                                                                     \
    uint16_t ring_lookup_##SUFFIX(const ENTRY *entries, size_t n, HASH key)          \
    {                                                                                \
        size_t i = lower_bound_##SUFFIX(entries, n, key);                            \
        return entries[i == n ? 0 : i].idx;                                          \
    }                                                                                \
                                                                                     \
    void ring_lookup_many_##SUFFIX(const ENTRY *entries, size_t n,                   \
                                   const HASH *keys, size_t m, uint16_t *out)        \
    {                                                                                \
        for (size_t j = 0; j < m; j++) {                                             \
            size_t i = lower_bound_##SUFFIX(entries, n, keys[j]);                    \
            out[j] = entries[i == n ? 0 : i].idx;                                    \
        }                                                                            \
    }

RING_DEFINE(aligned, struct ring_entry_aligned, uint32_t)
RING_DEFINE(packed, struct ring_entry_packed, uint32_t)
RING_DEFINE(aligned64, struct ring_entry_aligned64, uint64_t)
RING_DEFINE(packed64, struct ring_entry_packed64, uint64_t)
