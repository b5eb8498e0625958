"""jump: routes exactly like PyPI jump-consistent-hash, refuses what it cannot do."""

from __future__ import annotations

import guavahash
import jump
import numpy as np
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.errors import HarnessError, ScenarioError
from harness.core.hashing import xxh64_many
from harness.core.native import algorithms as c_algorithms
from harness.core.servers import Server, numbered_servers
from harness.metrics.parity import check_parity
from harness.recipes.algorithms import ALGORITHMS
from harness.recipes.algorithms.jump import JumpAlgorithm, jump_reference, jump_vectorised

pytestmark = pytest.mark.c_core

EDGES = np.array([0, 1, 2**32 - 1, 2**32, 2**63 - 1, 2**63, 2**64 - 2, 2**64 - 1],
                 dtype=np.uint64)
KEYS = [f"key-{i}".encode() for i in range(2000)]


def _random_hashes(count: int, seed: int) -> np.ndarray:
    hashes = np.random.default_rng(seed).integers(0, 2**64, count, dtype=np.uint64,
                                                  endpoint=False)
    return np.concatenate([EDGES, hashes])


@pytest.mark.parametrize("servers", [1, 2, 3, 10, 100, 1000, 65_535])
def test_lookups_equal_jump_hash(servers: int) -> None:
    """lookup_many and lookup give jump.hash(h, N) on random 64-bit hashes, 0 and 2**64-1."""
    algorithm = ALGORITHMS["jump"].build(numbered_servers(servers))
    hashes = _random_hashes(20_003, servers)  # not a multiple of the C batch width
    expected = [jump.hash(int(h), servers) for h in hashes]
    assert algorithm.lookup_many(hashes).tolist() == expected
    assert [algorithm.lookup(int(h)) for h in hashes[:3000]] == expected[:3000]
    assert algorithm.reference_owners(hashes).tolist() == expected
    assert algorithm.reference_lookup_many(hashes[:3000]) == expected[:3000]


@pytest.mark.parametrize("count", [0, 1, 7, 8, 9, 15, 16, 17, 100])
def test_batches_of_every_size_around_the_c_lane_count(count: int) -> None:
    """The C batch answers right for batches shorter, equal and longer than its 8 lanes."""
    algorithm = JumpAlgorithm.build(numbered_servers(1000))
    hashes = _random_hashes(count, count)[len(EDGES):]
    assert algorithm.lookup_many(hashes).tolist() == [jump.hash(int(h), 1000) for h in hashes]


# The C batch jumps 8 keys side by side (32 with AVX-512, from 64 keys on),
# masked while every lane can take a new key, then drains the keys in flight.
C_LANES = 8
C_AVX512_LANES = 32


@settings(max_examples=150, deadline=None)
@given(count=st.one_of(st.sampled_from([0, 1, C_LANES - 1, C_LANES, C_LANES + 1,
                                        2 * C_LANES - 1, 2 * C_LANES, 2 * C_LANES + 1,
                                        2 * C_AVX512_LANES - 1, 2 * C_AVX512_LANES,
                                        2 * C_AVX512_LANES + 1]),
                       st.integers(0, 3000)),
       buckets=st.integers(1, 2**16), seed=st.integers(0, 2**32 - 1))
def test_c_batch_equals_the_c_scalar_key_by_key(count: int, buckets: int, seed: int) -> None:
    """jump_many over any batch length and bucket count gives jump_bucket's answer per key."""
    hashes = _random_hashes(count, seed)[:count]  # from 8 keys on, the edges come first
    c_jump = c_algorithms.CJump(buckets)
    expected = [c_jump.lookup(int(h)) for h in hashes]
    assert c_jump.lookup_many(hashes).tolist() == expected
    # ... and so do the portable lanes, which an AVX-512 machine never takes from 64 keys on.
    assert c_jump.lookup_many_portable(hashes).tolist() == expected


def test_lookups_equal_guavas_consistent_hash() -> None:
    """Guava's consistentHash (PyPI guavahash, signed 64-bit keys) gives the same buckets."""
    hashes = _random_hashes(20_003, 7)
    for servers in (1, 5, 1000):
        algorithm = JumpAlgorithm.build(numbered_servers(servers))
        signed = [int(h) - 2**64 if h >= 2**63 else int(h) for h in hashes]
        assert algorithm.lookup_many(hashes).tolist() == [
            guavahash.guava(h, servers) for h in signed]


def test_route_hashes_keys_with_xxhash64_seed_0() -> None:
    """route(keys) is jump.hash(xxHash64(key, seed 0), N)."""
    algorithm = ALGORITHMS["jump"].build(numbered_servers(37))
    expected = [jump.hash(xxhash.xxh64_intdigest(k, 0), 37) for k in KEYS]
    assert algorithm.route(KEYS).tolist() == expected
    assert algorithm.route(KEYS).dtype == np.uint16
    assert algorithm.hash_keys(KEYS[:3]).dtype == np.uint64


@settings(max_examples=100, deadline=None)
@given(keys=st.lists(st.binary(max_size=80), max_size=20), seed=st.integers(0, 2**64 - 1))
def test_c_xxhash64_equals_the_xxhash_library(keys: list[bytes], seed: int) -> None:
    """The C xxHash64 (batch hashing, route_one) equals PyPI xxhash for every length."""
    expected = [xxhash.xxh64_intdigest(k, seed) for k in keys]
    assert xxh64_many(keys, seed).tolist() == expected
    algorithm = JumpAlgorithm.build(numbered_servers(9))
    assert [algorithm.route_one(k) for k in keys] == [
        jump.hash(xxhash.xxh64_intdigest(k), 9) for k in keys]


@settings(max_examples=60, deadline=None)
@given(key=st.integers(0, 2**64 - 1), buckets=st.integers(1, 2**16 - 1))
def test_every_path_agrees_with_the_papers_loop(key: int, buckets: int) -> None:
    """C batch, C scalar, vectorised and plain references answer alike for any key and N."""
    expected = jump_reference(key, buckets)
    assert expected == jump.hash(key, buckets)
    algorithm = JumpAlgorithm.build(numbered_servers(buckets))
    hashes = np.array([key], dtype=np.uint64)
    assert algorithm.lookup(key) == expected
    assert algorithm.lookup_many(hashes).tolist() == [expected]
    assert jump_vectorised(hashes, buckets).tolist() == [expected]


@settings(max_examples=25, deadline=None)
@given(servers=st.integers(1, 300), seed=st.integers(0, 2**32 - 1))
def test_growing_and_shrinking_at_the_end_moves_only_the_last_servers_keys(
    servers: int, seed: int,
) -> None:
    """Adding server N+1 moves keys only to it; removing it moves back exactly those keys."""
    hashes = _random_hashes(3000, seed)
    fleet = numbered_servers(servers + 1)
    before = JumpAlgorithm.build(fleet[:-1]).lookup_many(hashes)
    after = JumpAlgorithm.build(fleet).lookup_many(hashes)
    moved = before != after
    assert set(after[moved].tolist()) <= {servers}
    assert not (after[~moved] == servers).any()


def test_parity_check_of_the_runner_passes() -> None:
    """The runner's parity check (batch, scalar, both references) passes for jump."""
    algorithm = JumpAlgorithm.build(numbered_servers(50))
    hashes = algorithm.hash_keys(KEYS)
    owners, _ = check_parity(algorithm, hashes, algorithm.forms(["numpy-aligned"]))
    assert owners.tolist() == [jump.hash(int(h), 50) for h in hashes]


def test_what_jump_refuses() -> None:
    """Weights other than 1, unknown parameters and removing a middle server are refused."""
    with pytest.raises(HarnessError, match=r"algorithm 'jump': servers must be all of weight 1, "
                       r"since jump has no weights \(got weight 2 for 'b'\)"):
        JumpAlgorithm.build([Server("a"), Server("b", 2)])
    assert JumpAlgorithm.check_servers([Server("a", 0.5)], {}) is not None
    with pytest.raises(ScenarioError, match="algorithm 'jump': unknown key 'points'"):
        JumpAlgorithm.build(numbered_servers(2), points=3)
    with pytest.raises(HarnessError, match="at least one server"):
        JumpAlgorithm.build([])
    fleet = numbered_servers(4)
    assert JumpAlgorithm.removal_problem(fleet, fleet[-1].name) is None
    assert "only the last server ('server-3')" in str(
        JumpAlgorithm.removal_problem(fleet, fleet[1].name))


def test_jump_holds_no_structure() -> None:
    """No table: zero bytes for its 5 buckets (entries), 64-bit key hashes, one form."""
    algorithm = JumpAlgorithm.build(numbered_servers(5))
    assert (algorithm.nbytes, algorithm.entries, algorithm.key_bits) == (0, 5, 64)
    assert algorithm.forms(["cffi-packed"]) == {"jump": algorithm}
    assert algorithm.params == {}
    assert ALGORITHMS["jump"].build(numbered_servers(5)).exact_shares() is None
    assert JumpAlgorithm.estimated_entries(numbered_servers(5), {}) == 5
