/* CRC-32 of batches of names through zlib: see crc32_many.h. */
#include "crc32_many.h"

#include <zlib.h>

void crc32_many(const uint8_t *data, const uint64_t *offsets, size_t count, uint32_t *out)
{
    uLong empty = crc32(0L, Z_NULL, 0);
    for (size_t i = 0; i < count; i++) {
        /* crc32_z takes a size_t length: no name is cut at 4 GiB as with crc32's uInt */
        out[i] = (uint32_t)crc32_z(empty, data + offsets[i],
                                   (z_size_t)(offsets[i + 1] - offsets[i]));
    }
}
