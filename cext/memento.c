/* MementoHash's lookup and removal (see memento.h). */
#include "memento.h"

#include "algorithms.h"
#include "splitmix.h"

/* The table's slot for a bucket: the bucket's bits mixed, so that runs of neighbouring
 * buckets do not fill one stretch of slots. */
static inline uint32_t first_slot(uint32_t bucket, uint32_t slots)
{
    return (uint32_t)(splitmix64_mix(bucket) & (slots - 1));
}

static void remember(struct memento *memento, uint32_t bucket, uint32_t replacer)
{
    uint32_t mask = memento->slots - 1, slot = first_slot(bucket, memento->slots);
    while (memento->table[slot].bucket != MEMENTO_EMPTY)
        slot = (slot + 1) & mask;
    memento->table[slot].bucket = bucket;
    memento->table[slot].replacer = replacer;
    memento->removed++;
}

int64_t memento_replacer(const struct memento *memento, uint32_t bucket)
{
    if (!memento->removed)
        return -1;
    uint32_t mask = memento->slots - 1, slot = first_slot(bucket, memento->slots);
    for (;;) {
        uint32_t held = memento->table[slot].bucket;
        if (held == bucket)
            return memento->table[slot].replacer;
        if (held == MEMENTO_EMPTY)
            return -1;
        slot = (slot + 1) & mask;
    }
}

void memento_remove(const struct memento *from, struct memento *to, uint32_t bucket)
{
    to->size = from->size;
    to->removed = 0;
    if (!from->removed && bucket == from->size - 1) {
        /* Jump removes its last bucket by shrinking: nothing to remember. */
        to->size--;
        return;
    }
    for (uint32_t s = 0; s < from->slots; s++)
        if (from->table[s].bucket != MEMENTO_EMPTY)
            remember(to, from->table[s].bucket, from->table[s].replacer);
    /* The working buckets left after this removal. */
    remember(to, bucket, from->size - from->removed - 1);
}

/* From b, the key's jump bucket: while b was removed, rehash into the buckets left then. */
static inline uint32_t resolve(const struct memento *memento, uint64_t key, uint32_t b)
{
    int64_t replacer = memento_replacer(memento, b);
    while (replacer >= 0) {
        b = (uint32_t)(splitmix64_at(key, b) % (uint64_t)replacer);
        int64_t next = memento_replacer(memento, b);
        /* b was removed before the bucket we came from: its replacer stands in for it. */
        while (next >= replacer) {
            b = (uint32_t)next;
            next = memento_replacer(memento, b);
        }
        replacer = next;
    }
    return b;
}

uint32_t memento_bucket(const struct memento *memento, uint64_t key)
{
    return resolve(memento, key, jump_bucket(key, memento->size));
}

uint16_t memento_lookup(const struct memento *memento, uint64_t key)
{
    uint32_t b = memento_bucket(memento, key);
    return memento->owners ? memento->owners[b] : (uint16_t)b;
}

void memento_lookup_many(const struct memento *memento, const uint64_t *keys, size_t count,
                         uint16_t *out)
{
    /* Jump's batch first, lanes and all (buckets fit 16 bits: size <= 65,536); with
     * nothing removed but from the end that is the whole answer. */
    jump_many(keys, count, memento->size, out);
    if (!memento->removed && !memento->owners)
        return;
    for (size_t i = 0; i < count; i++) {
        uint32_t b = resolve(memento, keys[i], out[i]);
        out[i] = memento->owners ? memento->owners[b] : (uint16_t)b;
    }
}
