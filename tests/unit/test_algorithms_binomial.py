"""binomial: the buckets of the authors' Java BinomialEngine, which every form routes as
(checked in tests/unit/test_range_hashes.py, with the range hashes' shared properties)."""

from __future__ import annotations

# Buckets of the key hashes tests/unit/test_range_hashes.py names (VECTOR_KEYS), computed with
# BinomialEngine.getBucket of SUPSI-DTI-ISIN/java-consistent-hashing-algorithms (commit
# 68803f8), its hash function returning these 64-bit key hashes as given.
VECTORS = {
    1: [0] * 12,
    2: [0, 1, 0, 1, 1, 0, 0, 1, 1, 0, 1, 1],
    3: [0, 1, 0, 1, 2, 2, 2, 1, 2, 2, 2, 1],
    5: [0, 4, 0, 4, 2, 2, 2, 1, 2, 4, 2, 4],
    7: [0, 4, 0, 4, 2, 2, 6, 5, 2, 4, 2, 4],
    8: [0, 4, 0, 4, 2, 2, 6, 5, 2, 4, 2, 4],
    9: [0, 4, 0, 4, 8, 8, 6, 5, 2, 4, 2, 4],
    10: [0, 4, 0, 4, 8, 8, 6, 5, 2, 4, 9, 4],
    100: [0, 37, 0, 37, 25, 86, 49, 16, 94, 68, 91, 57],
    1000: [0, 972, 0, 972, 587, 840, 661, 298, 557, 68, 562, 477],
    1025: [0, 972, 0, 972, 587, 840, 661, 298, 557, 68, 562, 477],
    65535: [0, 58624, 0, 58624, 15425, 2912, 9945, 13651, 4263, 50965, 9595, 15074],
    65536: [0, 58624, 0, 58624, 15425, 2912, 9945, 13651, 4263, 50965, 9595, 15074],
}
# The same engine over 20,000 key hashes i * 0x9E3779B97F4A7C15 (mod 2**64):
# sum over i of (i + 1) * bucket.
WEYL_SUMS = {3: 199664708, 10: 901706751, 100: 9899051718, 1000: 99699421211,
             4097: 410064245619, 65536: 6554056202740}
