"""fliphash: the buckets of the authors' fliphash_64 (Rust), which every form routes as
(checked in tests/unit/test_range_hashes.py, with the range hashes' shared properties)."""

from __future__ import annotations

# Buckets of the key hashes tests/unit/test_range_hashes.py names (VECTOR_KEYS), computed with
# fliphash_64(key_hash, ..=N - 1) of DataDog/fliphash-rs (commit 00c0ad0), the authors' reference
# implementation.
VECTORS = {
    1: [0] * 12,
    2: [0, 1, 1, 0, 1, 0, 0, 1, 0, 0, 1, 0],
    3: [0, 1, 1, 2, 2, 0, 0, 1, 2, 2, 1, 2],
    5: [0, 4, 4, 2, 4, 0, 0, 4, 2, 2, 1, 2],
    7: [0, 5, 4, 2, 4, 0, 0, 4, 2, 5, 1, 2],
    8: [0, 5, 4, 2, 4, 0, 0, 4, 7, 5, 1, 2],
    9: [0, 5, 8, 2, 4, 0, 0, 4, 7, 5, 1, 2],
    10: [0, 5, 8, 2, 4, 0, 0, 4, 7, 5, 9, 2],
    100: [0, 42, 32, 43, 79, 99, 21, 24, 14, 53, 9, 78],
    1000: [0, 272, 512, 453, 207, 268, 153, 691, 136, 790, 784, 830],
    1025: [0, 272, 512, 453, 207, 268, 153, 691, 136, 790, 784, 830],
    65535: [0, 57010, 16384, 23045, 35721, 62041, 1744, 58118, 43164, 61374, 27567, 22533],
    65536: [0, 57010, 16384, 23045, 35721, 62041, 1744, 58118, 43164, 61374, 27567, 22533],
}
# The same function over 20,000 key hashes i * 0x9E3779B97F4A7C15 (mod 2**64):
# sum over i of (i + 1) * bucket.
WEYL_SUMS = {3: 200806869, 10: 896125444, 100: 9992234774, 1000: 99653355152,
             4097: 409717568259, 65536: 6574076229993}
