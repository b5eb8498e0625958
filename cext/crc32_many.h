/* zlib's CRC-32 (IEEE 802.3, the check value of "123456789" is 0xCBF43926) of batches of
 * names, one C call for a batch instead of one Python call per name (the harness's crc32,
 * which nginx, Pingora and groupcache hash keys with). zlib is the library Python's
 * zlib.crc32 wraps, so both agree by construction; tests check it. Bound by
 * harness/core/native/crc32_many.py. */
#ifndef RING_CRC32_MANY_H
#define RING_CRC32_MANY_H

#include <stddef.h>
#include <stdint.h>

/* cffi:begin */
/* The CRC-32 of many names stored end to end (name i is data[offsets[i]:offsets[i + 1]]). */
void crc32_many(const uint8_t *data, const uint64_t *offsets, size_t count, uint32_t *out);
/* cffi:end */

#endif
