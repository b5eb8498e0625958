"""maglev: Envoy's OriginalMaglevTable, its documented split, and its even slot counts."""

from __future__ import annotations

import numpy as np
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.errors import ScenarioError
from harness.core.servers import Server, numbered_servers
from harness.metrics.parity import check_parity
from harness.recipes.algorithms.maglev import Hosts, MaglevAlgorithm, fill_reference, is_prime

pytestmark = pytest.mark.c_core

KEYS = [f"key-{i}".encode() for i in range(3000)]
SMALL_PRIMES = [2, 3, 5, 7, 11, 13, 101, 251, 1009, 4099]


def test_envoys_documented_split_for_weights_1_and_2() -> None:
    """Weights 1:2 at M = 65,537 give 21,846 and 43,691 slots, as Envoy's docs say."""
    maglev = MaglevAlgorithm.build([Server("10.0.0.1:80", 1), Server("10.0.0.2:80", 2)])
    assert maglev.slot_counts().tolist() == [21_846, 43_691]
    assert maglev.params == {"table_size": 65_537} and maglev.nbytes == 2 * 65_537


@pytest.mark.parametrize("servers", [1, 2, 3, 10, 100, 1000])
def test_equal_weights_differ_by_at_most_one_slot(servers: int) -> None:
    """With equal weights every server holds floor(M/N) or ceil(M/N) slots (M = 65,537)."""
    counts = MaglevAlgorithm.build(numbered_servers(servers)).slot_counts()
    assert counts.sum() == 65_537
    assert counts.max() - counts.min() <= 1


@settings(max_examples=40, deadline=None)
@given(servers=st.integers(1, 40), table_size=st.sampled_from(SMALL_PRIMES),
       weights=st.lists(st.integers(1, 9), min_size=40, max_size=40))
def test_c_table_equals_the_plain_python_fill(
    servers: int, table_size: int, weights: list[int],
) -> None:
    """The C fill and the plain-Python fill give the same table, weighted or not."""
    fleet = [Server(f"10.1.{i}.7:443", weights[i]) for i in range(servers)]
    maglev = MaglevAlgorithm.build(fleet, table_size=table_size)
    assert maglev.slots().tolist() == fill_reference(Hosts(fleet, table_size), table_size)
    shares = maglev.exact_shares()
    assert shares.sum() == pytest.approx(1.0)
    assert shares == pytest.approx(maglev.slot_counts() / table_size, rel=1e-9)


@settings(max_examples=40, deadline=None)
@given(hashes=st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=50),
       servers=st.integers(1, 30))
def test_lookups_equal_the_table_read_by_hash_mod_m(hashes: list[int], servers: int) -> None:
    """lookup and lookup_many give table[h % M], as both references do."""
    maglev = MaglevAlgorithm.build(numbered_servers(servers), table_size=1009)
    table = maglev.slots()
    expected = [int(table[h % 1009]) for h in hashes]
    array = np.array(hashes, dtype=np.uint64)
    assert maglev.lookup_many(array).tolist() == expected
    assert [maglev.lookup(h) for h in hashes] == expected
    assert maglev.reference_owners(array).tolist() == expected
    assert maglev.reference_lookup_many(array) == expected


def test_route_hashes_keys_with_xxhash64_seed_0() -> None:
    """route(keys) reads slot xxHash64(key, seed 0) % M."""
    maglev = MaglevAlgorithm.build(numbered_servers(7), table_size=251)
    table = maglev.slots()
    assert maglev.route(KEYS).tolist() == [int(table[xxhash.xxh64_intdigest(k) % 251])
                                           for k in KEYS]


def test_hosts_are_taken_in_name_order() -> None:
    """The table does not depend on the configuration order, only on names and weights."""
    fleet = [Server("c", 1), Server("a", 3), Server("b", 2)]
    forward = MaglevAlgorithm.build(fleet, table_size=101)
    backward = MaglevAlgorithm.build(fleet[::-1], table_size=101)
    names = np.array([s.name for s in fleet])
    assert (names[forward.slots()] == names[::-1][backward.slots()]).all()
    hosts = Hosts(fleet, 101)
    assert hosts.owners == [1, 2, 0]
    assert hosts.offsets[0] == xxhash.xxh64_intdigest(b"a", 0) % 101
    assert hosts.skips[0] == xxhash.xxh64_intdigest(b"a", 1) % 100 + 1
    assert hosts.weights == [3 / 6, 2 / 6, 1 / 6] and hosts.max_weight == 0.5


def test_parity_check_of_the_runner_passes() -> None:
    """The runner's parity check (batch, scalar, both references) passes for maglev."""
    maglev = MaglevAlgorithm.build(numbered_servers(20), table_size=4099)
    hashes = maglev.hash_keys(KEYS)
    owners, _ = check_parity(maglev, hashes, maglev.forms(["numpy-aligned"]))
    assert owners.tolist() == maglev.route(KEYS).tolist()


@pytest.mark.parametrize(("value", "message"), [
    (65_536, "table_size must be a prime number"),
    (9, "table_size must be a prime number"),
    (1, "table_size must be an integer from 2 to 2,147,483,647"),
    (2**31, "table_size must be an integer from 2"),
    ("65537", "table_size must be an integer"),
])
def test_bad_table_sizes_are_refused(value: object, message: str) -> None:
    """A table size that is not a prime in range is refused, naming algorithm and field."""
    with pytest.raises(ScenarioError, match=f"algorithm 'maglev': {message}"):
        MaglevAlgorithm.build(numbered_servers(3), table_size=value)


def test_is_prime() -> None:
    """The primality test agrees with a sieve below 10,000."""
    sieve = np.ones(10_000, dtype=bool)
    sieve[:2] = False
    for i in range(2, 100):
        sieve[i * i::i] = False
    assert [n for n in range(10_000) if is_prime(n)] == np.flatnonzero(sieve).tolist()
    assert is_prime(65_537) and is_prime(655_373) and is_prime(2**31 - 1)


def test_labels_and_estimates() -> None:
    """The label names the table size; the estimate is the table's slots."""
    assert MaglevAlgorithm.label_for({"table_size": 65_537}) == "M=65,537"
    assert MaglevAlgorithm.estimated_entries(numbered_servers(3), {"table_size": 101}) == 101
    maglev = MaglevAlgorithm.build(numbered_servers(3), table_size=101)
    assert (maglev.entries, maglev.entry_size, maglev.key_bits) == (101, 2, 64)
