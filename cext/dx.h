/* DxHash (Dong and Wang, "DxHash: A Scalable Consistent Hash Based on the
 * Pseudo-Random Sequence", arXiv:2107.07930, 2021): `capacity` slots, one bit each (set
 * while the slot's bucket works). A key hash h probes the slots
 * splitmix64_at(h, 0) mod capacity, splitmix64_at(h, 1) mod capacity, ... (splitmix.h)
 * and takes the first working one. After DX_MAX_PROBES_PER_SLOT * capacity probes in vain
 * (a chance below e**-4 for a key even with a single bucket working) it takes the first
 * working slot at or after the last probe, wrapping: every key lands. Bound in Python by
 * harness/core/native/dx.py; the plain-Python definition is
 * harness/recipes/algorithms/dx.py's. */
#ifndef RING_HARNESS_DX_H
#define RING_HARNESS_DX_H

#include <stddef.h>
#include <stdint.h>

/* cffi:begin */
#define DX_MAX_PROBES_PER_SLOT 4

struct dx {
    uint8_t *working;        /* bit b % 8 of byte b / 8: slot b works */
    uint32_t capacity;
    const uint16_t *owners;  /* the server of each of the first slots; NULL: slot b is b */
};

uint32_t dx_bucket(const struct dx *dx, uint64_t key);
uint16_t dx_lookup(const struct dx *dx, uint64_t key);
void dx_lookup_many(const struct dx *dx, const uint64_t *keys, size_t count, uint16_t *out);
/* cffi:end */

#endif
