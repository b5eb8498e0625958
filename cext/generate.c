/* Point generation in C: the hot loop of ring building (name formatting and
 * hashing) without one Python call per point.
 *
 * Which hash code: names of up to one BLAKE2b block (128 bytes, every template
 * in practice) are hashed BLAKE2B_LANES at a time by blake2b_lanes.c, which
 * says why no library does it: OpenSSL's EVP costs 420-560 ns a call against
 * 33 ns a name in lanes. MD5 is md5_many.c's, one name at a time, for the same
 * reason (EVP's per-call cost is several times one MD5 block). Longer BLAKE2b
 * names go through OpenSSL's libcrypto EVP interface, CRC-32 through zlib (the
 * library Python's zlib.crc32 wraps). Why OpenSSL there: a well-kept library,
 * packaged on every Linux distribution (libssl-dev). EVP because libcrypto has no
 * low-level BLAKE2 API.
 *
 * Servers are split over threads in contiguous groups; each group writes its
 * own slice of the output, so the result does not depend on the number of
 * threads.
 */
#include "generate.h"

#include "blake2b_lanes.h"
#include "md5_many.h"

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
static inline void store(const struct gen_job *job, uint64_t point, uint64_t position, size_t s)
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

/* Names waiting for one BLAKE2b lane compression: their message words, lengths, and
 * where each point goes. */
struct lane_batch {
    uint64_t words[16 * BLAKE2B_LANES];
    uint64_t lengths[BLAKE2B_LANES];
    uint64_t points[BLAKE2B_LANES];
    size_t servers[BLAKE2B_LANES];
    size_t filled;
};

static inline uint64_t load_little_endian64(const uint8_t *bytes)
{
    uint64_t value;
    memcpy(&value, bytes, sizeof value);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    value = __builtin_bswap64(value);
#endif
    return value;
}

/* Hash the batch's first `filled` names and store their points: the digest's first 4 or
 * 8 bytes read big-endian, as read_big_endian reads them, from its first little-endian
 * word. Lanes past `filled` hash stale words and are not stored. */
static void lane_hash(const struct gen_job *job, struct lane_batch *batch, size_t filled)
{
    uint64_t first[BLAKE2B_LANES];
    blake2b512_first_words(batch->words, batch->lengths, first);
    if (job->hash_kind == GEN_BLAKE2B_64) {
        for (size_t i = 0; i < filled; i++) {
            ((uint64_t *)job->positions)[batch->points[i]] = __builtin_bswap64(first[i]);
            job->owners[batch->points[i]] = (uint16_t)batch->servers[i];
        }
    } else {
        for (size_t i = 0; i < filled; i++)
            store(job, batch->points[i], __builtin_bswap32((uint32_t)first[i]),
                  batch->servers[i]);
    }
}

/* Queue point `point` of server `s`, whose name is `name_words` words of `block` (zero
 * past the name's `len` bytes); hash the batch once every lane is taken. */
static inline void lane_add(const struct gen_job *job, struct lane_batch *batch,
                            const uint8_t *block, size_t name_words, size_t len, uint64_t point,
                            size_t s)
{
    size_t k = batch->filled++;
    for (size_t w = 0; w < name_words; w++)
        batch->words[w * BLAKE2B_LANES + k] = load_little_endian64(block + 8 * w);
    batch->lengths[k] = len;
    batch->points[k] = point;
    batch->servers[k] = s;
    if (batch->filled == BLAKE2B_LANES) {
        lane_hash(job, batch, BLAKE2B_LANES);
        batch->filled = 0;
    }
}

/* Point j's name from the template: the whole name, after zeroing its first `clear`
 * bytes; j_ends receives where each {j} field ends. Returns the name's length. */
static size_t format_name(const struct gen_job *job, const uint8_t *server, size_t server_len,
                          uint64_t j, uint8_t *name, size_t clear, size_t *j_ends)
{
    size_t len = 0, fields = 0;
    memset(name, 0, clear);
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
            j_ends[fields++] = len;
        }
    }
    return len;
}

/* Point j's name -> point j+1's, when j+1 has as many digits: add one to every {j}
 * field in place. Formatting every name afresh took more time than hashing it. */
static void increment_fields(uint8_t *name, const size_t *j_ends, size_t j_fields)
{
    for (size_t f = 0; f < j_fields; f++) {
        size_t i = j_ends[f] - 1;
        while (name[i] == '9')
            name[i--] = '0';
        name[i]++;
    }
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
    uint64_t most_points = 0;
    for (size_t s = job->first_server; s < job->end_server; s++) {
        size_t len = job->name_offsets[s + 1] - job->name_offsets[s];
        if (len > longest_server)
            longest_server = len;
        if (job->counts[s] > most_points)
            most_points = job->counts[s];
    }
    /* j's widest: the digits of the largest j, not of 2**64-1, so that a name near the
     * block size is not sent to OpenSSL for digits it never has */
    uint8_t digits[MAX_DECIMAL_DIGITS];
    size_t j_digits = write_decimal(digits, most_points ? most_points - 1 : 0);
    max_name = literal_bytes + server_fields * longest_server + j_fields * j_digits;
    int kind = job->hash_kind;
    int blake = kind == GEN_BLAKE2B_32 || kind == GEN_BLAKE2B_64;
    /* Every name fits one block: hash them in lanes, zero-padded to whole words. */
    int lanes = blake && max_name <= BLAKE2B_BLOCK_BYTES;
    size_t name_words = (max_name + 7) / 8;
    uint8_t *name = calloc(max_name + 1 > BLAKE2B_BLOCK_BYTES ? max_name + 1 : BLAKE2B_BLOCK_BYTES,
                           1);
    struct lane_batch batch = {.filled = 0}; /* words zero past every name */
    size_t *j_ends = malloc((j_fields ? j_fields : 1) * sizeof *j_ends);
    EVP_MD_CTX *ctx = NULL;
    EVP_MD *md = NULL;
    if (!name || !j_ends) {
        job->status = GEN_NO_MEMORY;
        goto done;
    }
    if (blake && !lanes) {
        md = EVP_MD_fetch(NULL, "BLAKE2B-512", NULL);
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
        size_t len = 0;
        uint64_t next_power = 0; /* the first j with one digit more than the last formatted */
        for (uint64_t j = 0; j < job->counts[s]; j++) {
            if (j == next_power) {
                len = format_name(job, server, server_len, j, name, lanes ? name_words * 8 : 0,
                                  j_ends);
                /* 10**19 is the largest power of ten below 2**64 */
                next_power = j == 0 ? 10 : next_power > UINT64_MAX / 10 ? UINT64_MAX : j * 10;
            } else {
                increment_fields(name, j_ends, j_fields);
            }
            if (lanes) {
                lane_add(job, &batch, name, name_words, len, point++, s);
            } else if (kind == GEN_FNV1A_FMIX32) {
                store(job, point++, fnv1a_fmix32(name, len), s);
            } else if (kind == GEN_CRC32) {
                store(job, point++, (uint32_t)crc32(0L, name, (uInt)len), s);
            } else if (kind == GEN_MD5_32 || kind == GEN_MD5_KETAMA) {
                uint8_t digest[MD5_DIGEST_BYTES];
                md5_digest(name, len, digest);
                if (kind == GEN_MD5_KETAMA) {
                    for (int q = 0; q < 4; q++)
                        store(job, point++, read_little_endian32(digest + 4 * q), s);
                } else {
                    store(job, point++, read_big_endian(digest, 4), s);
                }
            } else {
                unsigned char digest[EVP_MAX_MD_SIZE];
                unsigned int digest_len = 0;
                if (EVP_DigestInit_ex(ctx, md, NULL) != 1 ||
                    EVP_DigestUpdate(ctx, name, len) != 1 ||
                    EVP_DigestFinal_ex(ctx, digest, &digest_len) != 1) {
                    job->status = GEN_CRYPTO;
                    goto done;
                }
                store(job, point++, read_big_endian(digest, kind == GEN_BLAKE2B_64 ? 8 : 4), s);
            }
        }
    }
    if (lanes && batch.filled)
        lane_hash(job, &batch, batch.filled);
done:
    EVP_MD_CTX_free(ctx);
    EVP_MD_free(md);
    free(j_ends);
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
