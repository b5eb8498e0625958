#include "lru.h"

#include <stdlib.h>

/* Requests ahead whose home cell is prefetched. The table (16 MB for 100
 * caches of 10,000 objects) is far larger than the CPU caches, so nearly every
 * probe is a cache miss; fetching it 8 requests early overlaps those misses.
 * Measured on 10M zipf requests (100 servers, 10,000 objects each): about
 * 0.65 s without, 0.3 to 0.4 s with; also prefetching the slot a further 8
 * requests on gained nothing measurable. */
#define LRU_PREFETCH_AHEAD 8

/* No slot / empty table cell / end of a recency list. */
#define NIL UINT32_MAX

/* A cached object. Server s owns slots [s * capacity, (s + 1) * capacity), taken
 * in order as it fills, so a slot's server is implicit in its index; prev and
 * next link the server's recency list. */
struct lru_slot {
    uint32_t key;
    uint32_t prev;
    uint32_t next;
};

/* One cell of the open-addressing table over every server's objects. The key is
 * kept beside the slot index so that a probe compares keys without a second
 * cache miss into the slot array; the slot's range says which server it is. */
struct lru_cell {
    uint32_t key;
    uint32_t slot; /* NIL: empty */
};

/* A server's recency list: head most recently used, tail the next to evict. */
struct lru_list {
    uint32_t head;
    uint32_t tail;
    uint32_t used; /* slots taken so far; they are never given back */
};

/* At most half full, so linear probing stays short; that costs 2 to 4 cells of
 * 8 bytes per object, beside the object's 12-byte slot. */
static size_t table_cells(size_t slots)
{
    size_t cells = 2;
    while (cells < 2 * slots)
        cells <<= 1;
    return cells;
}

/* MurmurHash3's fmix64 over (server, key): request keys are often small
 * consecutive ids, which the mask alone would pile into neighbouring cells. */
static inline size_t home_cell(uint32_t server, uint32_t key, size_t mask)
{
    uint64_t x = ((uint64_t)server << 32) | key;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return (size_t)x & mask;
}

size_t lru_workspace_bytes(uint32_t n_servers, uint32_t capacity)
{
    uint64_t slots = (uint64_t)n_servers * capacity;
    /* Slot indices are uint32 with NIL reserved; the bound also keeps every
     * product below inside size_t on a 64-bit machine. */
    if (slots >= NIL || slots > SIZE_MAX / 64)
        return 0;
    return (size_t)slots * sizeof(struct lru_slot)
           + table_cells((size_t)slots) * sizeof(struct lru_cell)
           + (size_t)n_servers * sizeof(struct lru_list);
}

static inline void unlink_slot(struct lru_slot *slots, struct lru_list *list, uint32_t x)
{
    uint32_t prev = slots[x].prev, next = slots[x].next;
    if (prev != NIL)
        slots[prev].next = next;
    else
        list->head = next;
    if (next != NIL)
        slots[next].prev = prev;
    else
        list->tail = prev;
}

static inline void push_front(struct lru_slot *slots, struct lru_list *list, uint32_t x)
{
    slots[x].prev = NIL;
    slots[x].next = list->head;
    if (list->head != NIL)
        slots[list->head].prev = x;
    else
        list->tail = x;
    list->head = x;
}

/* Removes slot x (of `server`, holding `key`) from the table. Backward-shift
 * deletion instead of tombstones: each later cell of the run moves back into
 * the hole unless that would put it before its home cell, so probes never
 * lengthen however many evictions a long replay makes. */
static void table_remove(struct lru_cell *table, size_t mask, uint32_t capacity,
                         uint32_t server, uint32_t key, uint32_t x)
{
    size_t hole = home_cell(server, key, mask);
    while (table[hole].slot != x)
        hole = (hole + 1) & mask;
    for (size_t j = (hole + 1) & mask; table[j].slot != NIL; j = (j + 1) & mask) {
        size_t home = home_cell(table[j].slot / capacity, table[j].key, mask);
        if (((j - home) & mask) >= ((j - hole) & mask)) {
            table[hole] = table[j];
            hole = j;
        }
    }
    table[hole].slot = NIL;
}

int lru_replay(const uint16_t *servers, const uint32_t *keys, size_t n, uint32_t n_servers,
               uint32_t capacity, uint8_t *missed)
{
    size_t n_slots = (size_t)n_servers * capacity;
    size_t cells = table_cells(n_slots), mask = cells - 1;
    struct lru_slot *slots = malloc(n_slots * sizeof *slots);
    struct lru_cell *table = malloc(cells * sizeof *table);
    struct lru_list *lists = malloc(n_servers * sizeof *lists);
    if (slots == NULL || table == NULL || lists == NULL) {
        free(slots);
        free(table);
        free(lists);
        return -1;
    }
    for (size_t c = 0; c < cells; c++)
        table[c].slot = NIL;
    for (uint32_t s = 0; s < n_servers; s++)
        lists[s] = (struct lru_list){NIL, NIL, 0};

    for (size_t i = 0; i < n; i++) {
        if (i + LRU_PREFETCH_AHEAD < n) {
            size_t ahead = i + LRU_PREFETCH_AHEAD;
            __builtin_prefetch(&table[home_cell(servers[ahead], keys[ahead], mask)]);
        }
        uint32_t server = servers[i], key = keys[i];
        uint32_t first = server * capacity; /* < 2**32: lru_workspace_bytes bounds it */
        struct lru_list *list = &lists[server];
        size_t c = home_cell(server, key, mask);
        /* Unsigned: a slot below `first` wraps far above capacity. */
        while (table[c].slot != NIL && !(table[c].key == key && table[c].slot - first < capacity))
            c = (c + 1) & mask;

        if (table[c].slot != NIL) {
            uint32_t x = table[c].slot;
            if (x != list->head) {
                unlink_slot(slots, list, x);
                push_front(slots, list, x);
            }
            missed[i] = 0;
            continue;
        }

        missed[i] = 1;
        uint32_t x;
        if (list->used < capacity) {
            x = first + list->used++;
        } else {
            x = list->tail;
            unlink_slot(slots, list, x);
            table_remove(table, mask, capacity, server, slots[x].key, x);
            /* The removal may have emptied a cell before c on this key's probe
             * path; inserting at c would leave the key unreachable from there. */
            c = home_cell(server, key, mask);
            while (table[c].slot != NIL)
                c = (c + 1) & mask;
        }
        slots[x].key = key;
        push_front(slots, list, x);
        table[c] = (struct lru_cell){key, x};
    }

    free(slots);
    free(table);
    free(lists);
    return 0;
}
