"""binomial: routes as the authors' Java BinomialEngine, in every form; monotone and balanced."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.native.range_hashes import CRangeHash
from harness.core.servers import numbered_servers
from harness.recipes.algorithms.binomial import (
    BinomialAlgorithm,
    binomial_reference,
    binomial_vectorised,
)

pytestmark = pytest.mark.c_core

# Vectors computed with BinomialEngine.getBucket of SUPSI-DTI-ISIN/java-consistent-hashing-
# algorithms (commit 68803f8), its hash function returning these 64-bit key hashes as given.
VECTOR_KEYS = [0, 2**64 - 1, 2**63, 2**63 - 1, 10295661613899593243, 18236735551939742314,
               1806139841148235694, 17570468685227370901, 3798921144855040971,
               14912749534848000110, 6602385135425630971, 12932593187208378685]
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
EDGES = np.array(VECTOR_KEYS[:4], dtype=np.uint64)
KEYS = [f"key-{i}".encode() for i in range(2000)]


def _random_hashes(count: int, seed: int) -> np.ndarray:
    hashes = np.random.default_rng(seed).integers(0, 2**64, count, dtype=np.uint64)
    return np.concatenate([EDGES, hashes])


@pytest.mark.parametrize("buckets", sorted(VECTORS))
def test_every_form_gives_the_reference_engines_buckets(buckets: int) -> None:
    """C batch, C scalar, numpy and plain Python give the Java engine's bucket per key (up
    to 65,536 buckets in C, one more than a fleet can hold: owners are uint16 indexes)."""
    algorithm = CRangeHash("binomial", buckets)
    hashes = np.array(VECTOR_KEYS, dtype=np.uint64)
    assert algorithm.lookup_many(hashes).tolist() == VECTORS[buckets]
    assert [algorithm.lookup(k) for k in VECTOR_KEYS] == VECTORS[buckets]
    assert binomial_vectorised(hashes, buckets).tolist() == VECTORS[buckets]
    assert [binomial_reference(k, buckets) for k in VECTOR_KEYS] == VECTORS[buckets]


@pytest.mark.parametrize("buckets", sorted(WEYL_SUMS))
def test_twenty_thousand_keys_sum_as_the_reference_engine(buckets: int) -> None:
    """Over 20,000 keys the weighted sum of buckets is the Java engine's, in C and numpy."""
    hashes = np.arange(20_000, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    weights = np.arange(1, 20_001, dtype=np.int64)
    algorithm = CRangeHash("binomial", buckets)
    assert int((weights * algorithm.lookup_many(hashes)).sum()) == WEYL_SUMS[buckets]
    assert int((weights * binomial_vectorised(hashes, buckets)).sum()) == WEYL_SUMS[buckets]


@settings(max_examples=60, deadline=None)
@given(buckets=st.integers(1, 2**16 - 1), seed=st.integers(0, 2**32 - 1),
       count=st.integers(0, 300))
def test_c_and_numpy_forms_equal_the_plain_reference(buckets: int, seed: int,
                                                     count: int) -> None:
    """For any fleet size 1..65,535 and any key hashes, every form answers alike."""
    hashes = _random_hashes(count, seed)
    expected = [binomial_reference(int(h), buckets) for h in hashes]
    algorithm = BinomialAlgorithm.build(numbered_servers(buckets))
    assert algorithm.lookup_many(hashes).tolist() == expected
    assert [algorithm.lookup(int(h)) for h in hashes] == expected
    assert binomial_vectorised(hashes, buckets).tolist() == expected
