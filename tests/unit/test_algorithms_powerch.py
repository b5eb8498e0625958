"""powerch: the buckets of the power-consistent-hash crate, which every form routes as
(checked in tests/unit/test_range_hashes.py, with the range hashes' shared properties), and the
crate's own published values."""

from __future__ import annotations

import numpy as np
import pytest

from harness.core.servers import numbered_servers
from harness.recipes.algorithms.powerch import PowerCHAlgorithm

pytestmark = pytest.mark.c_core

# Buckets of the key hashes tests/unit/test_range_hashes.py names (VECTOR_KEYS), computed with
# PowerConsistentHasher::try_new(N).hash_u64(key_hash) of the Rust crate power-consistent-hash
# (DXist/power-consistent-hash, commit 25bd442), on x86-64. The crate refuses N = 1, which routes
# every key to 0 here.
VECTORS = {
    1: [0] * 12,
    2: [0, 1, 0, 1, 1, 0, 0, 1, 1, 0, 1, 1],
    3: [0, 2, 0, 1, 2, 0, 2, 1, 2, 2, 1, 1],
    5: [0, 3, 0, 3, 3, 3, 4, 4, 3, 4, 3, 1],
    7: [0, 5, 0, 6, 3, 3, 4, 4, 3, 4, 3, 5],
    8: [0, 5, 0, 6, 3, 3, 4, 4, 3, 4, 3, 5],
    9: [0, 8, 0, 6, 3, 3, 4, 4, 3, 8, 3, 5],
    10: [0, 9, 0, 6, 3, 3, 4, 4, 3, 8, 3, 5],
    100: [0, 84, 0, 45, 18, 86, 39, 16, 85, 33, 47, 63],
    1000: [0, 815, 0, 737, 688, 987, 568, 361, 613, 119, 758, 303],
    1025: [0, 815, 0, 737, 688, 987, 568, 361, 613, 119, 758, 303],
    65535: [0, 59948, 0, 41318, 16309, 3675, 15540, 16119, 5590, 64236, 10662, 9951],
    65536: [0, 59948, 0, 41318, 16309, 3675, 15540, 16119, 5590, 64236, 10662, 9951],
}
# The same function over 20,000 key hashes i * 0x9E3779B97F4A7C15 (mod 2**64):
# sum over i of (i + 1) * bucket.
WEYL_SUMS = {3: 198438864, 10: 896910955, 100: 9879383671, 1000: 99836555275,
             4097: 409347025451, 65536: 6553316946573}
# The crate's own published values (its test_consistent_hashing_backwards_compatibility):
# N = 96, key hash -> bucket.
PUBLISHED_96 = {0: 0, 8: 12, 9: 12, 10: 13, 11: 15, 12: 11, 999: 89}



def test_the_crates_published_values() -> None:
    """The crate's own test values for N = 96 come out of every form."""
    algorithm = PowerCHAlgorithm.build(numbered_servers(96))
    hashes = np.array(list(PUBLISHED_96), dtype=np.uint64)
    expected = list(PUBLISHED_96.values())
    assert algorithm.lookup_many(hashes).tolist() == expected
    assert [algorithm.lookup(int(h)) for h in hashes] == expected
    assert algorithm.reference_owners(hashes).tolist() == expected
    assert algorithm.reference_lookup_many(hashes) == expected
