/* A small consistent-hash ring behind ring-harness's C ABI (ring_peer.h).
 *
 * Server s of weight w gets round(points_per_weight * w) points (at least one), point j
 * named "<server>:<j>" and placed at fnv1a-fmix32 of that name (32-bit FNV-1a, then
 * MurmurHash3's fmix32 finalizer); a key goes to the owner of the first point at or after
 * its own hash, wrapping past the last. Of points that land on one position, the lowest
 * server index keeps it. That is ring-harness's `points` construction with
 * hash = "fnv1a-fmix32", which the scenario names in routes_like, so every run checks
 * this library against it key by key.
 *
 * params: "points=N" (default 100).
 *
 * Three defects can be compiled in, for the gate to catch (tests and the guide do):
 *   -DRING_SLOWDOWN     every fourth key is routed twice: 1.25x the work per key
 *   -DRING_BLOAT        the point array is allocated (and touched) at twice its size
 *   -DRING_ROUTE_CHANGE the key "key-7" goes to the next server: one changed route
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring_peer.h"

struct point { uint32_t hash; uint16_t owner; };

struct ring_peer {
    struct point *points;
    size_t count;
    uint32_t servers;
    size_t allocated;  /* bytes of the point array */
};

static uint32_t fnv1a_fmix32(const uint8_t *data, size_t size) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 16777619u;
    h ^= h >> 16; h *= 0x85ebca6bu; h ^= h >> 13; h *= 0xc2b2ae35u; h ^= h >> 16;
    return h;
}

static int by_position(const void *a, const void *b) {
    const struct point *p = a, *q = b;
    if (p->hash != q->hash) return p->hash < q->hash ? -1 : 1;
    return (int)p->owner - (int)q->owner;
}

uint32_t ring_peer_abi_version(void) { return RING_PEER_ABI_VERSION; }

ring_peer *ring_peer_build(const char *const *names, const double *weights, uint32_t count,
                           const char *params, char *error, size_t error_size) {
    long per_weight = 100;
    if (params && strncmp(params, "points=", 7) == 0) per_weight = strtol(params + 7, NULL, 10);
    if (per_weight < 1 || count == 0 || count > 65535) {
        snprintf(error, error_size, "need 1 to 65535 servers and points >= 1");
        return NULL;
    }
    size_t total = 0;
    for (uint32_t s = 0; s < count; s++) {
        long k = (long)(per_weight * weights[s] + 0.5);
        total += (size_t)(k < 1 ? 1 : k);
    }
    ring_peer *ring = calloc(1, sizeof *ring);
    if (!ring) {
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    size_t capacity = total;
#ifdef RING_BLOAT
    capacity *= 2;
#endif
    ring->allocated = capacity * sizeof(struct point);
    ring->points = malloc(ring->allocated);
    if (!ring->points) {
        free(ring);
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    /* every byte touched, so the bytes the allocator gave are resident */
    memset(ring->points, 0, ring->allocated);
    char name[1024];
    size_t at = 0;
    for (uint32_t s = 0; s < count; s++) {
        long k = (long)(per_weight * weights[s] + 0.5);
        for (long j = 0; j < (k < 1 ? 1 : k); j++) {
            int size = snprintf(name, sizeof name, "%s:%ld", names[s], j);
            ring->points[at].hash = fnv1a_fmix32((const uint8_t *)name, (size_t)size);
            ring->points[at++].owner = (uint16_t)s;
        }
    }
    qsort(ring->points, total, sizeof(struct point), by_position);
    size_t kept = 0;  /* equal positions: the first (lowest server) stays */
    for (size_t i = 0; i < total; i++)
        if (kept == 0 || ring->points[i].hash != ring->points[kept - 1].hash)
            ring->points[kept++] = ring->points[i];
    ring->count = kept;
    ring->servers = count;
    return ring;
}

static uint16_t owner_of(const ring_peer *ring, uint32_t hash) {
    size_t low = 0, high = ring->count;
    while (low < high) {
        size_t mid = low + (high - low) / 2;
        if (ring->points[mid].hash < hash) low = mid + 1; else high = mid;
    }
    return ring->points[low == ring->count ? 0 : low].owner;
}

int ring_peer_route(const ring_peer *ring, const uint8_t *keys, const uint64_t *offsets,
                    size_t n, uint16_t *owners) {
    for (size_t i = 0; i < n; i++) {
        const uint8_t *key = keys + offsets[i];
        size_t size = (size_t)(offsets[i + 1] - offsets[i]);
        owners[i] = owner_of(ring, fnv1a_fmix32(key, size));
#ifdef RING_SLOWDOWN
        if ((i & 3) == 3) {  /* route this key again, through a volatile the compiler keeps */
            volatile uint16_t again = owner_of(ring, fnv1a_fmix32(key, size));
            (void)again;
        }
#endif
#ifdef RING_ROUTE_CHANGE
        if (size == 5 && memcmp(key, "key-7", 5) == 0)
            owners[i] = (uint16_t)((owners[i] + 1) % ring->servers);
#endif
    }
    return 0;
}

int64_t ring_peer_nbytes(const ring_peer *ring) {
    return (int64_t)(sizeof *ring + ring->allocated);
}

int64_t ring_peer_entries(const ring_peer *ring) { return (int64_t)ring->count; }

void ring_peer_free(ring_peer *ring) {
    if (ring) free(ring->points);
    free(ring);
}
