/* AnchorHash (Mendelson, Vargaftik, Barabash, Lorenz, Keslassy and Orda, "AnchorHash: A
 * Scalable Consistent Hash", IEEE/ACM Transactions on Networking, 2020), in its two
 * forms: the paper's, with the arrays A, W, L and K (removal in O(1); the authors'
 * cpp-anchorhash AnchorHashQre), and the memory-reduced one of cpp-anchorhash's `mem/`
 * with A and K only (removal walks K like a lookup). Both route
 * every key to the same bucket after the same removals. Bound in Python by
 * harness/core/native/anchor.py; the plain-Python definition is
 * harness/recipes/algorithms/anchor.py's.
 *
 * Buckets are 0 .. capacity-1; the first `working` of them start working and the rest
 * start removed, in descending order, as the paper's INITANCHOR treats them. A[b] is 0
 * for a working bucket and, for a removed one, the number of working buckets left just
 * after it was removed; K[b] is the bucket that took b's place. A key hash h starts at
 * bucket h mod capacity; from a removed bucket b it rehashes to
 * splitmix64_at(h, b) mod A[b] (splitmix.h) and follows K while the bucket it reached was
 * removed before b was. */
#ifndef RING_HARNESS_ANCHOR_H
#define RING_HARNESS_ANCHOR_H

#include <stddef.h>
#include <stdint.h>

/* cffi:begin */
struct anchor {
    uint32_t *A;
    uint32_t *K;
    uint32_t *W;             /* the working buckets, in positions 0 .. working-1; NULL: reduced */
    uint32_t *L;             /* each bucket's last position in W; NULL in the reduced form */
    uint32_t capacity;
    uint32_t working;
    const uint16_t *owners;  /* the server of each of the first buckets; NULL: bucket b is b */
};

/* INITANCHOR: every array filled for `capacity` buckets, `working` of them working. */
void anchor_init(struct anchor *anchor);
/* REMOVEBUCKET(bucket): `bucket` must be working and not the last working one. */
void anchor_remove(struct anchor *anchor, uint32_t bucket);
/* GETBUCKET(key): the working bucket of a key hash. */
uint32_t anchor_bucket(const struct anchor *anchor, uint64_t key);
/* Each key's server: its bucket, through `owners` when given. */
uint16_t anchor_lookup(const struct anchor *anchor, uint64_t key);
void anchor_lookup_many(const struct anchor *anchor, const uint64_t *keys, size_t count,
                        uint16_t *out);
/* cffi:end */

#endif
