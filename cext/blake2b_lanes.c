/* BLAKE2b-512 in SIMD lanes (see blake2b_lanes.h), written from RFC 7693 ("The BLAKE2
 * Cryptographic Hash and Message Authentication Code"): its IV, its message schedule
 * SIGMA, its mixing function G and its compression F, with the state of each of the
 * RFC's 64-bit words widened to a vector of BLAKE2B_LANES words.
 *
 * Why not a library: OpenSSL's EVP, libsodium and the reference BLAKE2 sources all hash
 * one message per call, and a point name is a single block, so the call costs more than
 * the hash. Measured on the development machine (Xeon with AVX-512, CPU time per 12-byte
 * name, one core): EVP init/update/final 535 ns, EVP_MD_CTX_copy_ex from a ready
 * context 420 ns, one-shot EVP_Digest 560 ns, libsodium 240 ns; these lanes 33 ns with
 * AVX-512 (8 compressions per instruction stream), about 150 ns with SSE2 alone and no
 * better with AVX2 at 8 lanes (93 ns at 4 lanes; not kept: the machines this project
 * runs on have AVX-512). Every digest is compared with hashlib's in
 * tests/unit/test_blake2b_lanes.py, at every length up to a block.
 *
 * GCC's vector extensions keep one source for every target: target_clones compiles it
 * for AVX-512 (vprorq does each rotation in one instruction) and for the baseline, and
 * picks one when the library loads (a CPU or a valgrind without AVX-512 gets the
 * baseline).
 */
#include "blake2b_lanes.h"

#include <string.h>

typedef uint64_t lanes_t __attribute__((vector_size(8 * BLAKE2B_LANES)));

static const uint64_t IV[8] = {
    0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL,
    0xa54ff53a5f1d36f1ULL, 0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL,
    0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL};

/* RFC 7693 section 2.7; rounds 10 and 11 reuse rows 0 and 1. */
static const uint8_t SIGMA[12][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
    {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
    {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
    {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
    {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3}};

#define ROTR64(x, n) (((x) >> (n)) | ((x) << (64 - (n))))

/* RFC 7693 section 3.1, the mixing function G, with x and y message words. */
#define MIX(a, b, c, d, x, y)                                                               \
    do {                                                                                     \
        a = a + b + (x);                                                                     \
        d = ROTR64(d ^ a, 32);                                                               \
        c = c + d;                                                                           \
        b = ROTR64(b ^ c, 24);                                                               \
        a = a + b + (y);                                                                     \
        d = ROTR64(d ^ a, 16);                                                               \
        c = c + d;                                                                           \
        b = ROTR64(b ^ c, 63);                                                               \
    } while (0)

__attribute__((target_clones("avx512f", "default"))) void
blake2b512_first_words(const uint64_t *words, const uint64_t *lengths, uint64_t *first_words)
{
    lanes_t m[16], v[16], counter;
    for (int w = 0; w < 16; w++)
        memcpy(&m[w], words + w * BLAKE2B_LANES, sizeof m[w]);
    memcpy(&counter, lengths, sizeof counter);
    /* Parameter block of an unkeyed 64-byte digest (RFC 7693 section 2.5):
     * h[0] = IV[0] ^ 0x01010000 ^ (key length << 8) ^ digest length. */
    const uint64_t h0 = IV[0] ^ 0x01010000ULL ^ 64;
    const lanes_t zero = {0};
    /* RFC 7693 section 3.2, F: the state h (the IV but for h[0]) and the IV, the byte
     * counter (one block: the message length, high word 0) in v[12], and v[14]
     * inverted because this block is the last. */
    for (int i = 0; i < 8; i++) {
        v[i] = zero + (i == 0 ? h0 : IV[i]);
        v[i + 8] = zero + IV[i];
    }
    v[12] ^= counter;
    v[14] = ~v[14];
    for (int r = 0; r < 12; r++) {
        const uint8_t *s = SIGMA[r];
        MIX(v[0], v[4], v[8], v[12], m[s[0]], m[s[1]]);
        MIX(v[1], v[5], v[9], v[13], m[s[2]], m[s[3]]);
        MIX(v[2], v[6], v[10], v[14], m[s[4]], m[s[5]]);
        MIX(v[3], v[7], v[11], v[15], m[s[6]], m[s[7]]);
        MIX(v[0], v[5], v[10], v[15], m[s[8]], m[s[9]]);
        MIX(v[1], v[6], v[11], v[12], m[s[10]], m[s[11]]);
        MIX(v[2], v[7], v[8], v[13], m[s[12]], m[s[13]]);
        MIX(v[3], v[4], v[9], v[14], m[s[14]], m[s[15]]);
    }
    /* h[0] ^= v[0] ^ v[8]: the digest's first 8 bytes, little-endian. */
    lanes_t first = v[0] ^ v[8] ^ h0;
    memcpy(first_words, &first, sizeof first);
}

int blake2b512_prefixes_many(const uint8_t *data, const uint64_t *offsets, size_t n, int width,
                             void *out)
{
    if (width != 4 && width != 8)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (offsets[i + 1] - offsets[i] > BLAKE2B_BLOCK_BYTES)
            return -1;
    uint64_t words[16 * BLAKE2B_LANES], lengths[BLAKE2B_LANES], first[BLAKE2B_LANES];
    for (size_t start = 0; start < n; start += BLAKE2B_LANES) {
        size_t lanes = n - start < BLAKE2B_LANES ? n - start : BLAKE2B_LANES;
        memset(words, 0, sizeof words);
        memset(lengths, 0, sizeof lengths);
        for (size_t k = 0; k < lanes; k++) {
            uint8_t block[BLAKE2B_BLOCK_BYTES] = {0};
            size_t len = offsets[start + k + 1] - offsets[start + k];
            memcpy(block, data + offsets[start + k], len);
            lengths[k] = len;
            for (size_t w = 0; w < (len + 7) / 8; w++) {
                uint64_t word = 0;
                for (int b = 7; b >= 0; b--)
                    word = word << 8 | block[8 * w + (size_t)b];
                words[w * BLAKE2B_LANES + k] = word;
            }
        }
        blake2b512_first_words(words, lengths, first);
        /* the digest's first bytes read big-endian: byte i is bits 8i..8i+7 of the word */
        for (size_t k = 0; k < lanes; k++) {
            if (width == 8)
                ((uint64_t *)out)[start + k] = __builtin_bswap64(first[k]);
            else
                ((uint32_t *)out)[start + k] = __builtin_bswap32((uint32_t)first[k]);
        }
    }
    return 0;
}
