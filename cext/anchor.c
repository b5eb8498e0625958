/* AnchorHash's lookup and removal in both forms (see anchor.h). */
#include "anchor.h"

#include "splitmix.h"

void anchor_init(struct anchor *anchor)
{
    for (uint32_t b = 0; b < anchor->capacity; b++) {
        /* The buckets beyond the working ones count as removed from the last down, so
         * bucket b was removed when b buckets were left. */
        anchor->A[b] = b < anchor->working ? 0 : b;
        anchor->K[b] = b;
        if (anchor->W) {
            anchor->W[b] = b;
            anchor->L[b] = b;
        }
    }
}

/* The bucket in b's place for a view of `view` working buckets: b itself while it was
 * still working then, else along the buckets that replaced it. */
static inline uint32_t bucket_at_view(const uint32_t *A, const uint32_t *K, uint32_t b,
                                      uint32_t view)
{
    while (A[b] >= view)
        b = K[b];
    return b;
}

void anchor_remove(struct anchor *anchor, uint32_t bucket)
{
    uint32_t *A = anchor->A, *K = anchor->K, *W = anchor->W, *L = anchor->L;
    if (W) {
        /* The full form keeps the working set in W: the last working bucket takes the
         * removed one's position, and so its place in K. */
        uint32_t last = --anchor->working;
        W[L[bucket]] = W[last];
        L[W[last]] = L[bucket];
        K[bucket] = W[last];
        A[bucket] = last;
        return;
    }
    /* The reduced form finds that last working bucket by walking K from position N-1. */
    K[bucket] = bucket_at_view(A, K, anchor->working - 1, anchor->working);
    A[bucket] = --anchor->working;
}

uint32_t anchor_bucket(const struct anchor *anchor, uint64_t key)
{
    const uint32_t *A = anchor->A, *K = anchor->K;
    uint32_t b = (uint32_t)(key % anchor->capacity);
    while (A[b] > 0) {
        uint32_t h = (uint32_t)(splitmix64_at(key, b) % A[b]);
        b = bucket_at_view(A, K, h, A[b]);
    }
    return b;
}

uint16_t anchor_lookup(const struct anchor *anchor, uint64_t key)
{
    uint32_t b = anchor_bucket(anchor, key);
    return anchor->owners ? anchor->owners[b] : (uint16_t)b;
}

void anchor_lookup_many(const struct anchor *anchor, const uint64_t *keys, size_t count,
                        uint16_t *out)
{
    for (size_t i = 0; i < count; i++)
        out[i] = anchor_lookup(anchor, keys[i]);
}
