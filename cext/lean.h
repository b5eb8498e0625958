/* ring-harness C core: the lean ring, sorted and de-duplicated with little extra memory.
 *
 * 32-bit rings are sorted as packed 64-bit words (position << 16 | owner) in
 * place (numpy's sort), then split here into positions and owners: 8 bytes of
 * words plus the 6 of the result per point. 64-bit positions leave no room for
 * the owner in a word, so their (position, owner) pairs are sorted in place
 * here by an in-place MSD radix sort (American flag sort) on the 80-bit key
 * (position, owner), which needs no memory beyond the points themselves.
 * Equal positions keep one point: the lowest owner, or the highest if asked.
 * Bound in Python by harness/core/native/lean.py.
 */
#ifndef RING_HARNESS_LEAN_H
#define RING_HARNESS_LEAN_H

#include <stddef.h>
#include <stdint.h>

/* cffi:begin */
/* Sorted packed words (position << 16 | owner) of a 32-bit ring: keep one word per
 * position and split it into positions and owners; returns the number kept. */
size_t ring_split_packed32(const uint64_t *words, size_t n, int keep_highest,
                           uint32_t *positions, uint16_t *owners);

/* The same for a ring of some of the servers, from the sorted packed words of all of
 * them (collided points included): keep the points of owners with sub_index[owner] below
 * 0xFFFF, renumbered to it, then one per position. A sub-ring that lists its servers in
 * the same order keeps the same point of a collision as generating it afresh would, since
 * renumbering keeps the owners' order. Returns the number kept, or SIZE_MAX (having
 * written no more) when positions and owners, of `capacity` slots, cannot hold them. */
size_t ring_sub_split_packed32(const uint64_t *words, size_t n, const uint16_t *sub_index,
                               int keep_highest, uint32_t *positions, uint16_t *owners,
                               size_t capacity);

/* Sort 64-bit (position, owner) pairs by position then owner and de-duplicate them in
 * place, on up to `threads` threads; returns the number kept (they lead both arrays). */
size_t ring_sort_dedupe64(uint64_t *positions, uint16_t *owners, size_t n, int keep_highest,
                          int threads);

/* Each owner's share of the ring in hash units: the sum of the arcs ending at its
 * points, arc i = positions[i] - positions[i-1] (wrapping for i = 0) as a double,
 * accumulated in index order (as numpy's bincount with weights). positions must be
 * sorted and unique; out has one zeroed slot per owner. */
void ring_arc_sums32(const uint32_t *positions, const uint16_t *owners, size_t n, double *out);
void ring_arc_sums64(const uint64_t *positions, const uint16_t *owners, size_t n, double *out);
/* cffi:end */

#endif
