"""cffi build script for the C core (API mode, compiled out of line at install).

It imports nothing from the `harness` package: setup.py names it in
`cffi_modules`, and `harness._cbindings` is the only module that loads the
result (`harness._ring_c`).
"""

from cffi import FFI

# The aligned struct and the functions, declared exactly as in ring.h.
CDEF = """
struct ring_entry_aligned { uint32_t hash; uint16_t idx; };

size_t ring_entry_aligned_size(void);
size_t ring_entry_packed_size(void);
size_t ring_entry_aligned_idx_offset(void);
size_t ring_entry_packed_idx_offset(void);

void ring_fill_aligned(struct ring_entry_aligned *, const uint32_t *, const uint16_t *, size_t);
void ring_fill_packed(struct ring_entry_packed *, const uint32_t *, const uint16_t *, size_t);
uint16_t ring_lookup_aligned(const struct ring_entry_aligned *, size_t, uint32_t);
uint16_t ring_lookup_packed(const struct ring_entry_packed *, size_t, uint32_t);
void ring_lookup_many_aligned(const struct ring_entry_aligned *, size_t,
                              const uint32_t *, size_t, uint16_t *);
void ring_lookup_many_packed(const struct ring_entry_packed *, size_t,
                             const uint32_t *, size_t, uint16_t *);
void hash_fnv1a_fmix32_many(const uint8_t *, const uint64_t *, size_t, uint32_t *);
"""

# cffi lays out a cdef'd struct itself; the packed one must be declared with
# packed=True or cffi would assume 8 bytes and only complain at first use.
CDEF_PACKED = "struct ring_entry_packed { uint32_t hash; uint16_t idx; };"

ffibuilder = FFI()
ffibuilder.cdef(CDEF_PACKED, packed=True)
ffibuilder.cdef(CDEF)
ffibuilder.set_source(
    "harness._ring_c",
    '#include "ring.h"',
    # Relative to the project root, where setup.py runs (sdists need this).
    sources=["cext/ring.c"],
    include_dirs=["cext"],
    depends=["cext/ring.h"],
    extra_compile_args=["-O2", "-std=c99"],
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
