/* ring_peer.h: the C ABI of a foreign peer loaded as a library, for ring-harness.
 *
 * A peer is a shared library that exports the functions below (C linkage). The
 * harness loads it with dlopen (cffi ABI mode) in a supervised worker process,
 * builds it from the scenario's servers, routes the scenario's keys through it, and
 * measures it beside its own layouts: the same keys, interleaved timing rounds (each
 * C call timed in the worker), allocator bytes by memray (in another worker, whose
 * mallocs are the library's), and parity with the recipe the scenario says it
 * routes like.
 *
 * `python -m harness abi` prints this file's path and the ABI version.
 *
 * Rules:
 * - Servers are given in scenario order; an owner is an index into that order.
 * - Keys are bytes, not strings: `keys` holds them back to back and key i is
 *   keys[offsets[i] .. offsets[i + 1]) (so `offsets` has n + 1 entries).
 * - Functions returning int return 0 on success and -1 on failure.
 * - ring_peer_lookup and ring_peer_entries are optional: a library that leaves
 *   them out (or returns -1) supports no lookup of precomputed hashes, or does
 *   not know its point count.
 */
#ifndef RING_PEER_H
#define RING_PEER_H

#include <stddef.h>
#include <stdint.h>

#define RING_PEER_ABI_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

/* cffi:begin */
typedef struct ring_peer ring_peer; /* the library's own structure, opaque to the harness */

/* RING_PEER_ABI_VERSION as the library was compiled against. */
uint32_t ring_peer_abi_version(void);

/* Build from `count` servers (names NUL-terminated, weights > 0) and a parameter
 * string (the scenario's `params`, "" when none). On failure return NULL and
 * write a NUL-terminated message of at most error_size bytes into `error`. */
ring_peer *ring_peer_build(const char *const *names, const double *weights, uint32_t count,
                           const char *params, char *error, size_t error_size);

/* Route n keys by name (the library hashes them) into owners[0 .. n). */
int ring_peer_route(const ring_peer *peer, const uint8_t *keys, const uint64_t *offsets,
                    size_t n, uint16_t *owners);

/* Optional: look up n precomputed key hashes (the hash of the recipe the peer
 * routes like, widened to 64 bits) into owners[0 .. n). */
int ring_peer_lookup(const ring_peer *peer, const uint64_t *hashes, size_t n, uint16_t *owners);

/* Bytes the library believes its structure holds, or -1 if it does not know. */
int64_t ring_peer_nbytes(const ring_peer *peer);

/* Optional: points (entries) on the library's ring, or -1 if it does not know. */
int64_t ring_peer_entries(const ring_peer *peer);

/* Release everything ring_peer_build allocated. */
void ring_peer_free(ring_peer *peer);
/* cffi:end */

#ifdef __cplusplus
}
#endif

#endif
