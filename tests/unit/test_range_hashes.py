"""What BinomialHash, FlipHash and PowerCH share as range hashes (`recipes/algorithms/
range_hash.py`), checked for each: adding a bucket moves keys only to it, `without(last)`
is the shorter fleet, balance at N = 1,000 is key noise, keys are hashed with xxHash64
seed 0, the runner's parity check passes, and what each refuses and holds; and that every
form (C batch, C scalar, numpy, plain Python) gives the buckets each algorithm's own file
holds, computed with the reference code it names."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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
from harness.recipes.algorithms.fliphash import (
    FlipHashAlgorithm,
    fliphash_reference,
    fliphash_vectorised,
)
from harness.recipes.algorithms.powerch import (
    PowerCHAlgorithm,
    powerch_reference,
    powerch_vectorised,
)
from tests.unit import test_algorithms_binomial, test_algorithms_fliphash, test_algorithms_powerch

pytestmark = pytest.mark.c_core

#: the key hashes of every algorithm's vectors, edges first
VECTOR_KEYS = [0, 2**64 - 1, 2**63, 2**63 - 1, 10295661613899593243, 18236735551939742314,
               1806139841148235694, 17570468685227370901, 3798921144855040971,
               14912749534848000110, 6602385135425630971, 12932593187208378685]
EDGES = np.array(VECTOR_KEYS[:4], dtype=np.uint64)
#: name -> (class, plain reference, the edge hashes of its vectors)
CASES: dict[str, tuple[Any, Callable[[int, int], int], np.ndarray]] = {
    "binomial": (BinomialAlgorithm, binomial_reference, EDGES),
    "fliphash": (FlipHashAlgorithm, fliphash_reference, EDGES),
    "powerch": (PowerCHAlgorithm, powerch_reference, EDGES),
}
NAMES = sorted(CASES)
#: name -> the numpy form
VECTORISED: dict[str, Callable[[np.ndarray, int], np.ndarray]] = {
    "binomial": binomial_vectorised,
    "fliphash": fliphash_vectorised,
    "powerch": powerch_vectorised,
}
#: name -> its own test file, which holds VECTORS (bucket count -> the reference code's
#: bucket of each of VECTOR_KEYS) and WEYL_SUMS (bucket count -> its weighted sum)
VECTOR_FILES: dict[str, Any] = {
    "binomial": test_algorithms_binomial,
    "fliphash": test_algorithms_fliphash,
    "powerch": test_algorithms_powerch,
}
KEYS = [f"key-{i}".encode() for i in range(2000)]


def _random_hashes(name: str, count: int, seed: int) -> np.ndarray:
    hashes = np.random.default_rng(seed).integers(0, 2**64, count, dtype=np.uint64)
    return np.concatenate([CASES[name][2], hashes])


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=40, deadline=None)
@given(buckets=st.one_of(st.integers(1, 300),
                         st.sampled_from([2**k + d for k in range(1, 16) for d in (-1, 0, 1)])),
       seed=st.integers(0, 2**32 - 1))
def test_adding_a_bucket_moves_keys_only_to_it(name: str, buckets: int, seed: int) -> None:
    """N -> N+1 moves keys only to bucket N, so removing the last moves only its keys back
    (around powers of two too, where the enclosing tree doubles)."""
    cls = CASES[name][0]
    hashes = _random_hashes(name, 4000, seed)
    before = cls.build(numbered_servers(buckets)).lookup_many(hashes)
    after = cls.build(numbered_servers(buckets + 1)).lookup_many(hashes)
    moved = before != after
    assert set(after[moved].tolist()) <= {buckets}
    assert not (after[~moved] == buckets).any()


@pytest.mark.parametrize("name", NAMES)
def test_without_the_last_server_is_the_shorter_fleet(name: str) -> None:
    """without(last) routes as N - 1 buckets; any other index gives None."""
    cls = CASES[name][0]
    fleet = numbered_servers(7)
    algorithm = cls.build(fleet)
    fallen = algorithm.without(6)
    assert fallen is not None and fallen.servers == tuple(fleet[:6])
    hashes = _random_hashes(name, 2000, 3)
    assert fallen.lookup_many(hashes).tolist() == cls.build(
        fleet[:6]).lookup_many(hashes).tolist()
    assert algorithm.without(2) is None
    assert cls.build(fleet[:1]).without(0) is None


@pytest.mark.parametrize("name", NAMES)
def test_balance_at_a_thousand_servers_is_key_noise(name: str) -> None:
    """Uniform key hashes on N = 1,000: keys-per-server CV within 1.5x of multinomial noise."""
    keys = 500_000
    hashes = np.random.default_rng(11).integers(0, 2**64, keys, dtype=np.uint64)
    counts = np.bincount(CASES[name][0].build(numbered_servers(1000)).lookup_many(hashes),
                         minlength=1000)
    noise = np.sqrt(999 / keys)
    assert counts.std() / counts.mean() < 1.5 * noise


@pytest.mark.parametrize("name", NAMES)
def test_route_hashes_keys_with_xxhash64_seed_0(name: str) -> None:
    """route(keys) and route_one(key) are the lookup of xxHash64(key, seed 0), as for jump."""
    reference = CASES[name][1]
    algorithm = ALGORITHMS[name].build(numbered_servers(37))
    expected = [reference(xxhash.xxh64_intdigest(k, 0), 37) for k in KEYS]
    assert algorithm.route(KEYS).tolist() == expected
    assert algorithm.route(KEYS).dtype == np.uint16
    # route_one hashes and looks up in one C call: the same owner, the empty key too.
    route_one = algorithm.route_one
    assert route_one is not None
    assert [route_one(k) for k in [b"", *KEYS]] == algorithm.route([b"", *KEYS]).tolist()


@pytest.mark.parametrize("name", NAMES)
def test_parity_check_of_the_runner_passes(name: str) -> None:
    """The runner's parity check (batch, scalar, both references) passes."""
    cls, reference, _ = CASES[name]
    algorithm = cls.build(numbered_servers(50))
    hashes = algorithm.hash_keys(KEYS)
    owners, _ = check_parity(algorithm, hashes, algorithm.forms(["numpy-aligned"]))
    assert owners.tolist() == [reference(int(h), 50) for h in hashes]


@pytest.mark.parametrize("name", NAMES)
def test_what_it_refuses_and_holds(name: str) -> None:
    """Weights, parameters and middle removals are refused; no table, 64-bit key hashes."""
    cls = CASES[name][0]
    with pytest.raises(HarnessError, match=rf"algorithm '{name}': servers must be all of "
                       rf"weight 1, since {name} has no weights \(got weight 2 for 'b'\)"):
        cls.build([Server("a"), Server("b", 2)])
    with pytest.raises(ScenarioError, match=f"algorithm '{name}': unknown key 'points'"):
        cls.build(numbered_servers(2), points=3)
    with pytest.raises(HarnessError, match="at least one server"):
        cls.build([])
    fleet = numbered_servers(4)
    assert cls.removal_problem(fleet, fleet[-1].name) is None
    assert f"{name} can remove only the last server ('server-3')" in str(
        cls.removal_problem(fleet, fleet[1].name))
    algorithm = cls.build(numbered_servers(5))
    assert (algorithm.nbytes, algorithm.entries, algorithm.key_bits) == (0, 5, 64)
    assert algorithm.forms(["cffi-packed"]) == {name: algorithm}
    assert algorithm.params == {}
    assert ALGORITHMS[name].build(numbered_servers(5)).exact_shares() is None
    assert cls.estimated_entries(fleet, {}) == 4
    seconds, why = cls.estimated_seconds(fleet, {}, reference_keys=10**6,
                                         fast_keys=10**6, plain_keys=10_000)
    assert 0 < seconds < 5
    assert why == f"{name} looks up 1,000,000 keys in numpy and 10,000 in plain Python"


@pytest.mark.parametrize(("name", "buckets"), [
    (name, buckets) for name in NAMES for buckets in sorted(VECTOR_FILES[name].VECTORS)])
def test_every_form_gives_the_reference_codes_buckets(name: str, buckets: int) -> None:
    """C batch, C scalar, numpy and plain Python give the reference code's bucket per key
    (up to 65,536 buckets in C, one more than a fleet can hold: owners are uint16 indexes)."""
    expected = VECTOR_FILES[name].VECTORS[buckets]
    algorithm = CRangeHash(CASES[name][0].kind, buckets)
    hashes = np.array(VECTOR_KEYS, dtype=np.uint64)
    assert algorithm.lookup_many(hashes).tolist() == expected
    assert [algorithm.lookup(k) for k in VECTOR_KEYS] == expected
    assert VECTORISED[name](hashes, buckets).tolist() == expected
    assert [CASES[name][1](k, buckets) for k in VECTOR_KEYS] == expected


@pytest.mark.parametrize(("name", "buckets"), [
    (name, buckets) for name in NAMES for buckets in sorted(VECTOR_FILES[name].WEYL_SUMS)])
def test_twenty_thousand_keys_sum_as_the_reference_code(name: str, buckets: int) -> None:
    """Over 20,000 keys the weighted sum of buckets is the reference code's, in C and numpy."""
    expected = VECTOR_FILES[name].WEYL_SUMS[buckets]
    hashes = np.arange(20_000, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    weights = np.arange(1, 20_001, dtype=np.int64)
    algorithm = CRangeHash(CASES[name][0].kind, buckets)
    assert int((weights * algorithm.lookup_many(hashes)).sum()) == expected
    assert int((weights * VECTORISED[name](hashes, buckets)).sum()) == expected


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=60, deadline=None)
@given(buckets=st.integers(1, 2**16 - 1), seed=st.integers(0, 2**32 - 1),
       count=st.integers(0, 300))
def test_c_and_numpy_forms_equal_the_plain_reference(name: str, buckets: int, seed: int,
                                                     count: int) -> None:
    """For any fleet size 1..65,535 and any key hashes, every form answers alike."""
    cls, reference, _ = CASES[name]
    hashes = _random_hashes(name, count, seed)
    expected = [reference(int(h), buckets) for h in hashes]
    algorithm = cls.build(numbered_servers(buckets))
    assert algorithm.lookup_many(hashes).tolist() == expected
    assert [algorithm.lookup(int(h)) for h in hashes] == expected
    assert VECTORISED[name](hashes, buckets).tolist() == expected
