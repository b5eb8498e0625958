"""memento: jump with nothing removed, the plain-Python algorithm after any removals."""

from __future__ import annotations

import jump
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.errors import HarnessError
from harness.core.servers import Server, numbered_servers
from harness.metrics.parity import check_parity
from harness.recipes.algorithms import ALGORITHMS
from harness.recipes.algorithms.memento import MementoAlgorithm

pytestmark = pytest.mark.c_core

EDGES = np.array([0, 1, 2**32 - 1, 2**32, 2**63, 2**64 - 1], dtype=np.uint64)


# Cross-checked with the authors' code: keys routed by java-consistent-hashing-algorithms'
# MementoEngine and Memento (github.com/SUPSI-DTI-ISIN/java-consistent-hashing-algorithms),
# with its rehash Math.abs(hash(key, b)) % r replaced by ours (splitmix64_at(k, b) mod r)
# and Guava's consistentHash by the same jump loop; 30 buckets after removing buckets 29,
# 28, 5, 12, 27, 0, 26: the first two shrink jump's range, the rest are remembered.
# (Over 80 random removal sequences, 240,000 keys agreed with ours.)
KEYS = [
    0x818b39edf54ae299, 0x90a9d85dc1f57127, 0x830ceca12d856e0a, 0xf8e134c1f121b626,
    0x9d6a4ad4f70c51b3, 0x917b06fe504decfa, 0x496adacba6624d83, 0x8df4766cf6213167,
    0x77af9f2c5a0c116e, 0x9c2cc2f91b3c403b, 0xee317ac257bca67e, 0x3ef258314cd1a25b,
    0x4f3759d89a3e4aaf, 0x641dcbc757d910c2, 0x4530873bb0346ac0, 0x599a9468e8308a4a,
    0xefacbfc0c63df7a4, 0x60bd051cb18145bc, 0xc64f6919aafaccb6, 0xa629d5ac3357b6b,
    0x4c74b1711771d2ac, 0xb3dd036d5aec9b0c, 0x73c6d3e81730863f, 0xe3cdba09cbbe484c, 0x0,
    0xffffffffffffffff,
]
AUTHORS_BUCKETS = [
    17, 20, 3, 16, 23, 2, 16, 10, 24, 17, 17, 11, 3, 25, 7, 25, 10, 20, 10, 1, 23, 7, 6, 13,
    7, 10,
]


def test_buckets_equal_the_authors_code_with_our_rehash() -> None:
    """Each recorded key goes to the bucket the authors' Java gave it."""
    memento = MementoAlgorithm.build(numbered_servers(30))
    for bucket in [29, 28, 5, 12, 27, 0, 26]:
        live = [b for b in range(30) if b not in set(memento.removed)]
        memento = memento.without(live.index(bucket))
    assert memento.size == 28  # 29 and 28 left jump's range; the rest are remembered
    owners = memento.lookup_many(np.array(KEYS, dtype=np.uint64))
    assert owners.tolist() == memento.server_of_bucket()[AUTHORS_BUCKETS].tolist()


def _hashes(count: int, seed: int) -> np.ndarray:
    drawn = np.random.default_rng(seed).integers(0, 2**64, count, dtype=np.uint64,
                                                 endpoint=False)
    return np.concatenate([EDGES, drawn])


def _names(algorithm: MementoAlgorithm, hashes: np.ndarray) -> np.ndarray:
    return np.array([s.name for s in algorithm.servers])[algorithm.lookup_many(hashes)]


@pytest.mark.parametrize("servers", [1, 2, 10, 1000, 65_535])
def test_with_nothing_removed_it_is_jump_and_holds_nothing(servers: int) -> None:
    """No removal: every lookup equals PyPI jump-consistent-hash's jump.hash(h, N), and the
    structure holds 0 bytes, as jump."""
    memento = ALGORITHMS["memento"].build(numbered_servers(servers))
    hashes = _hashes(5000, servers)
    expected = [jump.hash(int(h), servers) for h in hashes]
    assert memento.lookup_many(hashes).tolist() == expected
    assert [memento.lookup(int(h)) for h in hashes[:500]] == expected[:500]
    assert memento.reference_owners(hashes).tolist() == expected
    assert memento.nbytes == 0


def test_removing_from_the_end_shrinks_jump() -> None:
    """The last server removed with an empty memento is jump over one bucket fewer."""
    memento = MementoAlgorithm.build(numbered_servers(50)).without(49).without(48)
    hashes = _hashes(3000, 1)
    assert memento.size == 48 and memento.nbytes == 0
    assert memento.lookup_many(hashes).tolist() == [jump.hash(int(h), 48) for h in hashes]


@settings(max_examples=60, deadline=None)
@given(servers=st.integers(1, 80), data=st.data())
def test_c_equals_the_reference_under_any_removals(servers: int, data: st.DataObject) -> None:
    """The C batch, the C scalar, the vectorised and the plain reference agree after any
    sequence of removals (from the end, the middle, or both)."""
    memento = MementoAlgorithm.build(numbered_servers(servers))
    hashes = _hashes(400, servers)
    for _ in range(data.draw(st.integers(0, servers - 1)) + 1):
        expected = memento.reference_owners(hashes)
        assert memento.lookup_many(hashes).tolist() == expected.tolist()
        assert [memento.lookup(int(h)) for h in hashes[:60]] == expected[:60].tolist()
        assert memento.reference_lookup_many(hashes[:60]) == expected[:60].tolist()
        if len(memento.servers) == 1:
            break
        last = len(memento.servers) - 1
        memento = memento.without(data.draw(st.one_of(st.just(last), st.integers(0, last))))


@settings(max_examples=40, deadline=None)
@given(servers=st.integers(2, 100), data=st.data())
def test_a_removal_moves_only_the_removed_servers_keys(servers: int, data: st.DataObject) -> None:
    """Monotone under removals: every key that changes server was on the one removed."""
    memento = MementoAlgorithm.build(numbered_servers(servers))
    hashes = _hashes(2000, servers)
    for _ in range(data.draw(st.integers(1, servers - 1))):
        index = data.draw(st.integers(0, len(memento.servers) - 1))
        fallen = memento.without(index)
        before, after = _names(memento, hashes), _names(fallen, hashes)
        moved = before != after
        assert set(before[moved]) <= {memento.servers[index].name}
        memento = fallen


@pytest.mark.parametrize("removed", [0, 500])
def test_balance_at_a_thousand_servers_is_key_noise(removed: int) -> None:
    """Uniform keys over N = 1,000 (and after removing every other server): the CV of the
    key counts is within 1.5 times that of multinomial noise."""
    memento = MementoAlgorithm.build(numbered_servers(1000))
    for i in range(removed):
        memento = memento.without(i)
    hashes = _hashes(400_000, 9)
    counts = np.bincount(memento.lookup_many(hashes), minlength=len(memento.servers))
    noise = np.sqrt((len(memento.servers) - 1) / len(hashes))
    assert counts.std() / counts.mean() < 1.5 * noise


@pytest.mark.parametrize("removed", [8, 100, 500, 900])
def test_a_removal_costs_at_most_32_bytes_beyond_the_server_map(removed: int) -> None:
    """Each remembered removal is an 8-byte entry in a table at most half full (16 to 32
    bytes); the bucket-to-server map adds 2 bytes per server."""
    memento = MementoAlgorithm.build(numbered_servers(1000))
    for _ in range(removed):
        memento = memento.without(0)
    table = memento.nbytes - 2 * 1000
    assert 16 * removed <= table <= 32 * removed


def test_parity_check_and_refusals() -> None:
    """The run's parity check holds after removals; weights and a last server are refused."""
    fallen = MementoAlgorithm.build(numbered_servers(40)).without(5).without(38).without(0)
    hashes = _hashes(3000, 2)
    owners, _ = check_parity(fallen, hashes, fallen.forms(["memento"]))
    assert owners.tolist() == fallen.lookup_many(hashes).tolist()
    with pytest.raises(HarnessError, match="all of weight 1"):
        MementoAlgorithm.build([Server("a"), Server("b", 2)])
    assert MementoAlgorithm.removal_problem(numbered_servers(1), "server-0") is not None
    with pytest.raises(HarnessError, match="only a working bucket while another one works"):
        MementoAlgorithm.build(numbered_servers(1)).without(0)


@settings(max_examples=15, deadline=None)
@given(servers=st.integers(1, 65_535), data=st.data())
def test_any_fleet_size_the_harness_takes_routes_as_the_reference(
    servers: int, data: st.DataObject,
) -> None:
    """From 1 to 65,535 servers, with a few removals anywhere: C routes as the reference."""
    memento = MementoAlgorithm.build(numbered_servers(servers))
    for _ in range(min(servers - 1, data.draw(st.integers(0, 3)))):
        memento = memento.without(data.draw(st.integers(0, len(memento.servers) - 1)))
    hashes = _hashes(500, servers)
    assert memento.lookup_many(hashes).tolist() == memento.reference_owners(hashes).tolist()
