"""powerch: routes as the power-consistent-hash crate, in every form; monotone, balanced."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.native.range_hashes import CRangeHash
from harness.core.servers import numbered_servers
from harness.recipes.algorithms.powerch import (
    PowerCHAlgorithm,
    powerch_reference,
    powerch_vectorised,
)

pytestmark = pytest.mark.c_core

# Vectors computed with PowerConsistentHasher::try_new(N).hash_u64(key_hash) of the Rust
# crate power-consistent-hash (DXist/power-consistent-hash, commit 25bd442), on x86-64.
# The crate refuses N = 1, which routes every key to 0 here.
VECTOR_KEYS = [0, 2**64 - 1, 2**63, 2**63 - 1, 10295661613899593243, 18236735551939742314,
               1806139841148235694, 17570468685227370901, 3798921144855040971,
               14912749534848000110, 6602385135425630971, 12932593187208378685]
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
EDGES = np.array(VECTOR_KEYS[:4], dtype=np.uint64)
KEYS = [f"key-{i}".encode() for i in range(2000)]


def _random_hashes(count: int, seed: int) -> np.ndarray:
    hashes = np.random.default_rng(seed).integers(0, 2**64, count, dtype=np.uint64)
    return np.concatenate([EDGES, hashes])


@pytest.mark.parametrize("buckets", sorted(VECTORS))
def test_every_form_gives_the_reference_functions_buckets(buckets: int) -> None:
    """C batch, C scalar, numpy and plain Python give the crate's bucket per key (up
    to 65,536 buckets in C, one more than a fleet can hold: owners are uint16 indexes)."""
    algorithm = CRangeHash("powerch", buckets)
    hashes = np.array(VECTOR_KEYS, dtype=np.uint64)
    assert algorithm.lookup_many(hashes).tolist() == VECTORS[buckets]
    assert [algorithm.lookup(k) for k in VECTOR_KEYS] == VECTORS[buckets]
    assert powerch_vectorised(hashes, buckets).tolist() == VECTORS[buckets]
    assert [powerch_reference(k, buckets) for k in VECTOR_KEYS] == VECTORS[buckets]


def test_the_crates_published_values() -> None:
    """The crate's own test values for N = 96 come out of every form."""
    algorithm = PowerCHAlgorithm.build(numbered_servers(96))
    hashes = np.array(list(PUBLISHED_96), dtype=np.uint64)
    expected = list(PUBLISHED_96.values())
    assert algorithm.lookup_many(hashes).tolist() == expected
    assert [algorithm.lookup(int(h)) for h in hashes] == expected
    assert algorithm.reference_owners(hashes).tolist() == expected
    assert algorithm.reference_lookup_many(hashes) == expected


@pytest.mark.parametrize("buckets", sorted(WEYL_SUMS))
def test_twenty_thousand_keys_sum_as_the_reference_function(buckets: int) -> None:
    """Over 20,000 keys the weighted sum of buckets is the crate's, in C and numpy."""
    hashes = np.arange(20_000, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    weights = np.arange(1, 20_001, dtype=np.int64)
    algorithm = CRangeHash("powerch", buckets)
    assert int((weights * algorithm.lookup_many(hashes)).sum()) == WEYL_SUMS[buckets]
    assert int((weights * powerch_vectorised(hashes, buckets)).sum()) == WEYL_SUMS[buckets]


@settings(max_examples=60, deadline=None)
@given(buckets=st.integers(1, 2**16 - 1), seed=st.integers(0, 2**32 - 1),
       count=st.integers(0, 300))
def test_c_and_numpy_forms_equal_the_plain_reference(buckets: int, seed: int,
                                                     count: int) -> None:
    """For any fleet size 1..65,535 and any key hashes, every form answers alike."""
    hashes = _random_hashes(count, seed)
    expected = [powerch_reference(int(h), buckets) for h in hashes]
    algorithm = PowerCHAlgorithm.build(numbered_servers(buckets))
    assert algorithm.lookup_many(hashes).tolist() == expected
    assert [algorithm.lookup(int(h)) for h in hashes] == expected
    assert powerch_vectorised(hashes, buckets).tolist() == expected
