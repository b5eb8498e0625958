/* DxHash's lookup (see dx.h). */
#include "dx.h"

#include "splitmix.h"

static inline int works(const uint8_t *working, uint32_t slot)
{
    return (working[slot >> 3] >> (slot & 7)) & 1;
}

uint32_t dx_bucket(const struct dx *dx, uint64_t key)
{
    uint64_t probes = (uint64_t)DX_MAX_PROBES_PER_SLOT * dx->capacity;
    uint32_t slot = 0;
    for (uint64_t i = 0; i < probes; i++) {
        slot = (uint32_t)(splitmix64_at(key, i) % dx->capacity);
        if (works(dx->working, slot))
            return slot;
    }
    while (!works(dx->working, slot))
        slot = slot + 1 == dx->capacity ? 0 : slot + 1;
    return slot;
}

uint16_t dx_lookup(const struct dx *dx, uint64_t key)
{
    uint32_t b = dx_bucket(dx, key);
    return dx->owners ? dx->owners[b] : (uint16_t)b;
}

void dx_lookup_many(const struct dx *dx, const uint64_t *keys, size_t count, uint16_t *out)
{
    for (size_t i = 0; i < count; i++)
        out[i] = dx_lookup(dx, keys[i]);
}
