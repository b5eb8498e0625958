/* MementoHash (Coluzzi, Brocco, Antonucci and Leidi, "MementoHash: A Stateful, Minimal
 * Memory, Best Performing Consistent Hash Algorithm", IEEE/ACM Transactions on Networking,
 * 2024): jump consistent hash over `size` buckets (algorithms.h's jump_bucket) plus the
 * "memento", a table of the buckets removed other than from the end, each with its
 * replacer: the number of working buckets left just after its removal. A key whose jump
 * bucket b was removed rehashes to splitmix64_at(key, b) mod replacer (splitmix.h), then
 * follows replacers while the bucket it reached was removed earlier (a replacer at least
 * as large). Bound in Python by harness/core/native/memento.py; the plain-Python
 * definition is harness/recipes/algorithms/memento.py's.
 *
 * The memento is an open-addressing table of 2**k entries (linear probing, an empty slot
 * has bucket MEMENTO_EMPTY) that the caller allocates at most half full; with no removal
 * there is none, and lookups are jump's alone. */
#ifndef RING_HARNESS_MEMENTO_H
#define RING_HARNESS_MEMENTO_H

#include <stddef.h>
#include <stdint.h>

/* cffi:begin */
#define MEMENTO_EMPTY 4294967295u /* UINT32_MAX, as a literal cffi reads */

struct memento_entry {
    uint32_t bucket;
    uint32_t replacer;
};

struct memento {
    uint32_t size;                /* jump's buckets (the paper's b-array size) */
    uint32_t removed;             /* entries in the table */
    uint32_t slots;               /* table entries, a power of two; 0 with no table */
    struct memento_entry *table;  /* NULL when nothing was removed but from the end */
    const uint16_t *owners;       /* the server of each bucket; NULL: bucket b is b */
};

/* `to` = `from` after `bucket` (working, not the last working one) is removed: the last
 * bucket of an empty memento leaves jump's range; any other is remembered. `to->table`
 * must be allocated with room for from->removed + 1 entries at most half full, all
 * MEMENTO_EMPTY, and `to->slots` set (it is left alone when the bucket is the last). */
void memento_remove(const struct memento *from, struct memento *to, uint32_t bucket);
/* The replacer of a removed bucket, or -1 if `bucket` is in the table's no entry. */
int64_t memento_replacer(const struct memento *memento, uint32_t bucket);
uint32_t memento_bucket(const struct memento *memento, uint64_t key);
uint16_t memento_lookup(const struct memento *memento, uint64_t key);
void memento_lookup_many(const struct memento *memento, const uint64_t *keys, size_t count,
                         uint16_t *out);
/* cffi:end */

#endif
