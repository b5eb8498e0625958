/* Point generation in C: the hot loop of ring building (name formatting and
 * hashing) without one Python call per point.
 *
 * Which hash code: BLAKE2b and MD5 come from OpenSSL's libcrypto through its
 * EVP interface, CRC-32 from zlib (the library Python's zlib.crc32 wraps), so
 * only the name formatting and the digest-prefix reads are ours. Why OpenSSL:
 * one well-kept library for both digests, packaged on every Linux
 * distribution (libssl-dev), with no vendored crypto to keep up to date. EVP
 * because libcrypto has no low-level BLAKE2 API and its MD5_* functions are
 * deprecated since 3.0. Measured on the development machine (2 GHz Xeon) for
 * one 12-byte name: EVP BLAKE2b-512 520 ns, libsodium's BLAKE2b 450 ns,
 * hashlib.blake2b from Python 720 ns; EVP MD5 250 ns. The digest itself is
 * the floor of this loop: one BLAKE2b compression per point.
 *
 * Servers are split over threads in contiguous groups; each group writes its
 * own slice of the output, so the result does not depend on the number of
 * threads.
 */
#include "generate.h"

#include <openssl/evp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* 2**64-1 has 20 decimal digits. */
#define MAX_DECIMAL_DIGITS 20

struct gen_job {
    int hash_kind;
    const uint8_t *literals;
    const int64_t *segments;
    size_t nsegments;
    const uint8_t *names;
    const uint64_t *name_offsets;
    const uint64_t *counts;
    const uint32_t *bases; /* nginx only */
    size_t first_server, end_server;
    uint64_t first_point; /* output index of first_server's first point */
    void *positions;
    uint16_t *owners;
    int status;
};

static size_t write_decimal(uint8_t *out, uint64_t value)
{
    uint8_t digits[MAX_DECIMAL_DIGITS];
    size_t n = 0;
    do {
        digits[n++] = (uint8_t)('0' + value % 10);
        value /= 10;
    } while (value);
    for (size_t i = 0; i < n; i++)
        out[i] = digits[n - 1 - i];
    return n;
}

static uint32_t fnv1a_fmix32(const uint8_t *data, size_t len)
{
    uint32_t h = 2166136261u; /* FNV-1a 32-bit offset basis */
    for (size_t i = 0; i < len; i++) {
        h ^= data[i];
        h *= 16777619u; /* FNV-1a 32-bit prime */
    }
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

/* Point `point` of server `s`: a position and an owner, or one packed word. */
static void store(const struct gen_job *job, uint64_t point, uint64_t position, size_t s)
{
    if (job->owners) {
        if (job->hash_kind == GEN_BLAKE2B_64)
            ((uint64_t *)job->positions)[point] = position;
        else
            ((uint32_t *)job->positions)[point] = (uint32_t)position;
        job->owners[point] = (uint16_t)s;
    } else {
        ((uint64_t *)job->positions)[point] = position << 16 | (uint64_t)s;
    }
}

static uint64_t read_big_endian(const unsigned char *digest, int width)
{
    uint64_t value = 0;
    for (int i = 0; i < width; i++)
        value = (value << 8) | digest[i];
    return value;
}

static uint32_t read_little_endian32(const unsigned char *digest)
{
    return (uint32_t)digest[0] | (uint32_t)digest[1] << 8 | (uint32_t)digest[2] << 16 |
           (uint32_t)digest[3] << 24;
}

static void *generate_names(void *arg)
{
    struct gen_job *job = arg;
    size_t max_name = 0, literal_bytes = 0, server_fields = 0, j_fields = 0;
    for (size_t k = 0; k < job->nsegments; k++) {
        int64_t kind = job->segments[3 * k];
        if (kind == SEG_LITERAL)
            literal_bytes += (size_t)job->segments[3 * k + 2];
        else if (kind == SEG_SERVER)
            server_fields++;
        else
            j_fields++;
    }
    size_t longest_server = 0;
    for (size_t s = job->first_server; s < job->end_server; s++) {
        size_t len = job->name_offsets[s + 1] - job->name_offsets[s];
        if (len > longest_server)
            longest_server = len;
    }
    max_name = literal_bytes + server_fields * longest_server + j_fields * MAX_DECIMAL_DIGITS;
    uint8_t *name = malloc(max_name + 1);
    EVP_MD_CTX *ctx = NULL;
    EVP_MD *md = NULL;
    if (!name) {
        job->status = GEN_NO_MEMORY;
        return NULL;
    }
    int kind = job->hash_kind;
    if (kind == GEN_BLAKE2B_32 || kind == GEN_BLAKE2B_64 || kind == GEN_MD5_32 ||
        kind == GEN_MD5_KETAMA) {
        int blake = kind == GEN_BLAKE2B_32 || kind == GEN_BLAKE2B_64;
        md = EVP_MD_fetch(NULL, blake ? "BLAKE2B-512" : "MD5", NULL);
        ctx = EVP_MD_CTX_new();
        if (!md || !ctx) {
            job->status = GEN_CRYPTO;
            goto done;
        }
    }
    uint64_t point = job->first_point;
    for (size_t s = job->first_server; s < job->end_server; s++) {
        const uint8_t *server = job->names + job->name_offsets[s];
        size_t server_len = job->name_offsets[s + 1] - job->name_offsets[s];
        for (uint64_t j = 0; j < job->counts[s]; j++) {
            size_t len = 0;
            for (size_t k = 0; k < job->nsegments; k++) {
                const int64_t *seg = job->segments + 3 * k;
                if (seg[0] == SEG_LITERAL) {
                    memcpy(name + len, job->literals + seg[1], (size_t)seg[2]);
                    len += (size_t)seg[2];
                } else if (seg[0] == SEG_SERVER) {
                    memcpy(name + len, server, server_len);
                    len += server_len;
                } else {
                    len += write_decimal(name + len, j);
                }
            }
            if (kind == GEN_FNV1A_FMIX32) {
                store(job, point++, fnv1a_fmix32(name, len), s);
            } else if (kind == GEN_CRC32) {
                store(job, point++, (uint32_t)crc32(0L, name, (uInt)len), s);
            } else {
                unsigned char digest[EVP_MAX_MD_SIZE];
                unsigned int digest_len = 0;
                if (EVP_DigestInit_ex(ctx, md, NULL) != 1 ||
                    EVP_DigestUpdate(ctx, name, len) != 1 ||
                    EVP_DigestFinal_ex(ctx, digest, &digest_len) != 1) {
                    job->status = GEN_CRYPTO;
                    goto done;
                }
                if (kind == GEN_MD5_KETAMA) {
                    for (int q = 0; q < 4; q++)
                        store(job, point++, read_little_endian32(digest + 4 * q), s);
                } else {
                    store(job, point++, read_big_endian(digest, kind == GEN_BLAKE2B_64 ? 8 : 4),
                          s);
                }
            }
        }
    }
done:
    EVP_MD_CTX_free(ctx);
    EVP_MD_free(md);
    free(name);
    return NULL;
}

static void *generate_nginx_chain(void *arg)
{
    struct gen_job *job = arg;
    uint64_t point = job->first_point;
    for (size_t s = job->first_server; s < job->end_server; s++) {
        uint32_t previous = 0;
        for (uint64_t j = 0; j < job->counts[s]; j++) {
            /* nginx writes the previous hash little-endian on every host */
            unsigned char bytes[4] = {(unsigned char)previous, (unsigned char)(previous >> 8),
                                      (unsigned char)(previous >> 16),
                                      (unsigned char)(previous >> 24)};
            previous = (uint32_t)crc32(job->bases[s], bytes, 4);
            store(job, point++, previous, s);
        }
    }
    return NULL;
}

/* Split servers into `threads` contiguous groups of about equal point counts and run
 * `work` on each; the first group runs on the calling thread. */
static int run_split(struct gen_job *model, size_t nservers, uint64_t points_per_count,
                     int threads, void *(*work)(void *))
{
    if (threads < 1)
        return GEN_BAD_ARGUMENT;
    if ((size_t)threads > nservers)
        threads = nservers ? (int)nservers : 1;
    uint64_t total = 0;
    for (size_t s = 0; s < nservers; s++)
        total += model->counts[s];
    struct gen_job *jobs = calloc((size_t)threads, sizeof *jobs);
    pthread_t *ids = calloc((size_t)threads, sizeof *ids);
    int *started = calloc((size_t)threads, sizeof *started);
    if (!jobs || !ids || !started) {
        free(jobs);
        free(ids);
        free(started);
        return GEN_NO_MEMORY;
    }
    size_t server = 0;
    uint64_t done = 0;
    for (int t = 0; t < threads; t++) {
        jobs[t] = *model;
        jobs[t].first_server = server;
        jobs[t].first_point = done * points_per_count;
        /* this group ends where the running total reaches (t+1)/threads of all points */
        uint64_t target = total / (uint64_t)threads * (uint64_t)(t + 1);
        while (server < nservers && (t == threads - 1 || done < target))
            done += model->counts[server++];
        jobs[t].end_server = server;
        jobs[t].status = GEN_OK;
    }
    int status = GEN_OK;
    for (int t = 1; t < threads; t++) {
        if (pthread_create(&ids[t], NULL, work, &jobs[t]) == 0)
            started[t] = 1;
        else
            status = GEN_THREAD;
    }
    if (status == GEN_OK)
        work(&jobs[0]);
    for (int t = 1; t < threads; t++)
        if (started[t])
            pthread_join(ids[t], NULL);
    for (int t = 0; t < threads && status == GEN_OK; t++)
        status = jobs[t].status;
    free(jobs);
    free(ids);
    free(started);
    return status;
}

int ring_generate_points(int hash_kind, const uint8_t *literals, const int64_t *segments,
                         size_t nsegments, const uint8_t *names, const uint64_t *name_offsets,
                         const uint64_t *counts, size_t nservers, void *positions,
                         uint16_t *owners, int threads)
{
    if (hash_kind < GEN_BLAKE2B_32 || hash_kind > GEN_MD5_KETAMA ||
        (!owners && hash_kind == GEN_BLAKE2B_64))
        return GEN_BAD_ARGUMENT;
    for (size_t k = 0; k < nsegments; k++)
        if (segments[3 * k] < SEG_LITERAL || segments[3 * k] > SEG_J)
            return GEN_BAD_ARGUMENT;
    struct gen_job model = {
        .hash_kind = hash_kind, .literals = literals, .segments = segments,
        .nsegments = nsegments, .names = names, .name_offsets = name_offsets,
        .counts = counts, .positions = positions, .owners = owners,
    };
    return run_split(&model, nservers, hash_kind == GEN_MD5_KETAMA ? 4 : 1, threads,
                     generate_names);
}

int ring_generate_nginx(const uint32_t *bases, const uint64_t *counts, size_t nservers,
                        void *positions, uint16_t *owners, int threads)
{
    struct gen_job model = {
        .hash_kind = GEN_CRC32, .counts = counts, .bases = bases, .positions = positions, .owners = owners,
    };
    return run_split(&model, nservers, 1, threads, generate_nginx_chain);
}
