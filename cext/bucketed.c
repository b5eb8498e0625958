#include "bucketed.h"

/* Keys resolved per block of a batch lookup. Each block runs in three passes
 * (prefetch the bucket offsets, prefetch the guessed entry, search), so the
 * cache misses of a whole block are in flight at once instead of one after
 * another; 32 keys cover the ~10 to 20 misses a core can keep outstanding. */
#define LOOKUP_BLOCK 32
/* Entries a batch lookup compares around its guess, counting those below the key
 * with no branch per entry: the branchy search from the guess mispredicts a few
 * times per key. 16 entries (64 bytes, one or two cache lines) hold the answer of
 * about 88% of keys at 10M entries (~150 a bucket; the answer is a median 3 and a
 * 99th percentile 14 entries from the guess); the others fall back to the search.
 * Measured at 10M entries, interleaved with one random access per key on a shared
 * machine: the search 4.2x to 6x that floor, the window 2.8x to 3.8x. Tried and
 * dropped: a 32-entry window (three lines to prefetch: slower than the search),
 * GCC's 64-byte vectors (split badly without AVX-512: 7x to 13x), SSE2 compares
 * (no steady gain over the unrolled loop), a second window tried on a miss (5.4x),
 * blocks of 64 keys (no change). Below two windows a bucket, the search is faster:
 * rings under 2**21 entries keep it (lookup_many_search). */
#define WINDOW 16

size_t ring_bucket_entry_size(void) { return sizeof(struct ring_bucket_entry); }
size_t ring_bucket_entry_idx_offset(void) { return offsetof(struct ring_bucket_entry, idx); }

int ring_bucketed_build(uint32_t *offsets, struct ring_bucket_entry *entries,
                        const uint32_t *positions, const uint16_t *owners, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && positions[i] <= positions[i - 1])
            return -1;
        entries[i].low = (uint16_t)positions[i];
        entries[i].idx = owners[i];
    }
    size_t i = 0;
    for (uint32_t b = 0; b <= RING_BUCKETS; b++) {
        while (i < n && (positions[i] >> RING_BUCKET_BITS) < b)
            i++;
        offsets[b] = (uint32_t)i;
    }
    return 0;
}

/* Where the answer probably is: hash positions are uniform, so inside a bucket
 * the share of entries below key_low is about key_low / 2**16. Always in
 * [lo, hi], and equal to hi only for an empty bucket. */
static inline size_t guess_index(size_t lo, size_t hi, uint16_t key_low)
{
    return lo + (((hi - lo) * (size_t)key_low) >> RING_BUCKET_BITS);
}

/* First index in [lo, hi) whose low is >= key_low, or hi if none. */
static inline size_t lower_bound_low(const struct ring_bucket_entry *entries, size_t lo,
                                     size_t hi, uint16_t key_low)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (entries[mid].low < key_low)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The same lower bound, searched outward from the guess with doubling steps:
 * on hash data the answer is a few entries from the guess (one cache line),
 * and a skewed bucket still costs only O(log size) probes, not a linear scan. */
static inline size_t search_bucket(const struct ring_bucket_entry *entries, size_t lo,
                                   size_t hi, size_t guess, uint16_t key_low)
{
    size_t step = 1;
    if (guess < hi && entries[guess].low < key_low) {
        /* Answer in (guess, hi]: entries before `left` are all below key_low. */
        size_t left = guess + 1;
        while (left + step <= hi && entries[left + step - 1].low < key_low) {
            left += step;
            step <<= 1;
        }
        return lower_bound_low(entries, left, left + step <= hi ? left + step - 1 : hi, key_low);
    }
    /* Answer in [lo, guess]: `right` is hi or an entry >= key_low. */
    size_t right = guess;
    while (right >= lo + step && entries[right - step].low >= key_low) {
        right -= step;
        step <<= 1;
    }
    return lower_bound_low(entries, right >= lo + step ? right - step + 1 : lo, right, key_low);
}

/* Index of the owning entry. When no entry of bucket b is >= the key, the
 * answer is offsets[b + 1]: the first entry of the next non-empty bucket, or
 * n past the last one, which wraps to entry 0. */
static inline size_t resolve(const uint32_t *offsets, const struct ring_bucket_entry *entries,
                             size_t lo, size_t hi, size_t guess, uint32_t key)
{
    size_t i = search_bucket(entries, lo, hi, guess, (uint16_t)key);
    return i == offsets[RING_BUCKETS] ? 0 : i;
}

uint16_t ring_bucketed_lookup(const uint32_t *offsets, const struct ring_bucket_entry *entries,
                              uint32_t key)
{
    uint32_t b = key >> RING_BUCKET_BITS;
    size_t lo = offsets[b], hi = offsets[b + 1];
    return entries[resolve(offsets, entries, lo, hi, guess_index(lo, hi, (uint16_t)key), key)].idx;
}

/* First entry of the window: centred on the guess, inside the bucket when the bucket
 * has at least WINDOW entries, else the bucket's first entry. */
static inline size_t window_start(size_t lo, size_t hi, size_t guess)
{
    if (hi - lo <= WINDOW)
        return lo;
    size_t start = guess > lo + WINDOW / 2 ? guess - WINDOW / 2 : lo;
    return start + WINDOW > hi ? hi - WINDOW : start;
}

/* Index of the owning entry, counting the window's entries below the key with no
 * branch per entry: exact when the window starts the bucket or begins below the key,
 * and ends the bucket or ends at or above the key; otherwise (about one key in eight
 * on a hash ring, more in skewed buckets) the search from the guess decides. */
static inline size_t resolve_in_window(const uint32_t *offsets,
                                       const struct ring_bucket_entry *entries, size_t lo,
                                       size_t hi, size_t guess, size_t start, uint32_t key)
{
    if (hi - lo < 2 * WINDOW) /* a short bucket: the search from the guess is cheaper */
        return resolve(offsets, entries, lo, hi, guess, key);
    uint16_t key_low = (uint16_t)key;
    const size_t length = WINDOW;
    size_t below = 0;
    for (size_t j = 0; j < WINDOW; j++) /* a constant trip count the compiler unrolls */
        below += entries[start + j].low < key_low;
    if ((start == lo || below > 0) && (start + length == hi || below < length)) {
        size_t i = start + below;
        return i == offsets[RING_BUCKETS] ? 0 : i;
    }
    return resolve(offsets, entries, lo, hi, guess, key);
}

/* The batch lookup as it was before the window: for rings whose buckets are short,
 * where the window measured ~30% slower (1M entries: 22 against 29 ns a key). */
static void lookup_many_search(const uint32_t *offsets, const struct ring_bucket_entry *entries,
                               const uint32_t *keys, size_t m, uint16_t *out)
{
    size_t lo[LOOKUP_BLOCK], hi[LOOKUP_BLOCK], guess[LOOKUP_BLOCK];
    for (size_t start = 0; start < m; start += LOOKUP_BLOCK) {
        size_t count = m - start < LOOKUP_BLOCK ? m - start : LOOKUP_BLOCK;
        const uint32_t *block = keys + start;
        for (size_t k = 0; k < count; k++)
            __builtin_prefetch(&offsets[block[k] >> RING_BUCKET_BITS]);
        for (size_t k = 0; k < count; k++) {
            uint32_t b = block[k] >> RING_BUCKET_BITS;
            lo[k] = offsets[b];
            hi[k] = offsets[b + 1];
            guess[k] = guess_index(lo[k], hi[k], (uint16_t)block[k]);
            /* guess may be n (one past the end): prefetch never faults. */
            __builtin_prefetch(&entries[guess[k]]);
        }
        for (size_t k = 0; k < count; k++)
            out[start + k] = entries[resolve(offsets, entries, lo[k], hi[k], guess[k], block[k])].idx;
    }
}

/* The batch lookup with the window, for rings too large for the caches. */
static void lookup_many_window(const uint32_t *offsets, const struct ring_bucket_entry *entries,
                               const uint32_t *keys, size_t m, uint16_t *out)
{
    size_t lo[LOOKUP_BLOCK], hi[LOOKUP_BLOCK], guess[LOOKUP_BLOCK], start_of[LOOKUP_BLOCK];
    for (size_t start = 0; start < m; start += LOOKUP_BLOCK) {
        size_t count = m - start < LOOKUP_BLOCK ? m - start : LOOKUP_BLOCK;
        const uint32_t *block = keys + start;
        for (size_t k = 0; k < count; k++)
            __builtin_prefetch(&offsets[block[k] >> RING_BUCKET_BITS]);
        for (size_t k = 0; k < count; k++) {
            uint32_t b = block[k] >> RING_BUCKET_BITS;
            lo[k] = offsets[b];
            hi[k] = offsets[b + 1];
            guess[k] = guess_index(lo[k], hi[k], (uint16_t)block[k]);
            start_of[k] = window_start(lo[k], hi[k], guess[k]);
            /* The window's first and last cache lines (it may reach one past the end
             * of the entries for an empty last bucket: prefetch never faults). */
            __builtin_prefetch(&entries[start_of[k]]);
            __builtin_prefetch(&entries[start_of[k] + WINDOW - 1]);
        }
        for (size_t k = 0; k < count; k++)
            out[start + k] = entries[resolve_in_window(offsets, entries, lo[k], hi[k], guess[k],
                                                       start_of[k], block[k])].idx;
    }
}

void ring_bucketed_lookup_many(const uint32_t *offsets, const struct ring_bucket_entry *entries,
                               const uint32_t *keys, size_t m, uint16_t *out)
{
    /* the window pays once buckets average two windows (rings of 2M entries and up) */
    if (offsets[RING_BUCKETS] >= (size_t)2 * WINDOW * RING_BUCKETS)
        lookup_many_window(offsets, entries, keys, m, out);
    else
        lookup_many_search(offsets, entries, keys, m, out);
}
