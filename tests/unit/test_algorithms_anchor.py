"""anchor: both forms route alike and as the plain-Python paper algorithm, under any removals."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.errors import HarnessError, ScenarioError
from harness.core.servers import Server, numbered_servers
from harness.metrics.parity import check_parity
from harness.recipes.algorithms import ALGORITHMS
from harness.recipes.algorithms.anchor import AnchorAlgorithm

pytestmark = pytest.mark.c_core

EDGES = np.array([0, 1, 2**32 - 1, 2**32, 2**63, 2**64 - 1], dtype=np.uint64)


# Cross-checked with the authors' code: keys routed by cpp-anchorhash's AnchorHashQre (full
# form) and mem/AnchorHash (reduced form), github.com/anchorhash/cpp-anchorhash, with their
# CRC-32 rehash replaced by ours (b = k mod a, then splitmix64_at(k, b) mod A[b]); both gave
# these buckets for an anchor of 40 with 25 working after removing buckets 3, 17, 0, 24, 9,
# 10. (Over 60 random configurations, 360,000 keys agreed with ours in both forms.)
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
    8, 7, 18, 22, 15, 12, 11, 7, 6, 7, 14, 19, 15, 19, 7, 2, 4, 21, 12, 6, 20, 20, 6, 18, 1,
    15,
]


def _remove_buckets(anchor: AnchorAlgorithm, buckets: list[int]) -> AnchorAlgorithm:
    for bucket in buckets:
        live = [b for b in range(anchor.initial) if b not in set(anchor.removed)]
        anchor = anchor.without(live.index(bucket))
    return anchor


def test_buckets_equal_the_authors_code_with_our_rehash() -> None:
    """Both forms send each recorded key to the bucket the authors' C++ gave it."""
    for arrays in ("full", "reduced"):
        anchor = _remove_buckets(
            AnchorAlgorithm.build(numbered_servers(25), capacity=40, arrays=arrays),
            [3, 17, 0, 24, 9, 10])
        owners = anchor.lookup_many(np.array(KEYS, dtype=np.uint64))
        assert owners.tolist() == anchor.server_of_bucket()[AUTHORS_BUCKETS].tolist()


def _hashes(count: int, seed: int) -> np.ndarray:
    drawn = np.random.default_rng(seed).integers(0, 2**64, count, dtype=np.uint64,
                                                 endpoint=False)
    return np.concatenate([EDGES, drawn])


def _names(algorithm: AnchorAlgorithm, hashes: np.ndarray) -> np.ndarray:
    return np.array([s.name for s in algorithm.servers])[algorithm.lookup_many(hashes)]


def test_removals_fill_a_and_k_as_the_paper_says() -> None:
    """A hand-worked case: capacity 6, 4 working; removing bucket 1 then 3 leaves
    A = [0, 3, 0, 2, 4, 5] and K = [0, 3, 2, 2, 4, 5] in both forms."""
    for arrays in ("full", "reduced"):
        anchor = AnchorAlgorithm.build(numbered_servers(4), capacity=6, arrays=arrays)
        assert anchor.array("A").tolist() == [0, 0, 0, 0, 4, 5]
        fallen = anchor.without(1).without(2)  # server 2 is then bucket 3
        assert tuple(fallen.removed) == (1, 3)
        assert fallen.array("A").tolist() == [0, 3, 0, 2, 4, 5]
        assert fallen.array("K").tolist() == [0, 3, 2, 2, 4, 5]
        assert [s.name for s in fallen.servers] == ["server-0", "server-2"]


@settings(max_examples=60, deadline=None)
@given(servers=st.integers(1, 60), extra=st.integers(0, 90), data=st.data())
def test_both_forms_equal_the_reference_under_any_removals(
    servers: int, extra: int, data: st.DataObject,
) -> None:
    """C full, C reduced, the vectorised and the plain reference give every key the same
    server after any sequence of removals, and the two forms hold the same A and K."""
    capacity = servers + extra
    full = AnchorAlgorithm.build(numbered_servers(servers), capacity=capacity, arrays="full")
    reduced = AnchorAlgorithm.build(numbered_servers(servers), capacity=capacity,
                                    arrays="reduced")
    hashes = _hashes(400, servers * 1000 + extra)
    removals = data.draw(st.integers(0, servers - 1))
    for _ in range(removals + 1):
        expected = full.reference_owners(hashes)
        assert full.lookup_many(hashes).tolist() == expected.tolist()
        assert reduced.lookup_many(hashes).tolist() == expected.tolist()
        assert full.reference_lookup_many(hashes[:60]) == expected[:60].tolist()
        assert [reduced.lookup(int(h)) for h in hashes[:60]] == expected[:60].tolist()
        assert full.array("A").tolist() == reduced.array("A").tolist()
        assert full.array("K").tolist() == reduced.array("K").tolist()
        if len(full.servers) == 1:
            break
        index = data.draw(st.integers(0, len(full.servers) - 1))
        full, reduced = full.without(index), reduced.without(index)


@settings(max_examples=40, deadline=None)
@given(servers=st.integers(2, 80), extra=st.integers(0, 100), data=st.data())
def test_a_removal_moves_only_the_removed_servers_keys(
    servers: int, extra: int, data: st.DataObject,
) -> None:
    """Monotone under removals: every key that changes server was on the one removed."""
    anchor = AnchorAlgorithm.build(numbered_servers(servers), capacity=servers + extra,
                                   arrays=data.draw(st.sampled_from(["full", "reduced"])))
    hashes = _hashes(2000, servers)
    for _ in range(data.draw(st.integers(1, servers - 1))):
        index = data.draw(st.integers(0, len(anchor.servers) - 1))
        fallen = anchor.without(index)
        before, after = _names(anchor, hashes), _names(fallen, hashes)
        moved = before != after
        assert set(before[moved]) <= {anchor.servers[index].name}
        assert not (after == anchor.servers[index].name).any()
        anchor = fallen


@pytest.mark.parametrize("servers", [1, 7, 100])
def test_an_added_server_takes_keys_only_for_itself(servers: int) -> None:
    """A rebuild with one more server (INITANCHOR with w + 1, as ADDBUCKET leaves it) moves
    keys only onto the new server."""
    fleet = numbered_servers(servers + 1)
    before = AnchorAlgorithm.build(fleet[:-1])  # the default capacity, the same for both
    after = AnchorAlgorithm.build(fleet)
    hashes = _hashes(5000, servers)
    moved = _names(before, hashes) != _names(after, hashes)
    assert set(_names(after, hashes)[moved]) <= {fleet[-1].name}
    assert moved.sum() > 0


@pytest.mark.parametrize(("arrays", "removed"), [("full", 0), ("reduced", 0), ("full", 500),
                                                 ("reduced", 500)])
def test_balance_at_a_thousand_servers_is_key_noise(arrays: str, removed: int) -> None:
    """Uniform keys over N = 1,000 (and after removing half of them, every other one): the
    CV of the servers' key counts is within 1.5 times that of multinomial noise."""
    anchor = AnchorAlgorithm.build(numbered_servers(1000), capacity=2000, arrays=arrays)
    for i in range(removed):
        anchor = anchor.without(i)  # server i is then the old server 2i + 1's successor
    hashes = _hashes(400_000, 5)
    counts = np.bincount(anchor.lookup_many(hashes), minlength=len(anchor.servers))
    servers = len(anchor.servers)
    noise = np.sqrt((servers - 1) / len(hashes))
    assert counts.std() / counts.mean() < 1.5 * noise


def test_memory_is_16_or_8_bytes_a_slot_and_2_a_server_after_a_removal() -> None:
    """The full form holds four uint32 arrays, the reduced two; the first removal adds the
    bucket-to-server map (uint16 per initial server)."""
    for arrays, per_slot in (("full", 16), ("reduced", 8)):
        anchor = AnchorAlgorithm.build(numbered_servers(100), capacity=1000, arrays=arrays)
        assert anchor.nbytes == per_slot * 1000 and anchor.entry_size == per_slot
        assert anchor.without(3).nbytes == per_slot * 1000 + 2 * 100


def test_parity_check_passes_after_removals() -> None:
    """The run's parity check (every fast path against the references) holds after removals."""
    assert ALGORITHMS["anchor"] is AnchorAlgorithm
    anchor = AnchorAlgorithm.build(numbered_servers(30), arrays="reduced")
    fallen = anchor.without(0).without(10).without(27)
    assert fallen.capacity == 64 and len(fallen.servers) == 27
    hashes = _hashes(3000, 1)
    owners, _ = check_parity(fallen, hashes, fallen.forms(["anchor"]))
    assert owners.tolist() == fallen.lookup_many(hashes).tolist()


@pytest.mark.parametrize(("servers", "capacity"), [(1, 2), (10, 32), (16, 32), (17, 64),
                                                   (1000, 2048), (1001, 2048)])
def test_the_default_capacity_is_a_power_of_two_from_twice_the_servers(
        servers: int, capacity: int) -> None:
    """capacity 0 is the power of two at least 2N, so that one server more or less keeps
    the anchor (and a rebuild with one more server moves keys only onto it)."""
    assert AnchorAlgorithm.build(numbered_servers(servers)).capacity == capacity


def test_bad_parameters_and_servers_are_refused_in_one_line() -> None:
    """capacity below the servers, an unknown form, weights and a last removal are refused."""
    with pytest.raises(HarnessError, match="no more than the anchor's capacity of 3 buckets"):
        AnchorAlgorithm.build(numbered_servers(4), capacity=3)
    with pytest.raises(ScenarioError, match=r"arrays must be one of 'full', 'reduced'"):
        AnchorAlgorithm.build(numbered_servers(4), arrays="half")
    with pytest.raises(ScenarioError, match="capacity must be an integer from 0"):
        AnchorAlgorithm.build(numbered_servers(4), capacity=-1)
    with pytest.raises(HarnessError, match="all of weight 1"):
        AnchorAlgorithm.build([Server("a"), Server("b", 2)])
    assert AnchorAlgorithm.removal_problem(numbered_servers(1), "server-0") is not None
    with pytest.raises(HarnessError, match="only a working bucket while another one works"):
        AnchorAlgorithm.build(numbered_servers(1)).without(0)


@settings(max_examples=15, deadline=None)
@given(servers=st.integers(1, 65_535), data=st.data())
def test_any_fleet_size_the_harness_takes_routes_as_the_reference(
    servers: int, data: st.DataObject,
) -> None:
    """From 1 to 65,535 servers (the default capacity, up to 131,072 buckets), with a few
    removals: both C forms route as the vectorised reference."""
    full = AnchorAlgorithm.build(numbered_servers(servers))
    reduced = AnchorAlgorithm.build(numbered_servers(servers), arrays="reduced")
    for _ in range(min(servers - 1, data.draw(st.integers(0, 3)))):
        index = data.draw(st.integers(0, len(full.servers) - 1))
        full, reduced = full.without(index), reduced.without(index)
    hashes = _hashes(500, servers)
    expected = full.reference_owners(hashes).tolist()
    assert full.lookup_many(hashes).tolist() == expected
    assert reduced.lookup_many(hashes).tolist() == expected
