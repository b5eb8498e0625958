/* Consistent-hashing algorithms beyond the ring: jump, Maglev, multi-probe, rendezvous
 * (plain and weighted), bounded loads.
 *
 * Each is written to answer exactly as the implementation it is named after
 * (see the comment above each function); the Python side checks every fast
 * path against a plain-Python reference on every run. The hash functions they
 * use are hashes.h's. Bound in Python by harness/core/native/algorithms.py.
 */
#ifndef RING_HARNESS_ALGORITHMS_H
#define RING_HARNESS_ALGORITHMS_H

#include <stddef.h>
#include <stdint.h>

/* cffi:begin */
/* Jump consistent hash (Lamping & Veach 2014): the bucket in [0, buckets). */
uint16_t jump_bucket(uint64_t key, uint32_t buckets);
void jump_many(const uint64_t *keys, size_t count, uint32_t buckets, uint16_t *out);
/* jump_many without the AVX-512 path, whatever the CPU: exported so that the tests check
 * the portable lanes on machines that would otherwise never run them. */
void jump_many_portable(const uint64_t *keys, size_t count, uint32_t buckets, uint16_t *out);

/* Maglev's table, as Envoy's OriginalMaglevTable fills it. Hosts are given in
 * the order Envoy takes them (sorted by name); owner[i] is what the table
 * stores for host i. Returns 0, or -1 if memory ran out. */
int maglev_fill(const uint64_t *offsets, const uint64_t *skips, const double *weights,
                const uint16_t *owner, size_t hosts, double max_weight, uint64_t table_size,
                uint16_t *table);
uint16_t maglev_lookup(const uint16_t *table, uint64_t table_size, uint64_t key);
void maglev_lookup_many(const uint16_t *table, uint64_t table_size, const uint64_t *keys,
                        size_t count, uint16_t *out);

/* Multi-probe consistent hashing with go-mpchash's rules: one point per server
 * (`points`, sorted, owner[i] the server of points[i]); probe s of key hash h
 * is xxHash64 of h's 8 little-endian bytes with seeds[s] (hashes.h); each probe's
 * successor is the first point strictly greater, wrapping to points[0]; the
 * smallest distance `point - probe` (mod 2**64) wins, an earlier probe a tie. */
uint16_t multiprobe_lookup(const uint64_t *points, const uint16_t *owner, size_t n,
                           const uint64_t *seeds, size_t probes, uint64_t key);
void multiprobe_lookup_many(const uint64_t *points, const uint16_t *owner, size_t n,
                            const uint64_t *seeds, size_t probes, const uint64_t *keys,
                            size_t count, uint16_t *out);

/* One rendezvous node: MurmurHash3_x86_32 (seed 0, hashes.h) of its prefix "<name>-",
 * stopped after the prefix's whole 4-byte blocks, so that a key's score only
 * hashes the prefix's last 0 to 3 bytes and the key. */
struct rendezvous_node {
    uint32_t state;      /* h1 after the prefix's whole blocks */
    uint32_t prefix_len; /* bytes of "<name>-" */
    uint32_t rank;       /* the name's place in sorted order: a tie goes to the greater */
    uint8_t tail_len;    /* prefix bytes after its whole blocks, 0 to 3 */
    uint8_t tail[3];
};

void rendezvous_prepare(struct rendezvous_node *node, const char *prefix, size_t length,
                        uint32_t rank);
uint32_t rendezvous_score(const struct rendezvous_node *node, const char *key, size_t length);
/* The winning node of one key: highest score, a tie to the greater rank. */
uint16_t rendezvous_pick(const struct rendezvous_node *nodes, size_t count, const char *key,
                         size_t length);
/* Keys given as indexes into a table of keys stored end to end (key i is
 * data[offsets[i]:offsets[i + 1]]). */
void rendezvous_pick_many(const struct rendezvous_node *nodes, size_t count,
                          const char *data, const uint64_t *offsets, const uint64_t *indexes,
                          size_t keys, uint16_t *out);

/* Consistent hashing with bounded loads (Mirrokni, Thorup & Zadimoghaddam 2016)
 * with HAProxy's eligibility rule (hash-balance-factor, chash_server_is_eligible
 * in src/lb_chash.c), over a ring's sorted points. A request goes to the owner
 * of the first point at or after its key hash, wrapping, unless that server is
 * full: then on along the ring's points to the first server that is not. With
 * `served` requests assigned before this one, the backend shares out
 * tot = ((served + 1) * factor + 99) / 100 slots by weight (integer arithmetic,
 * each server's part by its cumulative weight, at least 1); a server is
 * eligible while its load is below its slots. Loads only grow: nothing
 * finishes. `positions` is uint32_t[points] or uint64_t[points] (the function's
 * width); weights and cumulative (the sum of the weights before each server, in
 * configuration order) have one entry per server. */
struct bounded_ring {
    const void *positions;
    const uint16_t *owners;
    size_t points;
    const uint64_t *weights;
    const uint64_t *cumulative;
    size_t servers;
    uint64_t total_weight;
    uint64_t factor;
};

/* The next request of a stream whose state is `loads` (one per server) and
 * `served` (their sum): its server, with that state advanced. */
uint16_t bounded_next32(const struct bounded_ring *ring, uint64_t *loads, uint64_t *served,
                        uint32_t key);
uint16_t bounded_next64(const struct bounded_ring *ring, uint64_t *loads, uint64_t *served,
                        uint64_t key);
/* `count` requests in order, continuing the stream. */
void bounded_route32(const struct bounded_ring *ring, uint64_t *loads, uint64_t *served,
                     const uint32_t *keys, size_t count, uint16_t *out);
void bounded_route64(const struct bounded_ring *ring, uint64_t *loads, uint64_t *served,
                     const uint64_t *keys, size_t count, uint16_t *out);

/* Weighted rendezvous, the logarithmic method, as mcrouter's WeightedRendezvousHashFunc:
 * a node is its name's MurmurHash64A keyed with kRendezvousHashSeed (4193360111) and its
 * weight; a key hash is the key's MurmurHash64A keyed with kRendezvousExtraHashSeed
 * (2718281828). Both hashes, and hash128to64, are hashes.h's. Node i scores a key
 * weight * (1 / -log(u)), u = the low 53 bits of hash128to64(node hash, key hash) / 2**53;
 * the first node of the strictly highest score wins (node 0 if none scores above 0). */
struct wrendezvous_node {
    uint64_t hash;
    double weight;
};

double wrendezvous_score(double weight, uint64_t server_hash, uint64_t key_hash);
uint16_t wrendezvous_pick(const struct wrendezvous_node *nodes, size_t count, uint64_t key_hash);
void wrendezvous_pick_many(const struct wrendezvous_node *nodes, size_t count,
                           const uint64_t *key_hashes, size_t keys, uint16_t *out);
/* cffi:end */

#endif
