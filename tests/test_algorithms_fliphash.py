"""fliphash: routes as the authors' fliphash_64 (Rust), in every form; monotone and balanced."""

from __future__ import annotations

import numpy as np
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.errors import HarnessError, ScenarioError
from harness.core.native.range_hashes import CRangeHash
from harness.core.servers import Server, numbered_servers
from harness.metrics.parity import check_parity
from harness.recipes.algorithms import ALGORITHMS
from harness.recipes.algorithms.fliphash import (
    FlipHashAlgorithm,
    fliphash_reference,
    fliphash_vectorised,
)

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


@settings(max_examples=40, deadline=None)
@given(buckets=st.one_of(st.integers(1, 300),
                         st.sampled_from([2**k + d for k in range(1, 16) for d in (-1, 0, 1)])),
       seed=st.integers(0, 2**32 - 1))
def test_adding_a_bucket_moves_keys_only_to_it(buckets: int, seed: int) -> None:
    """N -> N+1 moves keys only to bucket N, so removing the last moves only its keys back
    (around powers of two too, where the power-of-two range doubles)."""
    hashes = _random_hashes(4000, seed)
    before = FlipHashAlgorithm.build(numbered_servers(buckets)).lookup_many(hashes)
    after = FlipHashAlgorithm.build(numbered_servers(buckets + 1)).lookup_many(hashes)
    moved = before != after
    assert set(after[moved].tolist()) <= {buckets}
    assert not (after[~moved] == buckets).any()


def test_without_the_last_server_is_the_shorter_fleet() -> None:
    """without(last) routes as N - 1 buckets; any other index gives None."""
    fleet = numbered_servers(7)
    algorithm = FlipHashAlgorithm.build(fleet)
    fallen = algorithm.without(6)
    assert fallen is not None and fallen.servers == tuple(fleet[:6])
    hashes = _random_hashes(2000, 3)
    assert fallen.lookup_many(hashes).tolist() == FlipHashAlgorithm.build(
        fleet[:6]).lookup_many(hashes).tolist()
    assert algorithm.without(2) is None
    assert FlipHashAlgorithm.build(fleet[:1]).without(0) is None


def test_balance_at_a_thousand_servers_is_key_noise() -> None:
    """Uniform key hashes on N = 1,000: keys-per-server CV within 1.5x of multinomial noise."""
    keys = 500_000
    hashes = np.random.default_rng(11).integers(0, 2**64, keys, dtype=np.uint64)
    counts = np.bincount(FlipHashAlgorithm.build(numbered_servers(1000)).lookup_many(hashes),
                         minlength=1000)
    noise = np.sqrt(999 / keys)
    assert counts.std() / counts.mean() < 1.5 * noise


def test_route_hashes_keys_with_xxhash64_seed_0() -> None:
    """route(keys) and route_one(key) are the lookup of xxHash64(key, seed 0), as for jump."""
    algorithm = ALGORITHMS["fliphash"].build(numbered_servers(37))
    expected = [fliphash_reference(xxhash.xxh64_intdigest(k, 0), 37) for k in KEYS]
    assert algorithm.route(KEYS).tolist() == expected
    assert algorithm.route(KEYS).dtype == np.uint16
    # route_one hashes and looks up in one C call: the same owner, the empty key too.
    route_one = algorithm.route_one
    assert route_one is not None
    assert [route_one(k) for k in [b"", *KEYS]] == algorithm.route([b"", *KEYS]).tolist()


def test_parity_check_of_the_runner_passes() -> None:
    """The runner's parity check (batch, scalar, both references) passes."""
    algorithm = FlipHashAlgorithm.build(numbered_servers(50))
    hashes = algorithm.hash_keys(KEYS)
    owners, _ = check_parity(algorithm, hashes, algorithm.forms(["numpy-aligned"]))
    assert owners.tolist() == [fliphash_reference(int(h), 50) for h in hashes]


def test_what_fliphash_refuses_and_holds() -> None:
    """Weights, parameters and middle removals are refused; no table, 64-bit key hashes."""
    with pytest.raises(HarnessError, match=r"algorithm 'fliphash': servers must be all of "
                       r"weight 1, since fliphash has no weights \(got weight 2 for 'b'\)"):
        FlipHashAlgorithm.build([Server("a"), Server("b", 2)])
    with pytest.raises(ScenarioError, match="algorithm 'fliphash': unknown key 'points'"):
        FlipHashAlgorithm.build(numbered_servers(2), points=3)
    with pytest.raises(HarnessError, match="at least one server"):
        FlipHashAlgorithm.build([])
    fleet = numbered_servers(4)
    assert FlipHashAlgorithm.removal_problem(fleet, fleet[-1].name) is None
    assert "fliphash can remove only the last server ('server-3')" in str(
        FlipHashAlgorithm.removal_problem(fleet, fleet[1].name))
    algorithm = FlipHashAlgorithm.build(numbered_servers(5))
    assert (algorithm.nbytes, algorithm.entries, algorithm.key_bits) == (0, 5, 64)
    assert algorithm.forms(["cffi-packed"]) == {"fliphash": algorithm}
    assert algorithm.params == {}
    assert ALGORITHMS["fliphash"].build(numbered_servers(5)).exact_shares() is None
    assert FlipHashAlgorithm.estimated_entries(fleet, {}) == 4
    seconds, why = FlipHashAlgorithm.estimated_seconds(fleet, {}, reference_keys=10**6,
                                                       fast_keys=10**6, plain_keys=10_000)
    assert 0 < seconds < 5
    assert why == "fliphash looks up 1,000,000 keys in numpy and 10,000 in plain Python"
