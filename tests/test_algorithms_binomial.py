"""binomial: routes as the authors' Java BinomialEngine, in every form; monotone and balanced."""

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
from harness.recipes.algorithms.binomial import (
    BinomialAlgorithm,
    binomial_reference,
    binomial_vectorised,
)

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


@settings(max_examples=40, deadline=None)
@given(buckets=st.one_of(st.integers(1, 300),
                         st.sampled_from([2**k + d for k in range(1, 16) for d in (-1, 0, 1)])),
       seed=st.integers(0, 2**32 - 1))
def test_adding_a_bucket_moves_keys_only_to_it(buckets: int, seed: int) -> None:
    """N -> N+1 moves keys only to bucket N, so removing the last moves only its keys back
    (around powers of two too, where the enclosing tree doubles)."""
    hashes = _random_hashes(4000, seed)
    before = BinomialAlgorithm.build(numbered_servers(buckets)).lookup_many(hashes)
    after = BinomialAlgorithm.build(numbered_servers(buckets + 1)).lookup_many(hashes)
    moved = before != after
    assert set(after[moved].tolist()) <= {buckets}
    assert not (after[~moved] == buckets).any()


def test_without_the_last_server_is_the_shorter_fleet() -> None:
    """without(last) routes as N - 1 buckets; any other index gives None."""
    fleet = numbered_servers(7)
    algorithm = BinomialAlgorithm.build(fleet)
    fallen = algorithm.without(6)
    assert fallen is not None and fallen.servers == tuple(fleet[:6])
    hashes = _random_hashes(2000, 3)
    assert fallen.lookup_many(hashes).tolist() == BinomialAlgorithm.build(
        fleet[:6]).lookup_many(hashes).tolist()
    assert algorithm.without(2) is None
    assert BinomialAlgorithm.build(fleet[:1]).without(0) is None


def test_balance_at_a_thousand_servers_is_key_noise() -> None:
    """Uniform key hashes on N = 1,000: keys-per-server CV within 1.5x of multinomial noise."""
    keys = 500_000
    hashes = np.random.default_rng(11).integers(0, 2**64, keys, dtype=np.uint64)
    counts = np.bincount(BinomialAlgorithm.build(numbered_servers(1000)).lookup_many(hashes),
                         minlength=1000)
    noise = np.sqrt(999 / keys)
    assert counts.std() / counts.mean() < 1.5 * noise


def test_route_hashes_keys_with_xxhash64_seed_0() -> None:
    """route(keys) and route_one(key) are the lookup of xxHash64(key, seed 0), as for jump."""
    algorithm = ALGORITHMS["binomial"].build(numbered_servers(37))
    expected = [binomial_reference(xxhash.xxh64_intdigest(k, 0), 37) for k in KEYS]
    assert algorithm.route(KEYS).tolist() == expected
    assert algorithm.route(KEYS).dtype == np.uint16
    # route_one hashes and looks up in one C call: the same owner, the empty key too.
    route_one = algorithm.route_one
    assert route_one is not None
    assert [route_one(k) for k in [b"", *KEYS]] == algorithm.route([b"", *KEYS]).tolist()


def test_parity_check_of_the_runner_passes() -> None:
    """The runner's parity check (batch, scalar, both references) passes."""
    algorithm = BinomialAlgorithm.build(numbered_servers(50))
    hashes = algorithm.hash_keys(KEYS)
    owners, _ = check_parity(algorithm, hashes, algorithm.forms(["numpy-aligned"]))
    assert owners.tolist() == [binomial_reference(int(h), 50) for h in hashes]


def test_what_binomial_refuses_and_holds() -> None:
    """Weights, parameters and middle removals are refused; no table, 64-bit key hashes."""
    with pytest.raises(HarnessError, match=r"algorithm 'binomial': servers must be all of "
                       r"weight 1, since binomial has no weights \(got weight 2 for 'b'\)"):
        BinomialAlgorithm.build([Server("a"), Server("b", 2)])
    with pytest.raises(ScenarioError, match="algorithm 'binomial': unknown key 'points'"):
        BinomialAlgorithm.build(numbered_servers(2), points=3)
    with pytest.raises(HarnessError, match="at least one server"):
        BinomialAlgorithm.build([])
    fleet = numbered_servers(4)
    assert BinomialAlgorithm.removal_problem(fleet, fleet[-1].name) is None
    assert "binomial can remove only the last server ('server-3')" in str(
        BinomialAlgorithm.removal_problem(fleet, fleet[1].name))
    algorithm = BinomialAlgorithm.build(numbered_servers(5))
    assert (algorithm.nbytes, algorithm.entries, algorithm.key_bits) == (0, 5, 64)
    assert algorithm.forms(["cffi-packed"]) == {"binomial": algorithm}
    assert algorithm.params == {}
    assert ALGORITHMS["binomial"].build(numbered_servers(5)).exact_shares() is None
    assert BinomialAlgorithm.estimated_entries(fleet, {}) == 4
    seconds, why = BinomialAlgorithm.estimated_seconds(fleet, {}, reference_keys=10**6,
                                                       fast_keys=10**6, plain_keys=10_000)
    assert 0 < seconds < 5
    assert why == "binomial looks up 1,000,000 keys in numpy and 10,000 in plain Python"
