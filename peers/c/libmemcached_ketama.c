/* libmemcached's ketama continuum as a ring-harness peer through the C ABI.
 *
 * Build:  cc -O2 -shared -fPIC -I "$(dirname "$(python -m harness abi --path)")" \
 *            libmemcached_ketama.c -lmemcached -o libmemcached_ketama.so
 *
 * Servers are "host:port" (or "host", port 11211) with integer weights. The client is set
 * to MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED: MD5 of "host:port-i" (or "host-i" on the default
 * port 11211: libmemcached leaves the default port out of the point names), four points per
 * digest, floor(share * 40 * servers) digests per server; the key's hash is the first four
 * bytes of its MD5, little-endian; the owner is the first point >= the hash, wrapping. That
 * is our `libmemcached` construction (harness/recipes/constructions/libmemcached.py: the
 * digest counts in single precision, the default port left out of the names). No server is
 * contacted: memcached_generate_hash only computes the owner's index, in the order servers
 * were added. libmemcached 1.1.4 asserts (and so aborts the process) past 100 servers
 * (MEMCACHED_CONTINUUM_SIZE), so this refuses more.
 *
 * The parameter string picks libmemcached's distribution (libmemcached/hosts.cc,
 * update_continuum, and libmemcached/behavior.cc of libmemcached 1.1.4):
 *   "" or "mode=weighted"  MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, as above;
 *   "mode=spy"             the same, then MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY, its
 *                          spymemcached compatibility mode: points named "/host:port-i",
 *                          the port always kept (the `libmemcached` construction's
 *                          names = "spy");
 *   "mode=ketama"          MEMCACHED_BEHAVIOR_KETAMA with MEMCACHED_HASH_MD5, unweighted:
 *                          100 points per server, one per name ("host:port-i", or "host-i"
 *                          on port 11211), each the first four bytes of the name's MD5,
 *                          little-endian (`libmemcached` with mode = "ketama"); weights
 *                          other than 1 are refused (the client would ignore them).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libmemcached/memcached.h>

#include "ring_peer.h"

/* MEMCACHED_CONTINUUM_SIZE / MEMCACHED_POINTS_PER_SERVER: update_continuum asserts it. */
#define MAX_SERVERS 100

struct ring_peer {
    memcached_st *client;
};

uint32_t ring_peer_abi_version(void) { return RING_PEER_ABI_VERSION; }

/* The distribution the parameter string asks for. */
enum mode { MODE_WEIGHTED, MODE_SPY, MODE_KETAMA };

static int parse_mode(const char *params, enum mode *mode) {
    if (params[0] == '\0' || strcmp(params, "mode=weighted") == 0) *mode = MODE_WEIGHTED;
    else if (strcmp(params, "mode=spy") == 0) *mode = MODE_SPY;
    else if (strcmp(params, "mode=ketama") == 0) *mode = MODE_KETAMA;
    else return -1;
    return 0;
}

static int split_host_port(const char *name, char *host, size_t host_size, in_port_t *port) {
    const char *colon = strrchr(name, ':');
    size_t length = colon ? (size_t)(colon - name) : strlen(name);
    if (length == 0 || length >= host_size) return -1;
    memcpy(host, name, length);
    host[length] = '\0';
    *port = MEMCACHED_DEFAULT_PORT;
    if (colon) {
        char *end;
        long value = strtol(colon + 1, &end, 10);
        if (*end != '\0' || value < 1 || value > 65535) return -1;
        *port = (in_port_t)value;
    }
    return 0;
}

ring_peer *ring_peer_build(const char *const *names, const double *weights, uint32_t count,
                           const char *params, char *error, size_t error_size) {
    if (count > MAX_SERVERS) {
        snprintf(error, error_size, "libmemcached 1.1.4 holds at most %d servers in its "
                 "continuum (got %u)", MAX_SERVERS, count);
        return NULL;
    }
    enum mode mode;
    if (parse_mode(params, &mode) != 0) {
        snprintf(error, error_size, "params must be empty or mode=weighted, mode=spy or "
                 "mode=ketama (got \"%s\")", params);
        return NULL;
    }
    memcached_server_list_st list = NULL;
    memcached_return_t rc = MEMCACHED_SUCCESS;
    for (uint32_t i = 0; i < count; i++) {
        char host[256];
        in_port_t port;
        if (split_host_port(names[i], host, sizeof host, &port) != 0) {
            snprintf(error, error_size, "server %u: \"%s\" is not host:port", i, names[i]);
            memcached_server_list_free(list);
            return NULL;
        }
        if (mode == MODE_KETAMA && weights[i] != 1) {
            snprintf(error, error_size, "server \"%s\": mode=ketama takes no weights "
                     "(got %g)", names[i], weights[i]);
            memcached_server_list_free(list);
            return NULL;
        }
        if (weights[i] < 1 || weights[i] != (double)(uint32_t)weights[i]) {
            snprintf(error, error_size, "server \"%s\": weight must be a positive integer "
                     "(got %g)", names[i], weights[i]);
            memcached_server_list_free(list);
            return NULL;
        }
        list = memcached_server_list_append_with_weight(list, host, port,
                                                        (uint32_t)weights[i], &rc);
        if (rc != MEMCACHED_SUCCESS) {
            snprintf(error, error_size, "server \"%s\": %s", names[i],
                     memcached_strerror(NULL, rc));
            memcached_server_list_free(list);
            return NULL;
        }
    }
    ring_peer *peer = malloc(sizeof *peer);
    peer->client = memcached_create(NULL);
    if (mode == MODE_KETAMA) {
        /* Unweighted ketama: 100 points per server, one per name, hashed (like the keys)
         * with the client's hash, MD5 here. */
        memcached_behavior_set(peer->client, MEMCACHED_BEHAVIOR_KETAMA, 1);
        memcached_behavior_set(peer->client, MEMCACHED_BEHAVIOR_HASH, MEMCACHED_HASH_MD5);
    } else {
        memcached_behavior_set(peer->client, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1);
        /* The spymemcached compatibility mode keeps the weighted flag and MD5 and names the
         * points "/host:port-i" (libmemcached/hosts.cc, update_continuum). */
        if (mode == MODE_SPY)
            memcached_behavior_set_distribution(peer->client,
                                                MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY);
    }
    /* One push builds the continuum once (adding servers one by one rebuilds it each time). */
    rc = memcached_server_push(peer->client, list);
    memcached_server_list_free(list);
    if (rc != MEMCACHED_SUCCESS) {
        snprintf(error, error_size, "memcached_server_push: %s",
                 memcached_strerror(peer->client, rc));
        ring_peer_free(peer);
        return NULL;
    }
    return peer;
}

int ring_peer_route(const ring_peer *peer, const uint8_t *keys, const uint64_t *offsets,
                    size_t n, uint16_t *owners) {
    for (size_t i = 0; i < n; i++) {
        owners[i] = (uint16_t)memcached_generate_hash(
            peer->client, (const char *)keys + offsets[i], (size_t)(offsets[i + 1] - offsets[i]));
    }
    return 0;
}

int64_t ring_peer_entries(const ring_peer *peer) {
    return peer->client->ketama.continuum_points_counter;
}

int64_t ring_peer_nbytes(const ring_peer *peer) {
    /* The continuum's items are two uint32 each (index, value: libmemcached/continuum.hpp);
     * the client structure around it is not counted here (memray counts everything). */
    return (int64_t)peer->client->ketama.continuum_count * 2 * (int64_t)sizeof(uint32_t);
}

void ring_peer_free(ring_peer *peer) {
    if (peer == NULL) return;
    memcached_free(peer->client);
    free(peer);
}
