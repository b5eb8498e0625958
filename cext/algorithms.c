/* Jump, Maglev, multi-probe, rendezvous (plain and weighted) and bounded-load lookups (see
 * algorithms.h for what each matches). */
#include "algorithms.h"

#include "hashes.h"

#include <math.h>
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#endif
#include <stdlib.h>
#include <string.h>

/* ---- jump: the paper's loop, in the paper's arithmetic (64-bit LCG, double division) ---- */

uint16_t jump_bucket(uint64_t key, uint32_t buckets)
{
    int64_t b = -1, j = 0;
    while (j < (int64_t)buckets) {
        b = j;
        key = key * 2862933555777941757ULL + 1;
        j = (int64_t)((double)(b + 1) * ((double)(1LL << 31) / (double)((key >> 33) + 1)));
    }
    return (uint16_t)b;
}

/* Keys are jumped JUMP_LANES at a time: one key's steps form a chain of
 * dependent double divisions, so interleaving independent keys keeps the
 * divider busy instead of waiting on each result. A lane whose key has landed
 * takes the next key at once, so no lane waits for the slowest of a group.
 * Which lanes land in a round is random, so the steady state decides it with
 * masks rather than branches (a branch per lane per round mispredicted about
 * once a key); it runs while every lane can still take a key, and the last
 * keys in flight finish one by one. Each step is jump_bucket's expression,
 * operation for operation (a product of a quotient: nothing to contract into
 * an FMA), so every bucket is the scalar one. */
#define JUMP_LANES 8

static inline uint16_t jump_from(uint64_t key, int64_t b, int64_t j, uint32_t buckets)
{
    while (j < (int64_t)buckets) {
        b = j;
        key = key * 2862933555777941757ULL + 1;
        j = (int64_t)((double)(b + 1) * ((double)(1LL << 31) / (double)((key >> 33) + 1)));
    }
    return (uint16_t)b;
}

void jump_many_portable(const uint64_t *keys, size_t count, uint32_t buckets,
                               uint16_t *out)
{
    if (count < JUMP_LANES) {
        for (size_t i = 0; i < count; i++)
            out[i] = jump_bucket(keys[i], buckets);
        return;
    }
    uint64_t key[JUMP_LANES];
    int64_t b[JUMP_LANES], j[JUMP_LANES];
    size_t which[JUMP_LANES], next = JUMP_LANES;
    for (int l = 0; l < JUMP_LANES; l++) {
        key[l] = keys[l];
        b[l] = -1;
        j[l] = 0;
        which[l] = (size_t)l;
    }
    /* At most JUMP_LANES keys are taken per round: keys[next] stays in bounds. */
    while (next + JUMP_LANES <= count) {
        for (int l = 0; l < JUMP_LANES; l++) {
            /* all ones when lane l has landed: it takes keys[next] from j = 0 */
            uint64_t landed = (uint64_t)0 - (uint64_t)(j[l] >= (int64_t)buckets);
            key[l] = (keys[next] & landed) | (key[l] & ~landed);
            which[l] = ((size_t)next & (size_t)landed) | (which[l] & ~(size_t)landed);
            j[l] &= (int64_t)~landed;
            next += (size_t)(landed & 1);
            b[l] = j[l];
            key[l] = key[l] * 2862933555777941757ULL + 1;
            j[l] = (int64_t)((double)(b[l] + 1) *
                             ((double)(1LL << 31) / (double)((key[l] >> 33) + 1)));
            /* the bucket so far; the last write, on landing, is the answer */
            out[which[l]] = (uint16_t)b[l];
        }
    }
    for (int l = 0; l < JUMP_LANES; l++)
        out[which[l]] = jump_from(key[l], b[l], j[l], buckets);
    for (; next < count; next++)
        out[next] = jump_bucket(keys[next], buckets);
}

#if defined(__GNUC__) && defined(__x86_64__)
/* The same lanes as jump_many_portable, eight to an AVX-512 register and
 * JUMP_VECTORS registers side by side: one register's step is a long chain
 * (64-bit multiply, conversions, division), so independent registers fill the
 * divider, which takes eight divisions at about the cost of two scalar ones.
 * A landed lane takes the next key by a masked expand-load. Every operation
 * is the scalar one lane by lane (vpmullq keeps the low 64 bits as the scalar
 * multiply; the conversions are exact below 2**53; vdivpd and vmulpd round
 * as divsd and mulsd, no FMA), so every bucket is jump_bucket's. */
#define JUMP_VECTORS 4

__attribute__((target("avx512f,avx512dq")))
static void jump_many_avx512(const uint64_t *keys, size_t count, uint32_t buckets,
                             uint16_t *out)
{
    const __m512i mult = _mm512_set1_epi64((long long)2862933555777941757ULL);
    const __m512i one = _mm512_set1_epi64(1);
    const __m512i vbuckets = _mm512_set1_epi64((long long)buckets);
    const __m512d two31 = _mm512_set1_pd((double)(1LL << 31));
    const __m512i iota = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    __m512i key[JUMP_VECTORS], which[JUMP_VECTORS], j[JUMP_VECTORS], b[JUMP_VECTORS];
    for (int v = 0; v < JUMP_VECTORS; v++) {
        key[v] = _mm512_loadu_si512((const void *)(keys + 8 * v));
        which[v] = _mm512_add_epi64(iota, _mm512_set1_epi64(8 * v));
        j[v] = _mm512_setzero_si512();
        b[v] = _mm512_set1_epi64(-1);
    }
    size_t next = 8 * JUMP_VECTORS;
    int64_t lane_which[8];
    uint16_t lane_b[8];
    /* At most 8 * JUMP_VECTORS keys are taken per round: the loads stay in bounds. */
    while (next + 8 * JUMP_VECTORS <= count) {
        for (int v = 0; v < JUMP_VECTORS; v++) {
            __mmask8 landed = _mm512_cmpge_epi64_mask(j[v], vbuckets);
            key[v] = _mm512_mask_expandloadu_epi64(key[v], landed, (const void *)(keys + next));
            which[v] = _mm512_mask_expand_epi64(
                which[v], landed, _mm512_add_epi64(iota, _mm512_set1_epi64((long long)next)));
            j[v] = _mm512_mask_mov_epi64(j[v], landed, _mm512_setzero_si512());
            next += (size_t)__builtin_popcount((unsigned)landed);
            b[v] = j[v];
            key[v] = _mm512_add_epi64(_mm512_mullo_epi64(key[v], mult), one);
            __m512d x = _mm512_cvtepi64_pd(_mm512_add_epi64(_mm512_srli_epi64(key[v], 33), one));
            __m512d q = _mm512_div_pd(two31, x);
            j[v] = _mm512_cvttpd_epi64(
                _mm512_mul_pd(_mm512_cvtepi64_pd(_mm512_add_epi64(b[v], one)), q));
            /* the bucket so far; the last write, on landing, is the answer */
            _mm512_storeu_si512((void *)lane_which, which[v]);
            _mm_storeu_si128((__m128i *)lane_b, _mm512_cvtepi64_epi16(b[v]));
            for (int l = 0; l < 8; l++)
                out[lane_which[l]] = lane_b[l];
        }
    }
    for (int v = 0; v < JUMP_VECTORS; v++) {
        uint64_t lane_key[8];
        int64_t lane_b64[8], lane_j[8];
        _mm512_storeu_si512((void *)lane_key, key[v]);
        _mm512_storeu_si512((void *)lane_b64, b[v]);
        _mm512_storeu_si512((void *)lane_j, j[v]);
        _mm512_storeu_si512((void *)lane_which, which[v]);
        for (int l = 0; l < 8; l++)
            out[lane_which[l]] = jump_from(lane_key[l], lane_b64[l], lane_j[l], buckets);
    }
    for (; next < count; next++)
        out[next] = jump_bucket(keys[next], buckets);
}
#endif

void jump_many(const uint64_t *keys, size_t count, uint32_t buckets, uint16_t *out)
{
#if defined(__GNUC__) && defined(__x86_64__)
    if (count >= 16 * JUMP_VECTORS && __builtin_cpu_supports("avx512f") &&
        __builtin_cpu_supports("avx512dq")) {
        jump_many_avx512(keys, count, buckets, out);
        return;
    }
#endif
    jump_many_portable(keys, count, buckets, out);
}

/* ---- Maglev: Envoy's OriginalMaglevTable::constructImplementationInternals ----
 * In round `iteration` (from 1) a host takes its next free slot when
 * iteration * weight >= its target, and its target then grows by the largest
 * weight: a host of the largest weight takes a slot every round. */

int maglev_fill(const uint64_t *offsets, const uint64_t *skips, const double *weights,
                const uint16_t *owner, size_t hosts, double max_weight, uint64_t table_size,
                uint16_t *table)
{
    uint64_t *next = calloc(hosts, sizeof *next);
    double *target = calloc(hosts, sizeof *target);
    unsigned char *taken = calloc(table_size, 1);
    if (next == NULL || target == NULL || taken == NULL) {
        free(next);
        free(target);
        free(taken);
        return -1;
    }
    uint64_t filled = 0;
    for (uint32_t iteration = 1; filled < table_size; ++iteration) {
        for (size_t i = 0; i < hosts && filled < table_size; i++) {
            if ((double)iteration * weights[i] < target[i])
                continue;
            target[i] += max_weight;
            uint64_t c = (offsets[i] + skips[i] * next[i]) % table_size;
            while (taken[c]) {
                next[i]++;
                c = (offsets[i] + skips[i] * next[i]) % table_size;
            }
            taken[c] = 1;
            table[c] = owner[i];
            next[i]++;
            filled++;
        }
    }
    free(next);
    free(target);
    free(taken);
    return 0;
}

uint16_t maglev_lookup(const uint16_t *table, uint64_t table_size, uint64_t key)
{
    return table[key % table_size];
}

void maglev_lookup_many(const uint16_t *table, uint64_t table_size, const uint64_t *keys,
                        size_t count, uint16_t *out)
{
    for (size_t i = 0; i < count; i++)
        out[i] = table[keys[i] % table_size];
}

/* ---- multi-probe: go-mpchash's Multi.Hash over one sorted array of points ---- */

uint16_t multiprobe_lookup(const uint64_t *points, const uint16_t *owner, size_t n,
                           const uint64_t *seeds, size_t probes, uint64_t key)
{
    uint64_t best_distance = UINT64_MAX;
    size_t best = 0;
    for (size_t s = 0; s < probes; s++) {
        uint64_t probe = xxh64_of_u64(key, seeds[s]);
        /* First point > probe, by a branchless halving (probes are random, so a
         * branch per step would be mispredicted half the time). */
        const uint64_t *base = points;
        size_t len = n;
        while (len > 1) {
            size_t half = len / 2;
            base = base[half - 1] <= probe ? base + half : base;
            len -= half;
        }
        size_t at = (size_t)(base - points) + (*base <= probe);
        at = at == n ? 0 : at;
        uint64_t distance = points[at] - probe;
        if (distance < best_distance) {
            best_distance = distance;
            best = at;
        }
    }
    return owner[best];
}

void multiprobe_lookup_many(const uint64_t *points, const uint16_t *owner, size_t n,
                            const uint64_t *seeds, size_t probes, const uint64_t *keys,
                            size_t count, uint16_t *out)
{
    for (size_t i = 0; i < count; i++)
        out[i] = multiprobe_lookup(points, owner, n, seeds, probes, keys[i]);
}

/* ---- rendezvous over MurmurHash3_x86_32 (its pieces are in hashes.h) ---- */

void rendezvous_prepare(struct rendezvous_node *node, const char *text, size_t length,
                        uint32_t rank)
{
    const uint8_t *prefix = (const uint8_t *)text;
    uint32_t h1 = 0;
    size_t blocks = length / 4 * 4;
    for (size_t i = 0; i < blocks; i += 4)
        h1 = mix_block(h1, load_le32(prefix + i));
    node->state = h1;
    node->prefix_len = (uint32_t)length;
    node->rank = rank;
    node->tail_len = (uint8_t)(length - blocks);
    memset(node->tail, 0, sizeof node->tail);
    memcpy(node->tail, prefix + blocks, length - blocks);
}

uint32_t rendezvous_score(const struct rendezvous_node *node, const char *text, size_t length)
{
    const uint8_t *key = (const uint8_t *)text;
    uint32_t h1 = node->state;
    uint8_t head[4];
    size_t pending = node->tail_len, used = 0;
    if (pending) {
        /* Complete the block the prefix left open with the key's first bytes. */
        used = 4 - pending < length ? 4 - pending : length;
        memcpy(head, node->tail, pending);
        memcpy(head + pending, key, used);
        pending += used;
        if (pending < 4) /* the key ended inside that block */
            return murmur_finish(h1, head, pending, node->prefix_len + (uint32_t)length);
        h1 = mix_block(h1, load_le32(head));
    }
    size_t blocks_end = used + (length - used) / 4 * 4;
    for (size_t i = used; i < blocks_end; i += 4)
        h1 = mix_block(h1, load_le32(key + i));
    return murmur_finish(h1, key + blocks_end, length - blocks_end,
                         node->prefix_len + (uint32_t)length);
}

/* A key's share of every score, worked out once per key. A node's prefix ends
 * `tail_len` (0 to 3) bytes into a block, so the key's blocks after the first
 * one depend only on tail_len: for each of the four, the key's whole blocks are
 * mixed (mix_k1) here, and each node only chains them into its own state. */
#define PREPARED_MAX_BLOCKS 64 /* keys up to 256 bytes; longer ones are scored plainly */

struct prepared_alignment {
    uint32_t head;  /* the key's first 4 - t bytes, placed after the node's t bytes */
    uint32_t tail;  /* mix_k1 of the last 1 to 3 bytes, if any */
    uint32_t has_tail;
    size_t blocks;
    uint32_t mixed[PREPARED_MAX_BLOCKS];
};

static int prepare_key(struct prepared_alignment at[4], const uint8_t *key, size_t length)
{
    if (length / 4 > PREPARED_MAX_BLOCKS)
        return 0;
    for (size_t t = 0; t < 4; t++) {
        size_t start = t ? 4 - t : 0;
        struct prepared_alignment *a = &at[t];
        a->head = 0;
        if (t) {
            if (length < start) { /* the key ends inside the node's open block */
                a->blocks = SIZE_MAX;
                continue;
            }
            for (size_t j = 0; j < start; j++)
                a->head |= (uint32_t)key[j] << (8 * (t + j));
        }
        size_t rest = length - start;
        a->blocks = rest / 4;
        for (size_t b = 0; b < a->blocks; b++)
            a->mixed[b] = mix_k1(load_le32(key + start + 4 * b));
        size_t tail_len = rest - 4 * a->blocks;
        const uint8_t *tail = key + start + 4 * a->blocks;
        uint32_t k1 = 0;
        if (tail_len >= 3)
            k1 ^= (uint32_t)tail[2] << 16;
        if (tail_len >= 2)
            k1 ^= (uint32_t)tail[1] << 8;
        if (tail_len >= 1)
            k1 ^= tail[0];
        a->has_tail = tail_len > 0;
        a->tail = a->has_tail ? mix_k1(k1) : 0;
    }
    return 1;
}

static inline uint32_t score_prepared(const struct rendezvous_node *node,
                                      const struct prepared_alignment at[4], const char *key,
                                      size_t length)
{
    const struct prepared_alignment *a = &at[node->tail_len];
    if (a->blocks == SIZE_MAX)
        return rendezvous_score(node, key, length);
    uint32_t h1 = node->state;
    if (node->tail_len) {
        uint32_t head = a->head;
        for (int i = 0; i < node->tail_len; i++)
            head |= (uint32_t)node->tail[i] << (8 * i);
        h1 = mix_block(h1, head);
    }
    for (size_t b = 0; b < a->blocks; b++) {
        h1 ^= a->mixed[b];
        h1 = rotl32(h1, 13);
        h1 = h1 * 5 + 0xe6546b64u;
    }
    if (a->has_tail)
        h1 ^= a->tail;
    h1 ^= node->prefix_len + (uint32_t)length;
    h1 ^= h1 >> 16;
    h1 *= 0x85ebca6bu;
    h1 ^= h1 >> 13;
    h1 *= 0xc2b2ae35u;
    h1 ^= h1 >> 16;
    return h1;
}

uint16_t rendezvous_pick(const struct rendezvous_node *nodes, size_t count, const char *key,
                         size_t length)
{
    struct prepared_alignment at[4];
    int prepared = prepare_key(at, (const uint8_t *)key, length);
    size_t winner = 0;
    uint32_t best = 0;
    for (size_t i = 0; i < count; i++) {
        uint32_t score = prepared ? score_prepared(&nodes[i], at, key, length)
                                  : rendezvous_score(&nodes[i], key, length);
        if (i == 0 || score > best || (score == best && nodes[i].rank > nodes[winner].rank)) {
            best = score;
            winner = i;
        }
    }
    return (uint16_t)winner;
}

void rendezvous_pick_many(const struct rendezvous_node *nodes, size_t count,
                          const char *data, const uint64_t *offsets, const uint64_t *indexes,
                          size_t keys, uint16_t *out)
{
    for (size_t k = 0; k < keys; k++) {
        uint64_t i = indexes[k];
        out[k] = rendezvous_pick(nodes, count, data + offsets[i],
                                 (size_t)(offsets[i + 1] - offsets[i]));
    }
}

/* ---- Consistent hashing with bounded loads, HAProxy's rule (see algorithms.h) ---- */

/* chash_server_is_eligible, with the per-request part (tot_slots and its split
 * by total weight) worked out once per request rather than once per server
 * looked at. HAProxy computes in 32-bit unsigned arithmetic; 64 bits here, so
 * that a long replay of requests that never finish does not wrap. */
struct bounded_request {
    uint64_t per_weight;
    uint64_t remainder;
};

static inline struct bounded_request bounded_request_of(const struct bounded_ring *ring,
                                                        uint64_t served)
{
    uint64_t tot_slots = ((served + 1) * ring->factor + 99) / 100;
    struct bounded_request r = {tot_slots / ring->total_weight, tot_slots % ring->total_weight};
    return r;
}

static inline int bounded_eligible(const struct bounded_ring *ring, const uint64_t *loads,
                                   struct bounded_request r, uint16_t s)
{
    uint64_t w = ring->weights[s], c = ring->cumulative[s], total = ring->total_weight;
    uint64_t slots = w * r.per_weight + ((c + w) * r.remainder) / total
                     - (c * r.remainder) / total;
    if (slots == 0)
        slots = 1;
    return loads[s] < slots;
}

/* From the first point at or after the key (wrapping), the first point whose server is
 * eligible. A full lap without one cannot happen while every server holds a point (the
 * slots add up to more than the requests served); should a server have lost every
 * point to collisions, the request goes to the plain ring's owner. */
static inline uint16_t bounded_walk(const struct bounded_ring *ring, const uint64_t *loads,
                                    uint64_t served, size_t start)
{
    struct bounded_request r = bounded_request_of(ring, served);
    size_t at = start;
    for (size_t step = 0; step < ring->points; step++) {
        uint16_t s = ring->owners[at];
        if (bounded_eligible(ring, loads, r, s))
            return s;
        if (++at == ring->points)
            at = 0;
    }
    return ring->owners[start];
}

#define BOUNDED_FUNCTIONS(bits, type)                                                       \
    static inline size_t bounded_start##bits(const type *positions, size_t n, type key)     \
    {                                                                                       \
        size_t lo = 0, hi = n;                                                              \
        while (lo < hi) {                                                                   \
            size_t mid = lo + (hi - lo) / 2;                                                \
            if (positions[mid] < key)                                                       \
                lo = mid + 1;                                                               \
            else                                                                            \
                hi = mid;                                                                   \
        }                                                                                   \
        return lo == n ? 0 : lo;                                                            \
    }                                                                                       \
                                                                                            \
    uint16_t bounded_next##bits(const struct bounded_ring *ring, uint64_t *loads,           \
                                uint64_t *served, type key)                                 \
    {                                                                                       \
        size_t start = bounded_start##bits((const type *)ring->positions, ring->points, key); \
        uint16_t s = bounded_walk(ring, loads, *served, start);                             \
        loads[s]++;                                                                         \
        (*served)++;                                                                        \
        return s;                                                                           \
    }                                                                                       \
                                                                                            \
    void bounded_route##bits(const struct bounded_ring *ring, uint64_t *loads,              \
                             uint64_t *served, const type *keys, size_t count,              \
                             uint16_t *out)                                                 \
    {                                                                                       \
        for (size_t i = 0; i < count; i++)                                                  \
            out[i] = bounded_next##bits(ring, loads, served, keys[i]);                      \
    }

BOUNDED_FUNCTIONS(32, uint32_t)
BOUNDED_FUNCTIONS(64, uint64_t)

/* ---- Weighted rendezvous over MurmurHash64A and hash128to64 (hashes.h) ----
 * As facebook/mcrouter computes it: mcrouter/lib/WeightedRendezvousHashFunc.cpp with
 * mcrouter/lib/RendezvousHashHelper.h (convertInt64ToDouble01). */

#define FIFTY_THREE_ONES (0xFFFFFFFFFFFFFFFFULL >> (64 - 53))

double wrendezvous_score(double weight, uint64_t server_hash, uint64_t key_hash)
{
    /* convertInt64ToDouble01: the low 53 bits over 2**53, exact in a double, in [0, 1).
     * u == 0 needs no case of its own: -log(0) is +inf and 1/inf is 0, as in mcrouter. */
    double u = (double)(hash128to64(server_hash, key_hash) & FIFTY_THREE_ONES) /
               (double)(1ULL << 53);
    /* mcrouter's exact expression and order: weight * (1.0 / (-log(u))). Another order
     * (weight / -log(u)) can round differently and so flip a near tie. */
    return weight * (1.0 / (-log(u)));
}

uint16_t wrendezvous_pick(const struct wrendezvous_node *nodes, size_t count, uint64_t key_hash)
{
    /* mcrouter starts from score 0 at position 0 and moves only on a strictly greater
     * score: the first node wins a tie, and node 0 wins if nothing scores above 0. */
    double best = 0;
    size_t winner = 0;
    for (size_t i = 0; i < count; i++) {
        double score = wrendezvous_score(nodes[i].weight, nodes[i].hash, key_hash);
        if (score > best) {
            best = score;
            winner = i;
        }
    }
    return (uint16_t)winner;
}

void wrendezvous_pick_many(const struct wrendezvous_node *nodes, size_t count,
                           const uint64_t *key_hashes, size_t keys, uint16_t *out)
{
    for (size_t k = 0; k < keys; k++)
        out[k] = wrendezvous_pick(nodes, count, key_hashes[k]);
}
