/* ring-harness C core: a replay of a request stream through one LRU cache per
 * server, for the origin load of a staged migration (harness/core/cache_model.py,
 * through its binding harness/core/native/lru.py). */
#ifndef RING_HARNESS_LRU_H
#define RING_HARNESS_LRU_H

#include <stddef.h>
#include <stdint.h>

/* cffi:begin */
/* Bytes lru_replay allocates for n_servers caches of `capacity` objects each,
 * or 0 if that many slots do not fit its 32-bit slot indices (or size_t). */
size_t lru_workspace_bytes(uint32_t n_servers, uint32_t capacity);

/* Replays requests 0..n-1 in order: request i asks server servers[i] for
 * object keys[i]. Sets missed[i] to 1 where the object was not cached (it is
 * then inserted, evicting that server's least recently used object when the
 * server already holds `capacity` objects), 0 where it was. Every servers[i]
 * must be < n_servers, and n_servers, capacity >= 1.
 * Returns 0, or -1 if the workspace could not be allocated (missed untouched). */
int lru_replay(const uint16_t *servers, const uint32_t *keys, size_t n, uint32_t n_servers,
               uint32_t capacity, uint8_t *missed);
/* cffi:end */

#endif
