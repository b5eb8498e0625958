#include "random_access.h"

void ring_random_reads(const uint32_t *array, size_t n, const uint32_t *keys, size_t m,
                       uint16_t *out)
{
    for (size_t i = 0; i < m; i++)
        out[i] = (uint16_t)array[((uint64_t)keys[i] * n) >> 32];
}
