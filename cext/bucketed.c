#include "bucketed.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Keys resolved per block of the search batch lookup (rings under 2**21 entries).
 * Each block runs in three passes (prefetch the bucket offsets, prefetch the guessed
 * entry, search), so the cache misses of a whole block are in flight at once. */
#define LOOKUP_BLOCK 32
/* The windowed batch lookup's parameters are chosen per machine by measurement
 * (harness/recipes/layouts/bucketed_tuning.py): the window's width, the pipeline's
 * depth and how far ahead the offsets are prefetched arrive in a
 * `struct ring_bucketed_tuning`. What they trade, at 10M entries (~150 entries a
 * bucket): the answer is a median 3 and a 99th percentile 14 entries from the guess,
 * so 16 entries decide the answer of about 85% of keys and 32 entries (two or three
 * cache lines) of about 99.5%; the others are finished by a second pass
 * (resolve_misses). A wider window fetches more lines and compares more; a deeper
 * pipeline keeps more misses in flight but holds more keys. On an AMD EPYC (Zen 2),
 * timed by CPU time against one random access at 262,144 keys a call: 16 entries,
 * 32 keys deep, offsets 32 ahead, 1.7x to 1.9x; 24 entries 2.1x, 32 entries 2.1x
 * (a third line costs more than the misses it saves; docs/performance-log.md has
 * the rest); on a Zen 3 the same 16 entries, 1.6x to 1.9x in the harness. Where a
 * window starts is tuned too: centred on the guess, or on a multiple of 8 or 16
 * entries, so that a 16-entry window is one cache line instead of two in 15 cases of
 * 16 (at 10M entries, 1.08 lines a key against 1.94, for one key in 3.5 missing
 * instead of one in 6.7; on the Zen 3, whose memory charges for the second line, 0.61
 * to 0.81 of the centred window's time). On an Intel Xeon the single-pass loop of before was fastest with 32
 * entries. Without
 * a tuning (NULL), the choice by size made on the Xeon: rings of 2**22 entries and
 * more count 32 entries, rings of 2**21 and more 16, smaller rings search (their
 * buckets are too short for a window). */
#define WINDOW 16
#define WIDE_WINDOW 32
#define DEFAULT_DEPTH 16
#define DEFAULT_OFFSETS_AHEAD 32

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

/* First entry of a window of `window` entries: centred on the guess and moved to the
 * nearest multiple of `align` (align - 1 is `align_mask`: a power of two), inside the
 * bucket when the bucket has at least `window` entries, else the bucket's first entry.
 * A window on a multiple of 16 entries is one cache line, where a centred one of 16
 * spans two in 15 cases of 16: fewer lines a key, for more keys whose answer lies
 * beside their window (the second pass finishes those). */
static inline size_t window_start(size_t lo, size_t hi, size_t guess, size_t window,
                                  size_t align_mask)
{
    if (hi - lo <= window)
        return lo;
    size_t start = guess > lo + window / 2 ? guess - window / 2 : lo;
    start = (start + (align_mask + 1) / 2) & ~align_mask;
    start = start < lo ? lo : start;
    return start + window > hi ? hi - window : start;
}

/* How many of the `window` entries from `first` have a low below key_low, for entries
 * sorted by low (one bucket), with no branch per entry (`window` is 8, 16, 24, 32, 48 or
 * 64, a constant where this is inlined). With SSE2 (every x86-64), four entries per
 * compare: an entry is one 32-bit lane, its low the lane's bottom half, so masking off
 * idx leaves a non-negative int32 that a signed compare orders correctly; the compares
 * are packed to one byte an entry and gathered into a bit mask, whose run of ones from
 * bit 0 is the count (the entries below come first). */
static inline size_t count_below(const struct ring_bucket_entry *first, uint16_t key_low,
                                 size_t window)
{
#if defined(__SSE2__)
    const __m128i low_mask = _mm_set1_epi32(0xFFFF), key = _mm_set1_epi32(key_low);
    const __m128i *lanes = (const __m128i *)(const void *)first;
    uint64_t below = 0;
#define BELOW(j) _mm_cmpgt_epi32(key, _mm_and_si128(_mm_loadu_si128(lanes + (j)), low_mask))
#define EIGHT(j) _mm_packs_epi32(BELOW(j), BELOW((j) + 1))
    for (size_t group = 0; group < window / 16; group++) {
        __m128i bytes = _mm_packs_epi16(EIGHT(4 * group), EIGHT(4 * group + 2));
        below |= (uint64_t)(uint32_t)_mm_movemask_epi8(bytes) << (16 * group);
    }
    if (window % 16) {
        __m128i bytes = _mm_packs_epi16(EIGHT(window / 4 - 2), _mm_setzero_si128());
        below |= (uint64_t)(uint32_t)_mm_movemask_epi8(bytes) << (window - 8);
    }
#undef EIGHT
#undef BELOW
    /* a 64-entry window all below has no zero bit to find */
    return window == 64 && below == UINT64_MAX ? 64 : (size_t)__builtin_ctzll(~below);
#else
    size_t below = 0;
    for (size_t j = 0; j < window; j++)
        below += first[j].low < key_low;
    return below;
#endif
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

/* What the pipeline keeps of a key between reading its offsets and counting its
 * window, 8 bytes (32 keys in flight take four cache lines): where the window starts,
 * and the key's low 16 bits, or 0 for a bucket shorter than two windows, so that its
 * window counts no entry below and misses. */
struct pending_key {
    uint32_t start;
    uint32_t key_low;
};

/* A key whose window missed, kept for the second pass: its index in the batch and its
 * window's first entry. */
struct missed_key {
    uint32_t key, start;
};

/* Misses kept before a second pass runs over them (2 KiB of stack), and how many
 * misses ahead that pass prefetches the window it will count. */
#define MISSES_KEPT 256
#define MISSES_AHEAD 32

/* Whether a miss's answer lies before its window: the window's first entry is at or
 * above the key (else the answer lies after it). */
static inline size_t answer_before(const struct ring_bucket_entry *entries, size_t start,
                                   uint16_t key_low)
{
    return entries[start].low >= key_low;
}

/* All ones for 1, zero for 0: picks between two values by masks. The side a miss's
 * answer lies on is a coin toss, and written as `side ? before : after` gcc compiled
 * the choice to a branch, mispredicted on half the misses: at 10M entries on an AMD
 * EPYC (Zen 3) the masks made the whole batch 9% faster (paired medians 0.87 to 0.96
 * over four runs), and the second pass went from about a third of the first's time to
 * about a sixth. */
static inline size_t select_mask(size_t bit) { return (size_t)0 - bit; }

/* Prefetches the window beside a miss's window, on the side its answer lies. A
 * prefetch never faults, but forming a pointer outside the array is undefined
 * behaviour (and UBSan reports one that wraps), so the window is kept inside the
 * entries: the ring has at least 2 * window entries and start <= n - window. */
static inline void prefetch_beside(const struct ring_bucket_entry *entries, size_t n,
                                   const uint32_t *keys, const struct missed_key *miss,
                                   size_t window)
{
    size_t start = miss->start, before = start >= window ? start - window : 0;
    size_t after = start + 2 * window <= n ? start + window : n - window;
    size_t choose = select_mask(answer_before(entries, start, (uint16_t)keys[miss->key]));
    size_t beside = (before & choose) | (after & ~choose);
    __builtin_prefetch(&entries[beside]);
    __builtin_prefetch(&entries[beside + window - 1]);
}

/* The second pass over the keys whose window missed. The window beside each miss's
 * window, on the side its answer lies and inside its bucket, is counted and judged with
 * no branch: on hash data it holds the answer of all but about 2 keys in 10,000 (16
 * entries at 10M), which the search from the guess decides, as it decides the keys of
 * buckets shorter than two windows. The window beside is prefetched MISSES_AHEAD misses
 * ahead, so a pass over a few hundred misses keeps their memory accesses in flight
 * together, as the first pass does. */
static inline __attribute__((always_inline)) void resolve_misses(
    const uint32_t *offsets, const struct ring_bucket_entry *entries, const uint32_t *keys,
    uint16_t *out, const struct missed_key *misses, size_t count, size_t window)
{
    size_t n = offsets[RING_BUCKETS];
    for (size_t j = 0; j < count && j < MISSES_AHEAD; j++)
        prefetch_beside(entries, n, keys, &misses[j], window);
    for (size_t j = 0; j < count; j++) {
        if (j + MISSES_AHEAD < count)
            prefetch_beside(entries, n, keys, &misses[j + MISSES_AHEAD], window);
        uint32_t key = keys[misses[j].key];
        uint16_t key_low = (uint16_t)key;
        uint32_t b = key >> RING_BUCKET_BITS;
        size_t lo = offsets[b], hi = offsets[b + 1], start = misses[j].start, i = 0;
        size_t found = 0; /* by the window beside; else (or in a short bucket) the search */
        if (__builtin_expect(hi - lo >= 2 * window, 1)) {
            size_t before = start >= lo + window ? start - window : lo;
            size_t after = start + 2 * window <= hi ? start + window : hi - window;
            size_t choose = select_mask(answer_before(entries, start, key_low));
            size_t beside = (before & choose) | (after & ~choose);
            size_t below = count_below(entries + beside, key_low, window);
            /* The entry past the second window's far side is known (the first window's
             * first entry, at or above the key; or its last, below it), so only the near
             * side can miss. */
            size_t fits_before = (below > 0) | (beside == lo);
            size_t fits_after = (below < window) | (beside + window == hi);
            found = (fits_before & choose) | (fits_after & ~choose);
            i = beside + below;
        }
        if (__builtin_expect(!found, 0))
            i = search_bucket(entries, lo, hi, guess_index(lo, hi, key_low), key_low);
        out[misses[j].key] = entries[i == n ? 0 : i].idx;
    }
}

/* The first pass's first stage for key `key`: reads its bucket's offsets, places its
 * window (moved inside the entries for a short bucket at the end: that key misses
 * anyway: `last_start` is the ring's last window) and prefetches the window's lines. */
static inline __attribute__((always_inline)) void place_window(
    const uint32_t *offsets, const struct ring_bucket_entry *entries, uint32_t key,
    struct pending_key *slot, size_t last_start, size_t window, size_t align_mask)
{
    uint32_t b = key >> RING_BUCKET_BITS;
    size_t lo = offsets[b], hi = offsets[b + 1];
    size_t start = window_start(lo, hi, guess_index(lo, hi, (uint16_t)key), window,
                                align_mask);
    start = start < last_start ? start : last_start;
    slot->start = (uint32_t)start;
    slot->key_low = hi - lo >= 2 * window ? (uint16_t)key : 0;
    for (size_t line = 0; line < window; line += 16) /* 16 entries a line */
        __builtin_prefetch(&entries[start + line]);
    __builtin_prefetch(&entries[start + window - 1]);
}

/* The first pass's second stage for key `k`: counts its window, writes the entry there
 * as its answer and appends the key to the miss list, which grows only if the count is
 * not inside the window (0 or `window`: the answer may lie beside it). An inside count
 * is the answer: entries below the key and entries at or above it are both in the
 * window, and so in one bucket. Returns the list's new length. */
static inline __attribute__((always_inline)) size_t count_window(
    const struct ring_bucket_entry *entries, struct pending_key pending, size_t k,
    uint16_t *out, struct missed_key *misses, size_t missed, size_t window)
{
    size_t below = count_below(entries + pending.start, (uint16_t)pending.key_low, window);
    /* at the last entry for a count of `window`, a miss: inside the entries */
    out[k] = entries[pending.start + (below < window ? below : window - 1)].idx;
    misses[missed].key = (uint32_t)k;
    misses[missed].start = pending.start;
    return missed + (below - 1 >= window - 1);
}

/* The batch lookup with a window of `window` entries, in two passes. The first is a
 * rolling pipeline: step i counts the window of key i - depth, reads the offsets of key
 * i and prefetches its window, and prefetches the offsets of key i + offsets_ahead, so
 * each key's window arrives while the keys before it are counted, with no block
 * boundary where the misses in flight drain. It runs as three loops (filling, full,
 * draining) so that the full one tests nothing but its end. Counting a window and
 * judging it take no branch: every key's count is written as its answer, and every key
 * is appended to the miss list, whose length grows only by a miss, so a miss (about one
 * key in seven at 16 entries on hash data) costs no mispredicted branch and no search
 * in the first pass; the second pass (resolve_misses) overwrites the answers of the
 * misses, each time the list fills and at the end.
 *
 * Measured at 10M entries on an AMD EPYC (Zen 2), by thread CPU time against one
 * random access, interleaved: the single pass that searched each miss where it found
 * it (its branch mispredicted on those keys, and its search read lines nobody had
 * prefetched) ran at 2.2x to 2.4x; two passes with a hit test against bounds kept in
 * the slot, a count summed across lanes and one loop testing both stages, 1.9x to
 * 2.1x; these, 1.7x to 1.9x. Of that, the first pass alone, with no miss resolved,
 * takes 1.4x (1.4x to 1.7x on a Zen 3, whose memory charges more for a second line).
 * docs/performance-log.md has the whole story.
 *
 * `depth` is a power of two (a slot is i & (depth - 1)). Always inlined into a caller
 * per width: with `window` a run-time value each key tested the width. The caller
 * ensures the ring has at least 2 * window entries, so every window read is inside the
 * entries. */
static inline __attribute__((always_inline)) void lookup_many_window(
    const uint32_t *offsets, const struct ring_bucket_entry *entries, const uint32_t *keys,
    size_t m, uint16_t *out, size_t window, size_t depth, size_t offsets_ahead, size_t align)
{
    size_t align_mask = align - 1;
    struct pending_key pending[RING_BUCKETED_MAX_DEPTH];
    struct missed_key misses[MISSES_KEPT];
    size_t missed = 0, slot_mask = depth - 1, filled = m < depth ? m : depth, i = 0;
    size_t last_start = offsets[RING_BUCKETS] - window;
#define OFFSETS_AHEAD(i)                                                                     \
    do {                                                                                     \
        if ((i) + offsets_ahead < m)                                                         \
            __builtin_prefetch(&offsets[keys[(i) + offsets_ahead] >> RING_BUCKET_BITS]);     \
    } while (0)
#define COUNT(k)                                                                             \
    do {                                                                                     \
        missed = count_window(entries, pending[(k) & slot_mask], (k), out, misses, missed,   \
                              window);                                                       \
        if (__builtin_expect(missed == MISSES_KEPT, 0)) {                                    \
            resolve_misses(offsets, entries, keys, out, misses, missed, window);             \
            missed = 0;                                                                      \
        }                                                                                    \
    } while (0)
    for (size_t j = 0; j < m && j < offsets_ahead; j++)
        __builtin_prefetch(&offsets[keys[j] >> RING_BUCKET_BITS]);
    for (; i < filled; i++) {
        place_window(offsets, entries, keys[i], &pending[i], last_start, window, align_mask);
        OFFSETS_AHEAD(i);
    }
    /* full: the offsets ahead are inside the keys */
    for (; i + offsets_ahead < m; i++) {
        COUNT(i - depth);
        place_window(offsets, entries, keys[i], &pending[i & slot_mask], last_start, window,
                     align_mask);
        __builtin_prefetch(&offsets[keys[i + offsets_ahead] >> RING_BUCKET_BITS]);
    }
    for (; i < m; i++) {
        COUNT(i - depth);
        place_window(offsets, entries, keys[i], &pending[i & slot_mask], last_start, window,
                     align_mask);
    }
    for (size_t k = i - filled; k < m; k++)
        COUNT(k);
#undef COUNT
#undef OFFSETS_AHEAD
    resolve_misses(offsets, entries, keys, out, misses, missed, window);
}

#define WINDOWED(width)                                                                      \
    static void lookup_many_window##width(                                                   \
        const uint32_t *offsets, const struct ring_bucket_entry *entries,                    \
        const uint32_t *keys, size_t m, uint16_t *out, size_t depth, size_t offsets_ahead,   \
        size_t align)                                                                        \
    {                                                                                        \
        lookup_many_window(offsets, entries, keys, m, out, width, depth, offsets_ahead,      \
                           align);                                                           \
    }
WINDOWED(8)
WINDOWED(16)
WINDOWED(24)
WINDOWED(32)
WINDOWED(48)
WINDOWED(64)
#undef WINDOWED

static int is_power_of_two(uint32_t x) { return x != 0 && (x & (x - 1)) == 0; }

int ring_bucketed_tuning_valid(const struct ring_bucketed_tuning *tuning)
{
    if (tuning->window == 0)
        return 1; /* the search: depth, distance and alignment unused */
    return (tuning->window == 8 || tuning->window == 16 || tuning->window == 24
            || tuning->window == 32 || tuning->window == 48 || tuning->window == 64)
           && is_power_of_two(tuning->depth) && tuning->depth <= RING_BUCKETED_MAX_DEPTH
           && tuning->offsets_ahead >= 1 && tuning->offsets_ahead <= RING_BUCKETED_MAX_AHEAD
           && (tuning->align == 1 || tuning->align == 8 || tuning->align == 16)
           && tuning->align <= tuning->window;
}

struct ring_bucketed_tuning ring_bucketed_default_tuning(size_t n)
{
    /* a window pays once buckets average two windows (16 entries: rings of 2M entries
     * and up, 32 entries: 4M and up), as measured on the Xeon */
    struct ring_bucketed_tuning tuning = {0, DEFAULT_DEPTH, DEFAULT_OFFSETS_AHEAD, 1};
    if (n >= (size_t)2 * WIDE_WINDOW * RING_BUCKETS)
        tuning.window = WIDE_WINDOW;
    else if (n >= (size_t)2 * WINDOW * RING_BUCKETS)
        tuning.window = WINDOW;
    return tuning;
}

int ring_bucketed_lookup_many(const uint32_t *offsets, const struct ring_bucket_entry *entries,
                              const uint32_t *keys, size_t m, uint16_t *out,
                              const struct ring_bucketed_tuning *tuning)
{
    struct ring_bucketed_tuning chosen =
        tuning ? *tuning : ring_bucketed_default_tuning(offsets[RING_BUCKETS]);
    if (!ring_bucketed_tuning_valid(&chosen))
        return -1;
    /* a ring shorter than two windows has no bucket a window pays in (and a window
     * there could read past the entries) */
    if ((size_t)offsets[RING_BUCKETS] < 2 * (size_t)chosen.window)
        chosen.window = 0;
#define WINDOW_CASE(width)                                                                   \
    case width:                                                                              \
        lookup_many_window##width(offsets, entries, keys, m, out, chosen.depth,              \
                                  chosen.offsets_ahead, chosen.align);                       \
        break
    switch (chosen.window) {
    case 0:
        lookup_many_search(offsets, entries, keys, m, out);
        break;
    WINDOW_CASE(8);
    WINDOW_CASE(16);
    WINDOW_CASE(24);
    WINDOW_CASE(32);
    WINDOW_CASE(48);
    default:
        lookup_many_window64(offsets, entries, keys, m, out, chosen.depth,
                             chosen.offsets_ahead, chosen.align);
        break;
    }
#undef WINDOW_CASE
    return 0;
}
