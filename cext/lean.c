/* The lean ring (see lean.h): sorting, de-duplication and arc sums in place.
 *
 * Why not argsort plus gathers: for n points that takes an 8-byte index, a
 * gathered copy of both arrays and boolean masks, about 40 bytes per point
 * for a 32-bit ring (measured: 83 bytes per point for a whole 10M-point run).
 */
#include "lean.h"

#include <stdlib.h>
#include <string.h>

#define OWNER_BITS 16
#define DIGIT_BITS 8
#define DIGITS (1u << DIGIT_BITS)
/* The 64-bit sort partitions on this many top bits (two digits), then sorts buckets. */
#define TOP_BITS (2 * DIGIT_BITS)
/* Below this many keys insertion sort beats the radix sort's 256-slot histograms. */
#define INSERTION_SORT_MAX 48

size_t ring_split_packed32(const uint64_t *words, size_t n, int keep_highest,
                           uint32_t *positions, uint16_t *owners)
{
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t position = words[i] >> OWNER_BITS;
        int keep = keep_highest ? i + 1 == n || words[i + 1] >> OWNER_BITS != position
                                : i == 0 || words[i - 1] >> OWNER_BITS != position;
        if (keep) {
            positions[kept] = (uint32_t)position;
            owners[kept] = (uint16_t)words[i];
            kept++;
        }
    }
    return kept;
}

static void insertion_sort_keys(uint64_t *keys, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        uint64_t key = keys[i];
        size_t j = i;
        while (j > 0 && keys[j - 1] > key) {
            keys[j] = keys[j - 1];
            j--;
        }
        keys[j] = key;
    }
}

/* LSD radix sort of 64-bit keys; `spare` has room for n keys. Passes whose digit is
 * the same for every key are skipped. The result ends in `keys`. */
static void radix_sort_keys(uint64_t *keys, uint64_t *spare, size_t n)
{
    size_t count[DIGITS];
    uint64_t *from = keys, *to = spare;
    for (int shift = 0; shift < 64; shift += DIGIT_BITS) {
        memset(count, 0, sizeof count);
        for (size_t i = 0; i < n; i++)
            count[(from[i] >> shift) & (DIGITS - 1)]++;
        if (count[(from[0] >> shift) & (DIGITS - 1)] == n)
            continue;
        size_t start = 0;
        for (unsigned d = 0; d < DIGITS; d++) {
            size_t c = count[d];
            count[d] = start;
            start += c;
        }
        for (size_t i = 0; i < n; i++)
            to[count[(from[i] >> shift) & (DIGITS - 1)]++] = from[i];
        uint64_t *swap = from;
        from = to;
        to = swap;
    }
    if (from != keys)
        memcpy(keys, from, n * sizeof *keys);
}

/* American flag sort on one 8-bit digit of the position, in place: each displaced
 * point is carried to its digit's next free slot. ends[d] = end of digit d's part.
 * 256 write heads stay in cache; one pass on 16 bits (65,536 heads) missed it. */
static void flag_partition64(uint64_t *positions, uint16_t *owners, size_t n, int shift,
                             size_t *ends)
{
    size_t next[DIGITS];
    memset(ends, 0, DIGITS * sizeof *ends);
    for (size_t i = 0; i < n; i++)
        ends[(positions[i] >> shift) & (DIGITS - 1)]++;
    size_t start = 0;
    for (unsigned d = 0; d < DIGITS; d++) {
        next[d] = start;
        start += ends[d];
        ends[d] = start;
    }
    for (unsigned b = 0; b < DIGITS; b++) {
        while (next[b] < ends[b]) {
            size_t i = next[b];
            uint64_t p = positions[i];
            uint16_t o = owners[i];
            unsigned d = (unsigned)(p >> shift) & (DIGITS - 1);
            while (d != b) {
                size_t j = next[d]++;
                uint64_t p2 = positions[j];
                uint16_t o2 = owners[j];
                positions[j] = p;
                owners[j] = o;
                p = p2;
                o = o2;
                d = (unsigned)(p >> shift) & (DIGITS - 1);
            }
            positions[i] = p;
            owners[i] = o;
            next[b]++;
        }
    }
}

/* Sort one bucket (all points share the top 16 bits) through keys (rest << 16 | owner). */
static void sort_bucket64(uint64_t *positions, uint16_t *owners, size_t n, uint64_t *keys)
{
    const uint64_t rest_mask = ((uint64_t)1 << (64 - TOP_BITS)) - 1;
    for (size_t i = 0; i < n; i++)
        keys[i] = (positions[i] & rest_mask) << OWNER_BITS | owners[i];
    if (n <= INSERTION_SORT_MAX)
        insertion_sort_keys(keys, n);
    else
        radix_sort_keys(keys, keys + n, n);
    const uint64_t top = positions[0] & ~rest_mask;
    for (size_t i = 0; i < n; i++) {
        positions[i] = top | keys[i] >> OWNER_BITS;
        owners[i] = (uint16_t)keys[i];
    }
}

size_t ring_sort_dedupe64(uint64_t *positions, uint16_t *owners, size_t n, int keep_highest)
{
    size_t top_ends[DIGITS], leaf_ends[DIGITS];
    uint64_t *keys = NULL;
    size_t capacity = 0;
    flag_partition64(positions, owners, n, 64 - DIGIT_BITS, top_ends);
    size_t top_begin = 0;
    for (unsigned t = 0; t < DIGITS; t++) {
        uint64_t *pos = positions + top_begin;
        uint16_t *own = owners + top_begin;
        flag_partition64(pos, own, top_ends[t] - top_begin, 64 - TOP_BITS, leaf_ends);
        size_t begin = 0;
        for (unsigned b = 0; b < DIGITS; b++) {
            size_t size = leaf_ends[b] - begin;
            if (size > 1) {
                if (2 * size > capacity) {
                    free(keys);
                    capacity = 4 * size;
                    keys = malloc(capacity * sizeof *keys);
                    if (!keys)
                        return (size_t)-1;
                }
                sort_bucket64(pos + begin, own + begin, size, keys);
            }
            begin = leaf_ends[b];
        }
        top_begin = top_ends[t];
    }
    free(keys);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        int keep = keep_highest ? i + 1 == n || positions[i + 1] != positions[i]
                                : i == 0 || positions[i - 1] != positions[i];
        if (keep) {
            /* kept <= i: the slots written are never read again */
            positions[kept] = positions[i];
            owners[kept] = owners[i];
            kept++;
        }
    }
    return kept;
}

/* The wrapping arc positions[0] + 2**bits - positions[n-1] is exact in `type` except
 * for a single point, whose arc is the whole ring. */
#define ARC_SUMS_DEFINE(bits, type)                                                          \
    void ring_arc_sums##bits(const type *positions, const uint16_t *owners, size_t n,         \
                             double *out)                                                    \
    {                                                                                        \
        if (n == 0)                                                                          \
            return;                                                                          \
        type wrap = (type)(positions[0] - positions[n - 1]);                                 \
        out[owners[0]] += n == 1 ? 2.0 * (double)((type)1 << (bits - 1)) : (double)wrap;    \
        for (size_t i = 1; i < n; i++)                                                       \
            out[owners[i]] += (double)(type)(positions[i] - positions[i - 1]);               \
    }

ARC_SUMS_DEFINE(32, uint32_t)
ARC_SUMS_DEFINE(64, uint64_t)
