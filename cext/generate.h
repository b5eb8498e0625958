/* ring-harness C core: point generation (names formatted and hashed in C).
 *
 * A point name is a template of segments: literal bytes, the server's name
 * (UTF-8 bytes) or the point number j in decimal. Each server s gets
 * counts[s] names, j = 0 .. counts[s]-1, hashed with one of the hashes of
 * harness/core/hashing.py; positions and owners are written in server order, so
 * the output is what the Python reference builds before sorting.
 * Bound in Python by harness/core/native/generate.py.
 */
#ifndef RING_HARNESS_GENERATE_H
#define RING_HARNESS_GENERATE_H

#include <stddef.h>
#include <stdint.h>

/* Hash kinds; the digest prefixes are read as in harness/core/hashing.py. */
enum {
    GEN_BLAKE2B_32 = 0,    /* first 4 bytes of BLAKE2b-512, big-endian */
    GEN_BLAKE2B_64 = 1,    /* first 8 bytes of BLAKE2b-512, big-endian */
    GEN_MD5_32 = 2,        /* first 4 bytes of MD5, big-endian */
    GEN_FNV1A_FMIX32 = 3,  /* FNV-1a 32, then MurmurHash3's fmix32 */
    GEN_CRC32 = 4,         /* zlib's CRC-32 */
    GEN_MD5_KETAMA = 5     /* libketama: the MD5 digest as four little-endian uint32 points */
};

/* Template segments. */
enum { SEG_LITERAL = 0, SEG_SERVER = 1, SEG_J = 2 };

/* Error codes (0 is success). */
enum { GEN_OK = 0, GEN_NO_MEMORY = -1, GEN_CRYPTO = -2, GEN_BAD_ARGUMENT = -3, GEN_THREAD = -4 };

/* cffi:begin */
/* segments: nsegments triples (kind, start, length); start/length index `literals`.
 * names: server names back to back, name s is names[name_offsets[s] .. name_offsets[s+1]).
 * counts: names per server. positions: uint32_t (uint64_t for GEN_BLAKE2B_64) with one
 * slot per point (4 per name for GEN_MD5_KETAMA), owners likewise.
 * threads: worker threads (servers are split into contiguous groups of similar size).
 * With owners NULL (32-bit hashes only), positions is a uint64_t array that receives
 * packed words (position << 16 | owner), ready for an in-place sort (lean.h). */
int ring_generate_points(int hash_kind, const uint8_t *literals, const int64_t *segments,
                         size_t nsegments, const uint8_t *names, const uint64_t *name_offsets,
                         const uint64_t *counts, size_t nservers, void *positions,
                         uint16_t *owners, int threads);

/* nginx's chain: point j of server s = CRC-32 of bases[s] continued with point j-1 as
 * 4 little-endian bytes (0 before the first point). Owners NULL: packed words, as above. */
int ring_generate_nginx(const uint32_t *bases, const uint64_t *counts, size_t nservers,
                        void *positions, uint16_t *owners, int threads);
/* cffi:end */

#endif
