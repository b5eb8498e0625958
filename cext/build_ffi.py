"""cffi build script for the C core (API mode, compiled out of line at install).

It imports nothing from the `harness` package: setup.py names it in
`cffi_modules`, and `harness.core.native._c` is the only module that loads the
result (`harness.core.native.compiled._ring_c`); the binding module of each C unit
(`harness.core.native.ring` for cext/ring.c, `.hashes` for cext/hashes.c, ...) calls
its functions through it.
"""

import os
import shlex

from cffi import FFI

# Extra flags for a checked build (tox -e sanitize: -fsanitize=address,undefined); setup.py
# reads the same variables for harness.core.native.compiled._scalar.
EXTRA_COMPILE_ARGS = shlex.split(os.environ.get("RING_HARNESS_EXTRA_CFLAGS", ""))
EXTRA_LINK_ARGS = shlex.split(os.environ.get("RING_HARNESS_EXTRA_LDFLAGS", ""))
# Every function starts on a 64-byte line, so that its speed depends on its own code and
# not on how much code the linker put before it. Without, a change to bucketed.c's
# declarations moved ring.c's fills from a line's start to its middle, and the A/B gate
# measured the 16k ring's cffi-aligned and cffi-packed-64 builds 1.24x to 1.58x slower in
# six runs of seven against the commit before, with their own code unchanged; with it,
# 0.84x to 1.00x, and three runs of three passed. setup.py passes the same to the other
# modules.
ALIGNMENT_ARGS = ["-falign-functions=64"]

# The struct-array layouts (ring.h), one set of functions per struct kind:
# `kind` names the struct, `hash` its position type.
STRUCT_KINDS = {
    "aligned": "uint32_t",
    "packed": "uint32_t",
    "aligned64": "uint64_t",
    "packed64": "uint64_t",
}

FUNCTIONS = """
size_t ring_entry_{kind}_size(void);
size_t ring_entry_{kind}_idx_offset(void);
void ring_fill_{kind}(struct ring_entry_{kind} *, const {hash} *, const uint16_t *, size_t);
uint16_t ring_lookup_{kind}(const struct ring_entry_{kind} *, size_t, {hash});
void ring_lookup_many_{kind}(const struct ring_entry_{kind} *, size_t,
                             const {hash} *, size_t, uint16_t *);
"""

# The bucketed layout (bucketed.h) and the LRU replay (lru.h), declared exactly as in C.
CDEF = """
struct ring_bucket_entry { uint16_t low; uint16_t idx; };

size_t ring_bucket_entry_size(void);
size_t ring_bucket_entry_idx_offset(void);
int ring_bucketed_build(uint32_t *, struct ring_bucket_entry *, const uint32_t *,
                        const uint16_t *, size_t);
uint16_t ring_bucketed_lookup(const uint32_t *, const struct ring_bucket_entry *, uint32_t);
struct ring_bucketed_tuning { uint32_t window; uint32_t depth; uint32_t offsets_ahead;
                              uint32_t align; };
#define RING_BUCKETED_MAX_DEPTH 64
#define RING_BUCKETED_MAX_AHEAD 256
int ring_bucketed_tuning_valid(const struct ring_bucketed_tuning *);
struct ring_bucketed_tuning ring_bucketed_default_tuning(size_t);
int ring_bucketed_lookup_many(const uint32_t *, const struct ring_bucket_entry *,
                              const uint32_t *, size_t, uint16_t *,
                              const struct ring_bucketed_tuning *);

size_t lru_workspace_bytes(uint32_t, uint32_t);
int lru_replay(const uint16_t *, const uint32_t *, size_t, uint32_t, uint32_t, uint8_t *);
"""

# The hash functions (hashes.h), declared exactly as in C.
CDEF_HASHES = """
void hash_fnv1a_fmix32_many(const uint8_t *, const uint64_t *, size_t, uint32_t *);
uint64_t xxh64(const char *, size_t, uint64_t);
void xxh64_many(const char *, const uint64_t *, size_t, uint64_t, uint64_t *);
uint32_t murmur3_32(const char *, size_t, uint32_t);
uint64_t murmur64a(const char *, size_t, uint64_t);
void murmur64a_many(const char *, const uint64_t *, size_t, uint64_t, uint64_t *);
uint64_t hash128to64(uint64_t, uint64_t);
uint64_t siphash24(const uint8_t *, size_t, const uint8_t *);
void siphash24_many(const uint8_t *, const uint64_t *, size_t, const uint8_t *, uint64_t *);
int siphash24_numbered(const uint8_t *, size_t, uint64_t, const uint8_t *, uint64_t *);
"""

# The key hashes of Kafka, Redis Cluster and twemproxy (client_hashes.h), exactly as in C.
CDEF_CLIENT_HASHES = """
uint32_t murmur2_32(const uint8_t *, size_t, uint32_t);
uint32_t redis_keyslot(const uint8_t *, size_t);
uint32_t twemproxy_fnv1a_64(const uint8_t *, size_t);
void kafka_partition_many(const uint8_t *, const uint64_t *, size_t, uint32_t, uint16_t *);
void kafka_murmur2_many(const uint8_t *, const uint64_t *, size_t, uint32_t *);
void redis_keyslot_many(const uint8_t *, const uint64_t *, size_t, uint32_t *);
void redis_route_many(const uint8_t *, const uint64_t *, size_t, const uint16_t *, uint16_t *);
void twemproxy_hash_many(const uint8_t *, const uint64_t *, size_t, int, uint32_t *);
"""

# MD5 (md5_many.h) and CRC-32 (crc32_many.h) of batches of names, exactly as in C.
CDEF_NAME_HASHES = """
void md5_digest(const uint8_t *, size_t, uint8_t *);
void md5_prefix32_many(const uint8_t *, const uint64_t *, size_t, int, uint32_t *);
void crc32_many(const uint8_t *, const uint64_t *, size_t, uint32_t *);
"""

# The algorithms beyond the ring (algorithms.h), declared exactly as in C.
CDEF_ALGORITHMS = """
uint16_t jump_bucket(uint64_t, uint32_t);
void jump_many(const uint64_t *, size_t, uint32_t, uint16_t *);
void jump_many_portable(const uint64_t *, size_t, uint32_t, uint16_t *);

int maglev_fill(const uint64_t *, const uint64_t *, const double *, const uint16_t *, size_t,
                double, uint64_t, uint16_t *);
uint16_t maglev_lookup(const uint16_t *, uint64_t, uint64_t);
void maglev_lookup_many(const uint16_t *, uint64_t, const uint64_t *, size_t, uint16_t *);

uint16_t multiprobe_lookup(const uint64_t *, const uint16_t *, size_t, const uint64_t *, size_t,
                           uint64_t);
void multiprobe_lookup_many(const uint64_t *, const uint16_t *, size_t, const uint64_t *, size_t,
                            const uint64_t *, size_t, uint16_t *);

struct rendezvous_node {
    uint32_t state; uint32_t prefix_len; uint32_t rank; uint8_t tail_len; uint8_t tail[3];
};
void rendezvous_prepare(struct rendezvous_node *, const char *, size_t, uint32_t);
uint32_t rendezvous_score(const struct rendezvous_node *, const char *, size_t);
uint16_t rendezvous_pick(const struct rendezvous_node *, size_t, const char *, size_t);
void rendezvous_pick_many(const struct rendezvous_node *, size_t, const char *,
                          const uint64_t *, const uint64_t *, size_t, uint16_t *);

struct bounded_ring {
    const void *positions; const uint16_t *owners; size_t points; const uint64_t *weights;
    const uint64_t *cumulative; size_t servers; uint64_t total_weight; uint64_t factor;
};
uint16_t bounded_next32(const struct bounded_ring *, uint64_t *, uint64_t *, uint32_t);
uint16_t bounded_next64(const struct bounded_ring *, uint64_t *, uint64_t *, uint64_t);
void bounded_route32(const struct bounded_ring *, uint64_t *, uint64_t *, const uint32_t *,
                     size_t, uint16_t *);
void bounded_route64(const struct bounded_ring *, uint64_t *, uint64_t *, const uint64_t *,
                     size_t, uint16_t *);
struct wrendezvous_node { uint64_t hash; double weight; };
double wrendezvous_score(double, uint64_t, uint64_t);
uint16_t wrendezvous_pick(const struct wrendezvous_node *, size_t, uint64_t);
void wrendezvous_pick_many(const struct wrendezvous_node *, size_t, const uint64_t *, size_t,
                           uint16_t *);
"""

# The stateless range hashes (range_hashes.h), declared exactly as in C.
CDEF_RANGE_HASHES = """
uint16_t binomial_bucket(uint64_t, uint32_t);
void binomial_many(const uint64_t *, size_t, uint32_t, uint16_t *);
uint16_t fliphash_bucket(uint64_t, uint32_t);
void fliphash_many(const uint64_t *, size_t, uint32_t, uint16_t *);
uint16_t powerch_bucket(uint64_t, uint32_t);
void powerch_many(const uint64_t *, size_t, uint32_t, uint16_t *);
"""

# AnchorHash (anchor.h), MementoHash (memento.h), DxHash (dx.h) and JumpBackHash
# (jumpback.h), declared exactly as in C.
CDEF_REMOVABLE = """
struct anchor {
    uint32_t *A; uint32_t *K; uint32_t *W; uint32_t *L; uint32_t capacity; uint32_t working;
    const uint16_t *owners;
};
void anchor_init(struct anchor *);
void anchor_remove(struct anchor *, uint32_t);
uint32_t anchor_bucket(const struct anchor *, uint64_t);
uint16_t anchor_lookup(const struct anchor *, uint64_t);
void anchor_lookup_many(const struct anchor *, const uint64_t *, size_t, uint16_t *);

#define MEMENTO_EMPTY 4294967295
struct memento_entry { uint32_t bucket; uint32_t replacer; };
struct memento {
    uint32_t size; uint32_t removed; uint32_t slots; struct memento_entry *table;
    const uint16_t *owners;
};
void memento_remove(const struct memento *, struct memento *, uint32_t);
int64_t memento_replacer(const struct memento *, uint32_t);
uint32_t memento_bucket(const struct memento *, uint64_t);
uint16_t memento_lookup(const struct memento *, uint64_t);
void memento_lookup_many(const struct memento *, const uint64_t *, size_t, uint16_t *);

#define DX_MAX_PROBES_PER_SLOT 4
struct dx { uint8_t *working; uint32_t capacity; const uint16_t *owners; };
uint32_t dx_bucket(const struct dx *, uint64_t);
uint16_t dx_lookup(const struct dx *, uint64_t);
void dx_lookup_many(const struct dx *, const uint64_t *, size_t, uint16_t *);

uint32_t jumpback_bucket(uint64_t, uint32_t);
void jumpback_many(const uint64_t *, size_t, uint32_t, uint16_t *);
"""

# Point generation (generate.h), batch BLAKE2b (blake2b_lanes.h), the lean ring
# (lean.h), the random-access reference of batch lookups (random_access.h) and the
# preference lists of replication (replicas.h).
CDEF_GENERATE = """
int ring_generate_points(int, const uint8_t *, const int64_t *, size_t, const uint8_t *,
                         const uint64_t *, const uint64_t *, size_t, void *, uint16_t *, int);
int ring_generate_nginx(const uint32_t *, const uint64_t *, size_t, void *, uint16_t *, int);
int blake2b512_prefixes_many(const uint8_t *, const uint64_t *, size_t, int, void *);

size_t ring_sort_dedupe64(uint64_t *, uint16_t *, size_t, int, int);
size_t ring_split_packed32(const uint64_t *, size_t, int, uint32_t *, uint16_t *);
size_t ring_sub_split_packed32(const uint64_t *, size_t, const uint16_t *, int, uint32_t *,
                               uint16_t *, size_t);
void ring_arc_sums32(const uint32_t *, const uint16_t *, size_t, double *);
void ring_arc_sums64(const uint64_t *, const uint16_t *, size_t, double *);

void ring_random_reads(const uint32_t *, size_t, const uint32_t *, size_t, uint16_t *);

void *ring_advised_alloc(size_t);
void ring_advised_free(void *);

void replica_start_table(const uint16_t *, const uint16_t *, size_t, uint32_t, uint16_t *);
"""

# cffi lays out a cdef'd struct itself; the packed ones must be declared with
# packed=True or cffi would assume the padded size and only complain at first use.
CDEF_ALIGNED = """
struct ring_entry_aligned { uint32_t hash; uint16_t idx; };
struct ring_entry_aligned64 { uint64_t hash; uint16_t idx; };
"""
CDEF_PACKED = """
struct ring_entry_packed { uint32_t hash; uint16_t idx; };
struct ring_entry_packed64 { uint64_t hash; uint16_t idx; };
"""

ffibuilder = FFI()
ffibuilder.cdef(CDEF_PACKED, packed=True)
ffibuilder.cdef(CDEF_ALIGNED)
ffibuilder.cdef(
    "".join(FUNCTIONS.format(kind=kind, hash=hash) for kind, hash in STRUCT_KINDS.items())
)
ffibuilder.cdef(CDEF)
ffibuilder.cdef(CDEF_HASHES)
ffibuilder.cdef(CDEF_CLIENT_HASHES)
ffibuilder.cdef(CDEF_NAME_HASHES)
ffibuilder.cdef(CDEF_ALGORITHMS)
ffibuilder.cdef(CDEF_RANGE_HASHES)
ffibuilder.cdef(CDEF_REMOVABLE)
ffibuilder.cdef(CDEF_GENERATE)
ffibuilder.set_source(
    "harness.core.native.compiled._ring_c",
    '#include "ring.h"\n#include "bucketed.h"\n#include "lru.h"\n#include "hashes.h"\n'
    '#include "algorithms.h"\n#include "generate.h"\n#include "blake2b_lanes.h"\n'
    '#include "lean.h"\n#include "random_access.h"\n#include "range_hashes.h"\n'
    '#include "anchor.h"\n#include "memento.h"\n#include "dx.h"\n#include "jumpback.h"\n'
    '#include "replicas.h"\n#include "client_hashes.h"\n#include "md5_many.h"\n'
    '#include "crc32_many.h"\n#include "advised_alloc.h"',
    # Relative to the project root, where setup.py runs (sdists need this).
    sources=["cext/ring.c", "cext/bucketed.c", "cext/lru.c", "cext/hashes.c",
             "cext/algorithms.c", "cext/generate.c", "cext/blake2b_lanes.c", "cext/lean.c",
             "cext/random_access.c", "cext/range_hashes.c", "cext/anchor.c", "cext/memento.c",
             "cext/dx.c", "cext/jumpback.c", "cext/replicas.c", "cext/client_hashes.c",
             "cext/md5_many.c", "cext/crc32_many.c", "cext/advised_alloc.c"],
    include_dirs=["cext"],
    depends=["cext/ring.h", "cext/bucketed.h", "cext/lru.h", "cext/hashes.h",
             "cext/algorithms.h", "cext/generate.h", "cext/blake2b_lanes.h", "cext/lean.h",
             "cext/random_access.h", "cext/range_hashes.h", "cext/anchor.h", "cext/memento.h",
             "cext/dx.h", "cext/jumpback.h", "cext/splitmix.h", "cext/replicas.h",
             "cext/client_hashes.h", "cext/md5_many.h", "cext/crc32_many.h",
             "cext/advised_alloc.h"],
    # Point names' MD5 and long names' BLAKE2b from OpenSSL's libcrypto, CRC-32 from zlib
    # (cext/generate.c says why; key names' MD5 is our own, cext/md5_many.h says why);
    # libm's log for weighted rendezvous, the one mcrouter's std::log calls.
    libraries=["crypto", "z", "pthread", "m"],
    extra_compile_args=["-O2", "-std=c99", *ALIGNMENT_ARGS, *EXTRA_COMPILE_ARGS],
    extra_link_args=EXTRA_LINK_ARGS,
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
