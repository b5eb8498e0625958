/* Stateless range hashes: a 64-bit key hash to a bucket in [0, buckets), like jump but in
 * constant expected time. No state beyond the bucket count.
 *
 * - BinomialHash (Coluzzi, Brocco, Antonucci, Leidi, arXiv 2406.19836): answers as the
 *   authors' Java BinomialEngine.getBucket does on the key's 64-bit hash (four extra draws
 *   in the enclosing tree before falling back to the minor tree).
 * - FlipHash (Masson and Lee, arXiv 2402.17549): answers as the authors' Rust crate
 *   fliphash's fliphash_64(key_hash, ..=buckets - 1), seed 0 (its own keyed 64-bit mixer,
 *   at most 64 draws).
 * - PowerCH (Leu, "Fast Consistent Hashing in Constant Time", arXiv 2307.12448): answers as
 *   the Rust crate power-consistent-hash's PowerConsistentHasher::hash_u64 (DXist, PCG32
 *   streams keyed by the key), with N = 1 answered 0 where that crate refuses it.
 *
 * Bound in Python by harness/core/native/range_hashes.py; the plain-Python definitions
 * are harness/recipes/algorithms/binomial.py, fliphash.py and powerch.py.
 */
#ifndef RING_HARNESS_RANGE_HASHES_H
#define RING_HARNESS_RANGE_HASHES_H

#include <stddef.h>
#include <stdint.h>

/* cffi:begin */
uint16_t binomial_bucket(uint64_t hash, uint32_t buckets);
void binomial_many(const uint64_t *hashes, size_t count, uint32_t buckets, uint16_t *out);

uint16_t fliphash_bucket(uint64_t key, uint32_t buckets);
void fliphash_many(const uint64_t *keys, size_t count, uint32_t buckets, uint16_t *out);

uint16_t powerch_bucket(uint64_t key, uint32_t buckets);
void powerch_many(const uint64_t *keys, size_t count, uint32_t buckets, uint16_t *out);
/* cffi:end */

#endif
