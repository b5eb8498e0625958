/* A process-protocol peer that serves any ring_peer ABI library over stdin/stdout.
 *
 * Build:  cc -O2 -I "$(dirname "$(python -m harness abi --path)")" abi_pipe.c -ldl -o abi_pipe
 * Run:    abi_pipe ./libmemcached_ketama.so
 *
 * It exists so that the same library can be measured both ways (in-process and through a
 * pipe) and the difference is the protocol's cost; it is also a complete C example of the
 * protocol (docs/guide/foreign-peers.md). It answers HELLO, BUILD, ROUTE, TIME, MEMORY and
 * QUIT; LOOKUP when the library exports ring_peer_lookup; no ADD or REMOVE. Given the
 * region's descriptor (RING_PEER_SHARED_FD) and asked for protocol version 2, it also takes
 * shared batches: SHARE, ROUTE_SHARED, TIME_SHARED and LOOKUP_SHARED, which route the keys
 * where they lie in the region and write the owners there, with no copy either way.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

#include "ring_peer.h"

enum { FEATURE_LOOKUP = 1, FEATURE_TIME = 2, FEATURE_MEMORY = 4, FEATURE_SHARED = 16 };

static uint32_t (*abi_version)(void);
static ring_peer *(*build)(const char *const *, const double *, uint32_t, const char *, char *,
                           size_t);
static int (*route)(const ring_peer *, const uint8_t *, const uint64_t *, size_t, uint16_t *);
static int (*lookup)(const ring_peer *, const uint64_t *, size_t, uint16_t *);
static int64_t (*nbytes)(const ring_peer *);
static int64_t (*entries)(const ring_peer *);

/* The request being read: its bytes, and how far the fields have been taken. */
static uint8_t *request;
static size_t request_size, request_at;

/* The shared region (protocol 2): its descriptor (-1 without one), and our mapping of it. */
static int shared_fd = -1;
static uint8_t *region;
static uint64_t region_size;

static void fail(const char *why) {
    fprintf(stderr, "abi_pipe: %s\n", why);
    exit(1);
}

static void read_exactly(void *into, size_t size) {
    if (fread(into, 1, size, stdin) != size) exit(feof(stdin) ? 0 : 1);
}

static void take(void *into, size_t size) {
    if (request_at + size > request_size) fail("request cut short");
    memcpy(into, request + request_at, size);
    request_at += size;
}

/* Little-endian on the wire; this adapter runs on little-endian machines only. */
static uint32_t take_u32(void) { uint32_t v; take(&v, 4); return v; }
static uint64_t take_u64(void) { uint64_t v; take(&v, 8); return v; }
static double take_f64(void) { double v; take(&v, 8); return v; }

/* Whether `size` bytes at `at` lie in the region, `align`-aligned (no overflow). */
static int in_region(uint64_t at, uint64_t size, uint64_t align) {
    return at % align == 0 && at <= region_size && size <= region_size - at;
}

/* SHARE: map the region at the size the harness gives (it only grows: sealed so). */
static const char *share(uint64_t size) {
    struct stat file;
    if (shared_fd < 0) return "no shared region (RING_PEER_SHARED_FD is not set)";
    if (fstat(shared_fd, &file) != 0 || (uint64_t)file.st_size < size || size == 0)
        return "SHARE of a size the region does not have";
    if (region) munmap(region, region_size);
    void *mapped = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, shared_fd, 0);
    region = mapped == MAP_FAILED ? NULL : mapped;
    region_size = region ? size : 0;
    return region ? NULL : "cannot map the shared region";
}

/* A ROUTE_SHARED payload: n, then where the offsets, keys and owners lie; every bound is
 * checked, since a batch read or written outside the region would be a crash. */
static const char *take_shared_keys(uint32_t *n, const uint8_t **keys,
                                    const uint64_t **offsets, uint16_t **owners) {
    *n = take_u32();
    uint64_t offsets_at = take_u64(), keys_at = take_u64(), owners_at = take_u64();
    if (!region) return "a shared batch before SHARE";
    if (!in_region(offsets_at, ((uint64_t)*n + 1) * 8, 8) ||
        !in_region(owners_at, (uint64_t)*n * 2, 2) || !in_region(keys_at, 0, 1))
        return "a shared batch outside the region";
    *offsets = (const uint64_t *)(region + offsets_at);
    for (uint32_t i = 0; i < *n; i++)
        if ((*offsets)[i] > (*offsets)[i + 1]) return "shared offsets that go backwards";
    if ((*offsets)[*n] > region_size - keys_at) return "shared keys outside the region";
    *keys = region + keys_at;
    *owners = (uint16_t *)(region + owners_at);
    return NULL;
}

static char *take_string(void) {
    uint32_t length = take_u32();
    char *text = malloc((size_t)length + 1);
    take(text, length);
    text[length] = '\0';
    return text;
}

/* A reply: u32 length, status 'K', payload (given in pieces, written as one frame). */
static void reply(const void *a, size_t a_size, const void *b, size_t b_size) {
    uint32_t length = (uint32_t)(1 + a_size + b_size);
    fwrite(&length, 4, 1, stdout);
    fputc('K', stdout);
    if (a_size) fwrite(a, 1, a_size, stdout);
    if (b_size) fwrite(b, 1, b_size, stdout);
    fflush(stdout);
}

static void reply_error(const char *message) {
    uint32_t size = (uint32_t)strlen(message), length = 1 + 4 + size;
    fwrite(&length, 4, 1, stdout);
    fputc('E', stdout);
    fwrite(&size, 4, 1, stdout);
    fwrite(message, 1, size, stdout);
    fflush(stdout);
}

/* A ROUTE payload: n, n + 1 u32 offsets, the key bytes; widened to the ABI's offsets. */
static size_t take_keys(const uint8_t **keys, uint64_t **offsets) {
    uint32_t n = take_u32();
    *offsets = malloc(((size_t)n + 1) * sizeof **offsets);
    for (size_t i = 0; i <= n; i++) (*offsets)[i] = take_u32();
    if (request_at + (*offsets)[n] > request_size) fail("keys cut short");
    *keys = request + request_at;
    return n;
}

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Routes the n keys `repeats` times into owners, each time's ns per key in times[r]:
 * what TIME does, and ROUTE with one repeat whose time is not sent, on keys from the
 * pipe or from the shared batch alike. Returns 0, or the library's status once a route
 * fails (the times after it are not written). */
static int timed_routes(const ring_peer *peer, const uint8_t *keys, const uint64_t *offsets,
                        uint32_t n, uint16_t *owners, uint32_t repeats, double *times)
{
    int status = 0;
    for (uint32_t r = 0; r < repeats && status == 0; r++) {
        double start = now_ns();
        status = route(peer, keys, offsets, n, owners);
        times[r] = n ? (now_ns() - start) / n : 0.0;
    }
    return status;
}

int main(int argc, char **argv) {
    if (argc != 2) fail("usage: abi_pipe LIBRARY.so");
    void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!library) fail(dlerror());
    *(void **)&abi_version = dlsym(library, "ring_peer_abi_version");
    *(void **)&build = dlsym(library, "ring_peer_build");
    *(void **)&route = dlsym(library, "ring_peer_route");
    *(void **)&lookup = dlsym(library, "ring_peer_lookup");
    *(void **)&nbytes = dlsym(library, "ring_peer_nbytes");
    *(void **)&entries = dlsym(library, "ring_peer_entries");
    if (!abi_version || !build || !route || !nbytes) fail("not a ring_peer library");
    if (abi_version() != RING_PEER_ABI_VERSION) fail("another ring_peer ABI version");
    const char *fd_text = getenv("RING_PEER_SHARED_FD");
    if (fd_text && *fd_text) shared_fd = atoi(fd_text);
    ring_peer *peer = NULL;
    uint32_t servers = 0;
    for (;;) {
        uint32_t length;
        read_exactly(&length, 4);
        if (length == 0) fail("empty frame");
        request = realloc(request, length);
        read_exactly(request, length);
        request_size = length;
        request_at = 1;
        switch (request[0]) {
        case 'H': {
            /* The harness asks with the highest version it speaks; we answer ours. */
            uint32_t version = take_u32();
            if (version < 1) { reply_error("speaks protocol versions 1 and 2 only"); break; }
            version = version >= 2 ? 2 : 1;
            const char name[] = "abi_pipe", *path = argv[1];
            uint32_t features = FEATURE_TIME | FEATURE_MEMORY | (lookup ? FEATURE_LOOKUP : 0) |
                                (version == 2 && shared_fd >= 0 ? FEATURE_SHARED : 0);
            uint32_t name_size = sizeof name - 1, path_size = (uint32_t)strlen(path);
            size_t size = 16 + name_size + path_size;
            uint8_t *payload = malloc(size), *at = payload;
            memcpy(at, &version, 4); memcpy(at + 4, &features, 4);
            memcpy(at + 8, &name_size, 4); memcpy(at + 12, name, name_size);
            at += 12 + name_size;
            memcpy(at, &path_size, 4); memcpy(at + 4, path, path_size);
            reply(payload, size, NULL, 0);
            free(payload);
            break;
        }
        case 'B': {
            servers = take_u32();
            char **names = malloc(servers * sizeof *names);
            double *weights = malloc(servers * sizeof *weights);
            for (uint32_t i = 0; i < servers; i++) {
                names[i] = take_string();
                weights[i] = take_f64();
            }
            char *params = take_string(), error[512] = "";
            peer = build((const char *const *)names, weights, servers, params, error,
                         sizeof error);
            for (uint32_t i = 0; i < servers; i++) free(names[i]);
            free(names); free(weights); free(params);
            if (!peer) { reply_error(error); break; }
            int64_t count = entries ? entries(peer) : -1;
            reply(&count, 8, NULL, 0);
            break;
        }
        case 'R':
        case 'T': {
            uint32_t repeats = request[0] == 'T' ? take_u32() : 1;
            const uint8_t *keys;
            uint64_t *offsets;
            uint32_t n = (uint32_t)take_keys(&keys, &offsets);
            uint16_t *owners = malloc(((size_t)n + 1) * sizeof *owners);
            double *times = malloc(((size_t)repeats + 1) * sizeof *times);
            int status = timed_routes(peer, keys, offsets, n, owners, repeats, times);
            if (status != 0) reply_error("ring_peer_route failed");
            else if (request[0] == 'R') reply(&n, 4, owners, (size_t)n * 2);
            else reply(&repeats, 4, times, (size_t)repeats * 8);
            free(owners); free(times); free(offsets);
            break;
        }
        case 'L': {
            uint32_t n = take_u32();
            uint64_t *hashes = malloc(((size_t)n + 1) * 8);
            take(hashes, (size_t)n * 8);
            uint16_t *owners = malloc(((size_t)n + 1) * sizeof *owners);
            if (!lookup || lookup(peer, hashes, n, owners) != 0) reply_error("no lookup");
            else reply(&n, 4, owners, (size_t)n * 2);
            free(hashes); free(owners);
            break;
        }
        case 'S': {
            const char *why = share(take_u64());
            if (why) reply_error(why);
            else reply(NULL, 0, NULL, 0);
            break;
        }
        case 'r':
        case 't': {
            uint32_t repeats = request[0] == 't' ? take_u32() : 1, n;
            const uint8_t *keys;
            const uint64_t *offsets;
            uint16_t *owners;
            const char *why = take_shared_keys(&n, &keys, &offsets, &owners);
            if (why) { reply_error(why); break; }
            double *times = malloc(((size_t)repeats + 1) * sizeof *times);
            int status = timed_routes(peer, keys, offsets, n, owners, repeats, times);
            if (status != 0) reply_error("ring_peer_route failed");
            else if (request[0] == 'r') reply(&n, 4, NULL, 0);
            else reply(&repeats, 4, times, (size_t)repeats * 8);
            free(times);
            break;
        }
        case 'l': {
            uint32_t n = take_u32();
            uint64_t hashes_at = take_u64(), owners_at = take_u64();
            if (!region) { reply_error("a shared batch before SHARE"); break; }
            if (!in_region(hashes_at, (uint64_t)n * 8, 8) ||
                !in_region(owners_at, (uint64_t)n * 2, 2)) {
                reply_error("a shared batch outside the region");
                break;
            }
            if (!lookup || lookup(peer, (const uint64_t *)(region + hashes_at), n,
                                  (uint16_t *)(region + owners_at)) != 0)
                reply_error("no lookup");
            else reply(&n, 4, NULL, 0);
            break;
        }
        case 'M': {
            int64_t bytes = nbytes(peer);
            reply(&bytes, 8, NULL, 0);
            break;
        }
        case 'Q':
            return 0;
        default:
            reply_error("unsupported request");
        }
    }
}
