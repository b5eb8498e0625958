"""jumpback: routes exactly as hash4j's JumpBackHash (SplitMix64), with jump's guarantees."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.errors import HarnessError
from harness.core.native import jumpback as c_jumpback
from harness.core.servers import Server, numbered_servers
from harness.core.splitmix import splitmix64_at
from harness.recipes.algorithms import ALGORITHMS
from harness.recipes.algorithms.jumpback import (
    JumpBackAlgorithm,
    jumpback_reference,
    jumpback_vectorised,
)

pytestmark = pytest.mark.c_core

# (key hash, buckets, bucket) as hash4j's ConsistentHashing.jumpBackHashSplitMix64()
# answers them: computed with hash4j's own classes (AbstractConsistentJumpBackBucketHasher
# and SplitMix64Algorithm, github.com/dynatrace-oss/hash4j at commit 41d814f), run on
# the edge hashes and on random pairs with bucket counts spread over 1 .. 2**31 - 1 as
# hash4j's checksum test spreads them. 200,035 such pairs agreed with cext/jumpback.c.
HASH4J_VECTORS = [
    (0x0, 1, 0),
    (0x0, 2, 0),
    (0x0, 3, 0),
    (0x0, 7, 4),
    (0x0, 1000, 313),
    (0x0, 65536, 19887),
    (0x0, 2147483647, 454938031),
    (0x1, 1, 0),
    (0x1, 2, 1),
    (0x1, 3, 1),
    (0x1, 7, 5),
    (0x1, 1000, 492),
    (0x1, 65536, 23745),
    (0x1, 2147483647, 285879788),
    (0x7fffffffffffffff, 1, 0),
    (0x7fffffffffffffff, 2, 0),
    (0x7fffffffffffffff, 3, 0),
    (0x7fffffffffffffff, 7, 3),
    (0x7fffffffffffffff, 1000, 423),
    (0x7fffffffffffffff, 65536, 24231),
    (0x7fffffffffffffff, 2147483647, 100900519),
    (0x8000000000000000, 1, 0),
    (0x8000000000000000, 2, 1),
    (0x8000000000000000, 3, 1),
    (0x8000000000000000, 7, 1),
    (0x8000000000000000, 1000, 674),
    (0x8000000000000000, 65536, 8354),
    (0x8000000000000000, 2147483647, 1209974946),
    (0xffffffffffffffff, 1, 0),
    (0xffffffffffffffff, 2, 1),
    (0xffffffffffffffff, 3, 2),
    (0xffffffffffffffff, 7, 2),
    (0xffffffffffffffff, 1000, 288),
    (0xffffffffffffffff, 65536, 27680),
    (0xffffffffffffffff, 2147483647, 1533357088),
    (0x20e9fa102240cc4e, 219, 120),
    (0xb06e6c51eaa01658, 47866666, 47153103),
    (0x7b217f2728713276, 459, 451),
    (0xa0c19054f893f6d9, 963, 68),
    (0x410201a3792cecab, 2, 1),
    (0x623afff414d4761c, 356326904, 41390625),
    (0x707dbcc3b991f2f6, 3725, 3666),
    (0x5d485e2f9e26b9aa, 5714126, 2966065),
    (0x54b5680a27c604ba, 155197, 121435),
    (0x85f9f06a070b7a20, 1, 0),
    (0xc85cb7355b5e5245, 612, 453),
    (0xf0c946bd1b9c0ef3, 3, 0),
    (0x531b60038b2dc43e, 55854, 47939),
    (0x32e489280910ab15, 2168026, 1822795),
    (0x5cf1a0090ffc4e50, 1504, 810),
    (0x52dc151e9ce2b47f, 13034, 9176),
    (0x8a5e8ee0f204bda2, 91668646, 79466516),
    (0x845d7a6020244e8a, 40, 34),
    (0x31caf42cae742992, 1904243, 179546),
    (0xe626a133e0365a0a, 20641, 6118),
    (0x32d162e95dc97603, 8092958, 429218),
    (0xdbf636d26cdcd5ec, 223, 83),
    (0xa8e8615662138942, 26431270, 23776765),
    (0xd57559e696fe9c26, 915660, 911871),
    (0xad414f9c5aeeb2b5, 126, 29),
]

EDGES = np.array([0, 1, 2**32 - 1, 2**32, 2**63 - 1, 2**63, 2**64 - 1], dtype=np.uint64)


def _hashes(count: int, seed: int) -> np.ndarray:
    drawn = np.random.default_rng(seed).integers(0, 2**64, count, dtype=np.uint64,
                                                 endpoint=False)
    return np.concatenate([EDGES, drawn])


def test_splitmix64_gives_the_published_first_outputs() -> None:
    """SplitMix64 seeded with 0 starts 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4,
    0x06c45d188009454f (Vigna's splitmix64.c, the generator hash4j's SplitMix64V1 is)."""
    assert [splitmix64_at(0, i) for i in range(3)] == [
        0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]


def test_buckets_equal_hash4j() -> None:
    """The C scalar and the plain reference give hash4j's bucket for every recorded pair."""
    for key_hash, buckets, expected in HASH4J_VECTORS:
        assert c_jumpback.jumpback_bucket(key_hash, buckets) == expected
        assert jumpback_reference(key_hash, buckets) == expected


@pytest.mark.parametrize("servers", [1, 2, 3, 1000, 4097, 65_535])
def test_every_form_agrees(servers: int) -> None:
    """C batch, C scalar, the vectorised and the plain reference agree key for key."""
    algorithm = ALGORITHMS["jumpback"].build(numbered_servers(servers))
    hashes = _hashes(20_003, servers)
    expected = algorithm.reference_owners(hashes)
    assert algorithm.lookup_many(hashes).tolist() == expected.tolist()
    assert [algorithm.lookup(int(h)) for h in hashes[:2000]] == expected[:2000].tolist()
    assert algorithm.reference_lookup_many(hashes[:2000]) == expected[:2000].tolist()


@settings(max_examples=60, deadline=None)
@given(buckets=st.integers(1, 2**16 - 1), seed=st.integers(0, 2**32 - 1))
def test_vectorised_equals_c_for_any_bucket_count(buckets: int, seed: int) -> None:
    """The vectorised reference and the C batch agree for any count the harness allows."""
    hashes = _hashes(300, seed)
    assert (jumpback_vectorised(hashes, buckets).tolist()
            == c_jumpback.CJumpBack(buckets).lookup_many(hashes).tolist())


@settings(max_examples=40, deadline=None)
@given(buckets=st.integers(1, 5000), seed=st.integers(0, 2**32 - 1))
def test_a_new_last_bucket_takes_keys_only_for_itself(buckets: int, seed: int) -> None:
    """Monotone: going from n to n + 1 buckets, a key either stays or moves to bucket n."""
    hashes = _hashes(2000, seed)
    before = jumpback_vectorised(hashes, buckets)
    after = jumpback_vectorised(hashes, buckets + 1)
    assert set(after[before != after].tolist()) <= {buckets}


def test_balance_at_a_thousand_servers_is_key_noise() -> None:
    """Uniform keys over N = 1,000: the CV of key counts is within 1.5x multinomial noise."""
    algorithm = JumpBackAlgorithm.build(numbered_servers(1000))
    hashes = _hashes(400_000, 3)
    counts = np.bincount(algorithm.lookup_many(hashes), minlength=1000)
    assert counts.std() / counts.mean() < 1.5 * np.sqrt(999 / len(hashes))


def test_refusals() -> None:
    """Weights, a middle removal and bucket counts outside hash4j's range are refused."""
    with pytest.raises(HarnessError, match="all of weight 1"):
        JumpBackAlgorithm.build([Server("a"), Server("b", 2)])
    servers = numbered_servers(3)
    assert JumpBackAlgorithm.removal_problem(servers, "server-2") is None
    assert "only the last server" in (JumpBackAlgorithm.removal_problem(servers, "server-0")
                                      or "")
    with pytest.raises(HarnessError, match="1 to 2,147,483,647 buckets"):
        c_jumpback.jumpback_bucket(1, 0)
    assert JumpBackAlgorithm.build(servers).nbytes == 0
