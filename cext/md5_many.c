/* MD5 (RFC 1321) of batches of names: see md5_many.h for why it is ours.
 *
 * The 64 steps below are section 3.4's four rounds written out: each adds one of the
 * auxiliary functions F, G, H, I of three state words, one message word X[k] and the
 * constant T[i] = floor(4294967296 * abs(sin(i))) to a state word, rotates it left by s
 * and adds the next word. Written out rather than looped so that k, s and T[i] are
 * immediates: the compiler keeps the state in registers. */
#include "md5_many.h"

#include <string.h>

#define MD5_BLOCK_BYTES 64
/* the padding's 0x80 byte and the 8-byte bit length must follow the name's last block */
#define MD5_TAIL_ROOM (MD5_BLOCK_BYTES - 9)

#define F(x, y, z) (((x) & (y)) | (~(x) & (z)))
#define G(x, y, z) (((x) & (z)) | ((y) & ~(z)))
#define H(x, y, z) ((x) ^ (y) ^ (z))
#define I(x, y, z) ((y) ^ ((x) | ~(z)))
#define ROTL(x, s) (((x) << (s)) | ((x) >> (32 - (s))))
#define STEP(f, a, b, c, d, k, s, t)            \
    do {                                        \
        (a) += f((b), (c), (d)) + x[k] + (t);   \
        (a) = ROTL((a), (s));                   \
        (a) += (b);                             \
    } while (0)

/* The 64 steps on state words a, b, c, d and message words x[0..15], of any one type:
 * uint32_t for one name, a vector of MD5_LANES of them for lanes of names. */
#define MD5_STEPS() \
    do { \
    /* round 1 */ \
    STEP(F, a, b, c, d,  0,  7, 0xd76aa478u); \
    STEP(F, d, a, b, c,  1, 12, 0xe8c7b756u); \
    STEP(F, c, d, a, b,  2, 17, 0x242070dbu); \
    STEP(F, b, c, d, a,  3, 22, 0xc1bdceeeu); \
    STEP(F, a, b, c, d,  4,  7, 0xf57c0fafu); \
    STEP(F, d, a, b, c,  5, 12, 0x4787c62au); \
    STEP(F, c, d, a, b,  6, 17, 0xa8304613u); \
    STEP(F, b, c, d, a,  7, 22, 0xfd469501u); \
    STEP(F, a, b, c, d,  8,  7, 0x698098d8u); \
    STEP(F, d, a, b, c,  9, 12, 0x8b44f7afu); \
    STEP(F, c, d, a, b, 10, 17, 0xffff5bb1u); \
    STEP(F, b, c, d, a, 11, 22, 0x895cd7beu); \
    STEP(F, a, b, c, d, 12,  7, 0x6b901122u); \
    STEP(F, d, a, b, c, 13, 12, 0xfd987193u); \
    STEP(F, c, d, a, b, 14, 17, 0xa679438eu); \
    STEP(F, b, c, d, a, 15, 22, 0x49b40821u); \
    /* round 2 */ \
    STEP(G, a, b, c, d,  1,  5, 0xf61e2562u); \
    STEP(G, d, a, b, c,  6,  9, 0xc040b340u); \
    STEP(G, c, d, a, b, 11, 14, 0x265e5a51u); \
    STEP(G, b, c, d, a,  0, 20, 0xe9b6c7aau); \
    STEP(G, a, b, c, d,  5,  5, 0xd62f105du); \
    STEP(G, d, a, b, c, 10,  9, 0x02441453u); \
    STEP(G, c, d, a, b, 15, 14, 0xd8a1e681u); \
    STEP(G, b, c, d, a,  4, 20, 0xe7d3fbc8u); \
    STEP(G, a, b, c, d,  9,  5, 0x21e1cde6u); \
    STEP(G, d, a, b, c, 14,  9, 0xc33707d6u); \
    STEP(G, c, d, a, b,  3, 14, 0xf4d50d87u); \
    STEP(G, b, c, d, a,  8, 20, 0x455a14edu); \
    STEP(G, a, b, c, d, 13,  5, 0xa9e3e905u); \
    STEP(G, d, a, b, c,  2,  9, 0xfcefa3f8u); \
    STEP(G, c, d, a, b,  7, 14, 0x676f02d9u); \
    STEP(G, b, c, d, a, 12, 20, 0x8d2a4c8au); \
    /* round 3 */ \
    STEP(H, a, b, c, d,  5,  4, 0xfffa3942u); \
    STEP(H, d, a, b, c,  8, 11, 0x8771f681u); \
    STEP(H, c, d, a, b, 11, 16, 0x6d9d6122u); \
    STEP(H, b, c, d, a, 14, 23, 0xfde5380cu); \
    STEP(H, a, b, c, d,  1,  4, 0xa4beea44u); \
    STEP(H, d, a, b, c,  4, 11, 0x4bdecfa9u); \
    STEP(H, c, d, a, b,  7, 16, 0xf6bb4b60u); \
    STEP(H, b, c, d, a, 10, 23, 0xbebfbc70u); \
    STEP(H, a, b, c, d, 13,  4, 0x289b7ec6u); \
    STEP(H, d, a, b, c,  0, 11, 0xeaa127fau); \
    STEP(H, c, d, a, b,  3, 16, 0xd4ef3085u); \
    STEP(H, b, c, d, a,  6, 23, 0x04881d05u); \
    STEP(H, a, b, c, d,  9,  4, 0xd9d4d039u); \
    STEP(H, d, a, b, c, 12, 11, 0xe6db99e5u); \
    STEP(H, c, d, a, b, 15, 16, 0x1fa27cf8u); \
    STEP(H, b, c, d, a,  2, 23, 0xc4ac5665u); \
    /* round 4 */ \
    STEP(I, a, b, c, d,  0,  6, 0xf4292244u); \
    STEP(I, d, a, b, c,  7, 10, 0x432aff97u); \
    STEP(I, c, d, a, b, 14, 15, 0xab9423a7u); \
    STEP(I, b, c, d, a,  5, 21, 0xfc93a039u); \
    STEP(I, a, b, c, d, 12,  6, 0x655b59c3u); \
    STEP(I, d, a, b, c,  3, 10, 0x8f0ccc92u); \
    STEP(I, c, d, a, b, 10, 15, 0xffeff47du); \
    STEP(I, b, c, d, a,  1, 21, 0x85845dd1u); \
    STEP(I, a, b, c, d,  8,  6, 0x6fa87e4fu); \
    STEP(I, d, a, b, c, 15, 10, 0xfe2ce6e0u); \
    STEP(I, c, d, a, b,  6, 15, 0xa3014314u); \
    STEP(I, b, c, d, a, 13, 21, 0x4e0811a1u); \
    STEP(I, a, b, c, d,  4,  6, 0xf7537e82u); \
    STEP(I, d, a, b, c, 11, 10, 0xbd3af235u); \
    STEP(I, c, d, a, b,  2, 15, 0x2ad7d2bbu); \
    STEP(I, b, c, d, a,  9, 21, 0xeb86d391u); \
    } while (0)

struct md5_state { uint32_t a, b, c, d; };

/* names hashed side by side: 8 words of 32 bits fill an AVX2 register */
#define MD5_LANES 8
typedef uint32_t md5_lanes_t __attribute__((vector_size(4 * MD5_LANES)));

static const struct md5_state MD5_INITIAL = {0x67452301u, 0xefcdab89u, 0x98badcfeu,
                                             0x10325476u};

static inline uint32_t read_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

/* One 64-byte block into the state (section 3.4); its words are little-endian (3.1). */
static void md5_block(struct md5_state *state, const uint8_t *block)
{
    uint32_t x[16];
    for (int k = 0; k < 16; k++)
        x[k] = read_le32(block + 4 * k);
    uint32_t a = state->a, b = state->b, c = state->c, d = state->d;
    MD5_STEPS();
    state->a += a;
    state->b += b;
    state->c += c;
    state->d += d;
}

/* The whole message: its whole blocks in place, then the last partial block padded
 * (section 3.1: a 1 bit, zeros to 56 bytes mod 64; 3.2: the length in bits, 64 bits
 * little-endian), one block or two when fewer than 9 bytes are left in the first. */
static struct md5_state md5_state_of(const uint8_t *data, size_t length)
{
    struct md5_state state = MD5_INITIAL;
    size_t whole = length - length % MD5_BLOCK_BYTES;
    for (size_t at = 0; at < whole; at += MD5_BLOCK_BYTES)
        md5_block(&state, data + at);
    uint8_t tail[2 * MD5_BLOCK_BYTES];
    size_t rest = length - whole;
    size_t tail_length = rest <= MD5_TAIL_ROOM ? MD5_BLOCK_BYTES : 2 * MD5_BLOCK_BYTES;
    if (rest > 0)  /* memcpy from a null pointer (an empty name at no address) is undefined */
        memcpy(tail, data + whole, rest);
    tail[rest] = 0x80;
    memset(tail + rest + 1, 0, tail_length - rest - 1 - 8);
    uint64_t bits = (uint64_t)length << 3;
    for (int i = 0; i < 8; i++)
        tail[tail_length - 8 + i] = (uint8_t)(bits >> (8 * i));
    md5_block(&state, tail);
    if (tail_length > MD5_BLOCK_BYTES)
        md5_block(&state, tail + MD5_BLOCK_BYTES);
    return state;
}

static void store_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

void md5_digest(const uint8_t *data, size_t length, uint8_t *digest)
{
    struct md5_state state = md5_state_of(data, length);
    store_le32(digest, state.a);
    store_le32(digest + 4, state.b);
    store_le32(digest + 8, state.c);
    store_le32(digest + 12, state.d);
}

static inline uint32_t byte_swap32(uint32_t v)
{
    return (v >> 24) | ((v >> 8) & 0xff00u) | ((v << 8) & 0xff0000u) | (v << 24);
}

/* Word A of the digests of MD5_LANES one-block messages side by side: word k of lane j's
 * padded block is words[k * MD5_LANES + j]. The same steps as md5_block, on vectors: the
 * compression is one chain of dependent additions, so one name leaves most of a core's
 * arithmetic idle, and lanes fill it. Compiled for AVX2 and for the baseline, picked
 * when the library loads (as blake2b_lanes.c). */
__attribute__((target_clones("avx2", "default"))) void
md5_first_words_lanes(const uint32_t *words, uint32_t *first_words)
{
    md5_lanes_t x[16];
    for (int k = 0; k < 16; k++)
        memcpy(&x[k], words + k * MD5_LANES, sizeof x[k]);
    const md5_lanes_t zero = {0};
    md5_lanes_t a = zero + MD5_INITIAL.a, b = zero + MD5_INITIAL.b;
    md5_lanes_t c = zero + MD5_INITIAL.c, d = zero + MD5_INITIAL.d;
    MD5_STEPS();
    a += MD5_INITIAL.a;
    memcpy(first_words, &a, sizeof a);
}

/* Lane `lane` of `words`: the name padded into one block (it has at most MD5_TAIL_ROOM
 * bytes), as md5_state_of pads its last block. */
static void pack_lane(uint32_t *words, size_t lane, const uint8_t *name, size_t length)
{
    uint8_t block[MD5_BLOCK_BYTES] = {0};
    if (length > 0)
        memcpy(block, name, length);
    block[length] = 0x80;
    uint64_t bits = (uint64_t)length << 3;
    for (int i = 0; i < 8; i++)
        block[MD5_BLOCK_BYTES - 8 + i] = (uint8_t)(bits >> (8 * i));
    for (int k = 0; k < 16; k++)
        words[k * MD5_LANES + lane] = read_le32(block + 4 * k);
}

void md5_prefix32_many(const uint8_t *data, const uint64_t *offsets, size_t count,
                       int big_endian, uint32_t *out)
{
    uint32_t words[16 * MD5_LANES], first[MD5_LANES];
    for (size_t start = 0; start < count; start += MD5_LANES) {
        size_t lanes = count - start < MD5_LANES ? count - start : MD5_LANES;
        int one_block = 1;
        for (size_t j = 0; j < lanes; j++)
            one_block &= offsets[start + j + 1] - offsets[start + j] <= MD5_TAIL_ROOM;
        if (one_block) {
            memset(words, 0, sizeof words);  /* unused lanes of the last group: hashed, dropped */
            for (size_t j = 0; j < lanes; j++)
                pack_lane(words, j, data + offsets[start + j],
                          (size_t)(offsets[start + j + 1] - offsets[start + j]));
            md5_first_words_lanes(words, first);
        } else {  /* a long name in the group: each name alone, any length */
            for (size_t j = 0; j < lanes; j++)
                first[j] = md5_state_of(data + offsets[start + j],
                                        (size_t)(offsets[start + j + 1] -
                                                 offsets[start + j])).a;
        }
        /* The digest's first four bytes are the final word A, stored little-endian (3.5). */
        for (size_t j = 0; j < lanes; j++)
            out[start + j] = big_endian ? byte_swap32(first[j]) : first[j];
    }
}
