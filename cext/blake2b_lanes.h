/* ring-harness C core: BLAKE2b-512 of many short messages at once, one per SIMD lane.
 *
 * Point names are short (a dozen bytes), so each BLAKE2b-512 digest is one
 * compression of one zero-padded 128-byte block. A library hashes one message
 * per call; this runs BLAKE2B_LANES independent compressions side by side, lane
 * k of every 64-bit word belonging to message k, and returns only the digest's
 * first 8 bytes (all a 32- or 64-bit position reads).
 * Used by generate.c; blake2b512_prefixes_many is bound in Python by
 * harness/core/native/generate.py.
 */
#ifndef RING_HARNESS_BLAKE2B_LANES_H
#define RING_HARNESS_BLAKE2B_LANES_H

#include <stddef.h>
#include <stdint.h>

#define BLAKE2B_LANES 8
/* Longest message one compression takes: a single 128-byte block. */
#define BLAKE2B_BLOCK_BYTES 128

/* words[w * BLAKE2B_LANES + k]: message k's w-th little-endian 64-bit word (16 words,
 * zero past the message); lengths[k]: its length in bytes (<= BLAKE2B_BLOCK_BYTES).
 * first_words[k] = the first 8 bytes of unkeyed BLAKE2b-512 of message k, as a
 * little-endian word (digest byte i is bits 8i..8i+7). */
void blake2b512_first_words(const uint64_t *words, const uint64_t *lengths,
                            uint64_t *first_words);

/* cffi:begin */
/* out[i] = the first `width` (4 or 8) bytes of BLAKE2b-512 of message i, read big-endian
 * (uint32_t or uint64_t); message i is data[offsets[i] .. offsets[i+1]). Returns 0, or -1
 * (nothing written) for another width or a message longer than one block. */
int blake2b512_prefixes_many(const uint8_t *data, const uint64_t *offsets, size_t n, int width,
                             void *out);
/* cffi:end */

#endif
