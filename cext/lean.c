/* The lean ring (see lean.h): sorting, de-duplication and arc sums in place.
 *
 * Why not argsort plus gathers: for n points that takes an 8-byte index, a
 * gathered copy of both arrays and boolean masks, about 40 bytes per point
 * for a 32-bit ring (measured: 83 bytes per point for a whole 10M-point run).
 */
#include "lean.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define OWNER_BITS 16
#define DIGIT_BITS 8
#define DIGITS (1u << DIGIT_BITS)
/* The 64-bit sort's threads: its top-digit parts split into at most this many groups. */
#define MAX_SORT_THREADS 64
/* Below this many points insertion sort beats another radix pass's 256-slot histogram. */
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

/* One pass: a point is kept when its owner is in the sub-ring and the last point kept
 * has another position; keeping the highest, a member at the last kept position replaces
 * its owner. About half the points of a sub-ring's fleet are not its own, in no pattern a
 * branch predictor learns, so the pass is branch-free: every point is written at the next
 * free slot and the slot taken only when it is kept: 0.09 s against 0.30 s branching
 * over 20M words of 2,000 owners, half of them in the sub-ring (AMD EPYC). */
size_t ring_sub_split_packed32(const uint64_t *words, size_t n, const uint16_t *sub_index,
                               int keep_highest, uint32_t *positions, uint16_t *owners,
                               size_t capacity)
{
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        uint16_t owner = sub_index[(uint16_t)words[i]];
        uint32_t position = (uint32_t)(words[i] >> OWNER_BITS);
        size_t member = owner != UINT16_MAX;
        size_t repeated = kept > 0 && positions[kept - 1] == position;
        if (keep_highest && kept > 0)
            owners[kept - 1] = member & repeated ? owner : owners[kept - 1];
        size_t take = member & !repeated;
        if (kept < capacity) {
            positions[kept] = position;
            owners[kept] = owner;
        } else if (take) {
            return SIZE_MAX;
        }
        kept += take;
    }
    return kept;
}

/* Digit `level` of the 80-bit key (position, owner), most significant first:
 * levels 0..7 are the position's bytes, 8 and 9 the owner's. */
static inline unsigned digit64(const uint64_t *positions, const uint16_t *owners, size_t i,
                               int level)
{
    if (level < 8)
        return (unsigned)(positions[i] >> (56 - 8 * level)) & (DIGITS - 1);
    return (unsigned)(owners[i] >> (8 * (9 - level))) & (DIGITS - 1);
}

static void insertion_sort_pairs(uint64_t *positions, uint16_t *owners, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        uint64_t p = positions[i];
        uint16_t o = owners[i];
        size_t j = i;
        while (j > 0 && (positions[j - 1] > p || (positions[j - 1] == p && owners[j - 1] > o))) {
            positions[j] = positions[j - 1];
            owners[j] = owners[j - 1];
            j--;
        }
        positions[j] = p;
        owners[j] = o;
    }
}

/* Count digit `level` over n points: ends[d] = end of digit d's part once partitioned;
 * next[d] = its start. */
static void digit_counts(const uint64_t *positions, const uint16_t *owners, size_t n, int level,
                         size_t *next, size_t *ends)
{
    memset(ends, 0, DIGITS * sizeof *ends);
    for (size_t i = 0; i < n; i++)
        ends[digit64(positions, owners, i, level)]++;
    size_t start = 0;
    for (unsigned d = 0; d < DIGITS; d++) {
        next[d] = start;
        start += ends[d];
        ends[d] = start;
    }
}

/* American flag sort's pass: carry each displaced point to its digit's next free slot.
 * 256 write heads a pass stay in cache (one pass on 16 bits, 65,536 heads, missed it
 * on every point). */
static void flag_partition64(uint64_t *positions, uint16_t *owners, size_t n, int level,
                             size_t *ends)
{
    size_t next[DIGITS];
    digit_counts(positions, owners, n, level, next, ends);
    for (unsigned b = 0; b < DIGITS; b++) {
        while (next[b] < ends[b]) {
            size_t i = next[b];
            uint64_t p = positions[i];
            uint16_t o = owners[i];
            unsigned d = digit64(positions, owners, i, level);
            while (d != b) {
                size_t j = next[d]++;
                uint64_t p2 = positions[j];
                uint16_t o2 = owners[j];
                positions[j] = p;
                owners[j] = o;
                p = p2;
                o = o2;
                d = digit64(&p, &o, 0, level);
            }
            positions[i] = p;
            owners[i] = o;
            next[b]++;
        }
    }
}

/* MSD radix sort in place: partition on a digit, then sort each part on the next;
 * parts of a few points are finished by insertion sort. Recursion depth is at most
 * the 10 digits of the key. */
static void flag_sort64(uint64_t *positions, uint16_t *owners, size_t n, int level)
{
    if (n <= INSERTION_SORT_MAX || level == 10) {
        if (n > 1)
            insertion_sort_pairs(positions, owners, n);
        return;
    }
    size_t ends[DIGITS];
    flag_partition64(positions, owners, n, level, ends);
    size_t begin = 0;
    for (unsigned b = 0; b < DIGITS; b++) {
        flag_sort64(positions + begin, owners + begin, ends[b] - begin, level + 1);
        begin = ends[b];
    }
}

/* The parts of the first digit, sorted on the next digits by one thread each. After
 * the first pass the 256 parts share nothing, so they split over cores with no
 * locking; the first pass itself stays on one thread. */
struct sort_parts {
    uint64_t *positions;
    uint16_t *owners;
    const size_t *ends;
    unsigned first, last; /* parts [first, last) */
};

static void *sort_parts64(void *arg)
{
    struct sort_parts *job = arg;
    for (unsigned b = job->first; b < job->last; b++) {
        size_t begin = b ? job->ends[b - 1] : 0;
        flag_sort64(job->positions + begin, job->owners + begin, job->ends[b] - begin, 1);
    }
    return NULL;
}

size_t ring_sort_dedupe64(uint64_t *positions, uint16_t *owners, size_t n, int keep_highest,
                          int threads)
{
    size_t ends[DIGITS];
    if (n <= INSERTION_SORT_MAX) {
        flag_sort64(positions, owners, n, 0);
    } else {
        /* One pass on the top digit here; its 256 parts are then independent. */
        flag_partition64(positions, owners, n, 0, ends);
        struct sort_parts jobs[MAX_SORT_THREADS];
        pthread_t ids[MAX_SORT_THREADS];
        int started[MAX_SORT_THREADS] = {0};
        if (threads < 1)
            threads = 1;
        if (threads > MAX_SORT_THREADS)
            threads = MAX_SORT_THREADS;
        unsigned part = 0;
        for (int t = 0; t < threads; t++) {
            /* thread t's parts end where the points reach (t+1)/threads of n */
            size_t target = n / (size_t)threads * (size_t)(t + 1);
            jobs[t] = (struct sort_parts){positions, owners, ends, part, part};
            while (part < DIGITS && (t == threads - 1 || ends[part] <= target))
                part++;
            jobs[t].last = part;
        }
        for (int t = 1; t < threads; t++)
            started[t] = pthread_create(&ids[t], NULL, sort_parts64, &jobs[t]) == 0;
        sort_parts64(&jobs[0]);
        for (int t = 1; t < threads; t++) {
            if (started[t])
                pthread_join(ids[t], NULL);
            else
                sort_parts64(&jobs[t]); /* no thread to be had: sort them here */
        }
    }
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
