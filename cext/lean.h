/* ring-harness C core: the lean ring, sorted and de-duplicated with little extra memory.
 *
 * 32-bit rings are sorted as packed 64-bit words (position << 16 | owner) in
 * place (numpy's sort), then split here into positions and owners: 8 bytes of
 * words plus the 6 of the result per point. 64-bit positions leave no room for
 * the owner in a word, so their (position, owner) pairs are sorted in place
 * here: an in-place radix partition on the top 16 bits of the position, then
 * each bucket sorted through a scratch array of 64-bit keys (the rest of the
 * position above the owner); the extra memory is one bucket, not the ring.
 * Equal positions keep one point: the lowest owner, or the highest if asked.
 */
#ifndef RING_HARNESS_LEAN_H
#define RING_HARNESS_LEAN_H

#include <stddef.h>
#include <stdint.h>

/* Sorted packed words (position << 16 | owner) of a 32-bit ring: keep one word per
 * position and split it into positions and owners; returns the number kept. */
size_t ring_split_packed32(const uint64_t *words, size_t n, int keep_highest,
                           uint32_t *positions, uint16_t *owners);

/* Sort 64-bit (position, owner) pairs by position then owner and de-duplicate them in
 * place; returns the number kept (they lead both arrays), or (size_t)-1 if the
 * scratch memory could not be had. */
size_t ring_sort_dedupe64(uint64_t *positions, uint16_t *owners, size_t n, int keep_highest);

/* Each owner's share of the ring in hash units: the sum of the arcs ending at its
 * points, arc i = positions[i] - positions[i-1] (wrapping for i = 0) as a double,
 * accumulated in index order (as numpy's bincount with weights). positions must be
 * sorted and unique; out has one zeroed slot per owner. */
void ring_arc_sums32(const uint32_t *positions, const uint16_t *owners, size_t n, double *out);
void ring_arc_sums64(const uint64_t *positions, const uint16_t *owners, size_t n, double *out);

#endif
