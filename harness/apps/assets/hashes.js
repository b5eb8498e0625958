// The ring's hash functions in the browser, bit-exact with harness.hashing:
// each takes the UTF-8 bytes of a name (Uint8Array) and returns a uint32.
// BLAKE2b (RFC 7693) and MD5 (RFC 1321) are written from their specifications
// (the page must stand alone); tests/live/test_explorer.py checks every one against
// Python's hashlib and zlib on many inputs, the empty and non-ASCII ones included.
"use strict";
const RingHashes = (function () {
  function fnv1aFmix32(bytes) {
    let h = 0x811c9dc5;
    for (let i = 0; i < bytes.length; i++) {
      h = Math.imul(h ^ bytes[i], 16777619) >>> 0;
    }
    h ^= h >>> 16; h = Math.imul(h, 0x85ebca6b) >>> 0;
    h ^= h >>> 13; h = Math.imul(h, 0xc2b2ae35) >>> 0;
    h ^= h >>> 16;
    return h >>> 0;
  }

  const CRC_TABLE = (function () {
    const table = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      table[n] = c >>> 0;
    }
    return table;
  })();

  function crc32(bytes) {
    let c = 0xffffffff;
    for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  }

  // MD5: the first 4 digest bytes, big-endian (md5-32).
  const MD5_S = [7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
    5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
    4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
    6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21];
  const MD5_K = new Uint32Array(64);
  for (let i = 0; i < 64; i++) MD5_K[i] = Math.floor(Math.abs(Math.sin(i + 1)) * 2 ** 32) >>> 0;

  function md5Words(bytes) {
    const length = bytes.length;
    const padded = new Uint8Array(((length + 8) >> 6) * 64 + 64);
    padded.set(bytes); padded[length] = 0x80;
    const bits = length * 8;
    const view = new DataView(padded.buffer);
    view.setUint32(padded.length - 8, bits >>> 0, true);
    view.setUint32(padded.length - 4, Math.floor(bits / 2 ** 32), true);
    let a0 = 0x67452301, b0 = 0xefcdab89, c0 = 0x98badcfe, d0 = 0x10325476;
    const m = new Uint32Array(16);
    for (let offset = 0; offset < padded.length; offset += 64) {
      for (let i = 0; i < 16; i++) m[i] = view.getUint32(offset + 4 * i, true);
      let a = a0, b = b0, c = c0, d = d0;
      for (let i = 0; i < 64; i++) {
        let f, g;
        if (i < 16) { f = (b & c) | (~b & d); g = i; }
        else if (i < 32) { f = (d & b) | (~d & c); g = (5 * i + 1) % 16; }
        else if (i < 48) { f = b ^ c ^ d; g = (3 * i + 5) % 16; }
        else { f = c ^ (b | ~d); g = (7 * i) % 16; }
        f = (f + a + MD5_K[i] + m[g]) >>> 0;
        a = d; d = c; c = b;
        b = (b + ((f << MD5_S[i]) | (f >>> (32 - MD5_S[i])))) >>> 0;
      }
      a0 = (a0 + a) >>> 0; b0 = (b0 + b) >>> 0; c0 = (c0 + c) >>> 0; d0 = (d0 + d) >>> 0;
    }
    return [a0, b0, c0, d0];  // little-endian words of the digest
  }

  function byteSwap(word) {
    return (((word & 0xff) << 24) | ((word & 0xff00) << 8) | ((word >>> 8) & 0xff00)
      | (word >>> 24)) >>> 0;
  }

  function md5First32(bytes) {
    return byteSwap(md5Words(bytes)[0]);
  }

  // BLAKE2b-512 (no key), first 4 digest bytes big-endian (blake2b-32). BigInt keeps the
  // 64-bit words exact; fast enough for the few thousand names a page hashes.
  const MASK = (1n << 64n) - 1n;
  const IV = [0x6a09e667f3bcc908n, 0xbb67ae8584caa73bn, 0x3c6ef372fe94f82bn,
    0xa54ff53a5f1d36f1n, 0x510e527fade682d1n, 0x9b05688c2b3e6c1fn, 0x1f83d9abfb41bd6bn,
    0x5be0cd19137e2179n];
  const SIGMA = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
    [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
    [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
    [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
    [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
    [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
    [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
    [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
    [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0]];

  function rotr(x, n) { return ((x >> n) | (x << (64n - n))) & MASK; }

  function blake2bFirst32(bytes) {
    const h = IV.slice();
    h[0] ^= 0x01010040n;  // digest length 64, no key, fanout 1, depth 1
    const blocks = Math.max(1, Math.ceil(bytes.length / 128));
    for (let block = 0; block < blocks; block++) {
      const chunk = new Uint8Array(128);
      chunk.set(bytes.subarray(block * 128, block * 128 + 128));
      const view = new DataView(chunk.buffer);
      const m = [];
      for (let i = 0; i < 16; i++) m.push(view.getBigUint64(8 * i, true));
      const last = block === blocks - 1;
      const counter = BigInt(last ? bytes.length : (block + 1) * 128);
      const v = h.concat(IV);
      v[12] ^= counter & MASK;
      if (last) v[14] ^= MASK;
      const mix = function (a, b, c, d, x, y) {
        v[a] = (v[a] + v[b] + x) & MASK; v[d] = rotr(v[d] ^ v[a], 32n);
        v[c] = (v[c] + v[d]) & MASK; v[b] = rotr(v[b] ^ v[c], 24n);
        v[a] = (v[a] + v[b] + y) & MASK; v[d] = rotr(v[d] ^ v[a], 16n);
        v[c] = (v[c] + v[d]) & MASK; v[b] = rotr(v[b] ^ v[c], 63n);
      };
      for (let round = 0; round < 12; round++) {
        const s = SIGMA[round % 10];
        mix(0, 4, 8, 12, m[s[0]], m[s[1]]); mix(1, 5, 9, 13, m[s[2]], m[s[3]]);
        mix(2, 6, 10, 14, m[s[4]], m[s[5]]); mix(3, 7, 11, 15, m[s[6]], m[s[7]]);
        mix(0, 5, 10, 15, m[s[8]], m[s[9]]); mix(1, 6, 11, 12, m[s[10]], m[s[11]]);
        mix(2, 7, 8, 13, m[s[12]], m[s[13]]); mix(3, 4, 9, 14, m[s[14]], m[s[15]]);
      }
      for (let i = 0; i < 8; i++) h[i] ^= v[i] ^ v[i + 8];
    }
    // The digest is h[0] little-endian; its first 4 bytes read big-endian:
    return byteSwap(Number(h[0] & 0xffffffffn));
  }

  return {"fnv1a-fmix32": fnv1aFmix32, "crc32": crc32, "md5-32": md5First32,
          "blake2b-32": blake2bFirst32};
})();
