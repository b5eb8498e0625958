/* MD5 of batches of short names, written from RFC 1321 ("The MD5 Message-Digest
 * Algorithm", R. Rivest, 1992), for the key hashes of the ketama clients and the MD5
 * points generate.c makes.
 *
 * Why not OpenSSL: its EVP interface (the only MD5 libcrypto 3 does not deprecate) costs
 * 420-560 ns a call in context setup and dispatch, several times the MD5 compression of
 * a key name, which fits one 64-byte block up to 55 bytes. Names of any length are hashed
 * correctly here (longer ones take more blocks); tests check every length 0..200 against
 * hashlib.md5 and the RFC's test suite. Bound by harness/core/native/md5_many.py. */
#ifndef RING_MD5_MANY_H
#define RING_MD5_MANY_H

#include <stddef.h>
#include <stdint.h>

#define MD5_DIGEST_BYTES 16

/* cffi:begin */
/* The 16-byte MD5 digest of `length` bytes. */
void md5_digest(const uint8_t *data, size_t length, uint8_t *digest);

/* The first four digest bytes of many names stored end to end (name i is
 * data[offsets[i]:offsets[i + 1]]) as one integer: read little-endian when `big_endian`
 * is 0 (libketama's, libmemcached's and twemproxy's key hash), big-endian otherwise
 * (the harness's md5-32). */
void md5_prefix32_many(const uint8_t *data, const uint64_t *offsets, size_t count,
                       int big_endian, uint32_t *out);
/* cffi:end */

#endif
