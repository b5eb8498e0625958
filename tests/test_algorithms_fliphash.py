"""fliphash: routes as the authors' fliphash_64 (Rust), in every form; monotone and balanced."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.native.range_hashes import CRangeHash
from harness.core.servers import numbered_servers
from harness.recipes.algorithms.fliphash import (
    FlipHashAlgorithm,
    fliphash_reference,
    fliphash_vectorised,
)

pytestmark = pytest.mark.c_core

# Vectors computed with fliphash_64(key_hash, ..=N - 1) of DataDog/fliphash-rs (commit
# 00c0ad0), the authors' reference implementation.
VECTOR_KEYS = [0, 2**64 - 1, 2**63, 2**63 - 1, 10295661613899593243, 18236735551939742314,
               1806139841148235694, 17570468685227370901, 3798921144855040971,
               14912749534848000110, 6602385135425630971, 12932593187208378685]
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
EDGES = np.array(VECTOR_KEYS[:4], dtype=np.uint64)
KEYS = [f"key-{i}".encode() for i in range(2000)]


def _random_hashes(count: int, seed: int) -> np.ndarray:
    hashes = np.random.default_rng(seed).integers(0, 2**64, count, dtype=np.uint64)
    return np.concatenate([EDGES, hashes])


@pytest.mark.parametrize("buckets", sorted(VECTORS))
def test_every_form_gives_the_reference_functions_buckets(buckets: int) -> None:
    """C batch, C scalar, numpy and plain Python give fliphash_64's bucket per key (up
    to 65,536 buckets in C, one more than a fleet can hold: owners are uint16 indexes)."""
    algorithm = CRangeHash("fliphash", buckets)
    hashes = np.array(VECTOR_KEYS, dtype=np.uint64)
    assert algorithm.lookup_many(hashes).tolist() == VECTORS[buckets]
    assert [algorithm.lookup(k) for k in VECTOR_KEYS] == VECTORS[buckets]
    assert fliphash_vectorised(hashes, buckets).tolist() == VECTORS[buckets]
    assert [fliphash_reference(k, buckets) for k in VECTOR_KEYS] == VECTORS[buckets]


@pytest.mark.parametrize("buckets", sorted(WEYL_SUMS))
def test_twenty_thousand_keys_sum_as_the_reference_function(buckets: int) -> None:
    """Over 20,000 keys the weighted sum of buckets is fliphash_64's, in C and numpy."""
    hashes = np.arange(20_000, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    weights = np.arange(1, 20_001, dtype=np.int64)
    algorithm = CRangeHash("fliphash", buckets)
    assert int((weights * algorithm.lookup_many(hashes)).sum()) == WEYL_SUMS[buckets]
    assert int((weights * fliphash_vectorised(hashes, buckets)).sum()) == WEYL_SUMS[buckets]


@settings(max_examples=60, deadline=None)
@given(buckets=st.integers(1, 2**16 - 1), seed=st.integers(0, 2**32 - 1),
       count=st.integers(0, 300))
def test_c_and_numpy_forms_equal_the_plain_reference(buckets: int, seed: int,
                                                     count: int) -> None:
    """For any fleet size 1..65,535 and any key hashes, every form answers alike."""
    hashes = _random_hashes(count, seed)
    expected = [fliphash_reference(int(h), buckets) for h in hashes]
    algorithm = FlipHashAlgorithm.build(numbered_servers(buckets))
    assert algorithm.lookup_many(hashes).tolist() == expected
    assert [algorithm.lookup(int(h)) for h in hashes] == expected
    assert fliphash_vectorised(hashes, buckets).tolist() == expected
