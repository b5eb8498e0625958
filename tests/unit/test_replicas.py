"""Preference lists on the ring: the per-point table against the plain walk, and uhashring."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from uhashring import HashRing  # type: ignore[import-untyped]  # ships no type hints

from harness.core.errors import HarnessError
from harness.core.hashing import hash_many
from harness.core.native import replicas as c_replicas
from harness.core.replicas import preference_list_reference, preference_lists
from harness.core.ring import Ring
from harness.core.servers import Server
from harness.recipes.algorithms import get_algorithm
from harness.recipes.algorithms.rendezvous import RendezvousAlgorithm
from harness.recipes.algorithms.rendezvous_weighted import WeightedRendezvousAlgorithm
from harness.recipes.constructions import get_construction
from harness.recipes.constructions.generator import generate_ring
from harness.recipes.replication import ReplicaPlacement, ranked_reference

KEYS = hash_many("fnv1a-fmix32", [f"key-{i}".encode() for i in range(1500)])


def _reference(ring: Ring, hashes: np.ndarray, copies: int,
               zone_of: list[int] | None = None) -> list[list[int]]:
    positions, owners = ring.positions.tolist(), ring.owners.tolist()
    return [preference_list_reference(positions, owners, int(h), copies, zone_of)
            for h in hashes]


@settings(max_examples=60, deadline=None)
@given(servers=st.integers(1, 10), points=st.integers(1, 30), copies=st.integers(1, 10),
       weights=st.lists(st.integers(1, 4), min_size=10, max_size=10))
def test_table_agrees_with_the_walk(servers: int, points: int, copies: int,
                                    weights: list[int]) -> None:
    """Every key's list from the per-point table equals the clockwise walk, and holds
    `copies` distinct servers, the owner first."""
    copies = min(copies, servers)
    ring = generate_ring([Server(f"s{i}", weights[i]) for i in range(servers)], points,
                         "fnv1a-fmix32")
    lists = preference_lists(ring, KEYS, copies)
    assert lists.tolist() == _reference(ring, KEYS, copies)
    assert all(len(set(row)) == copies for row in lists.tolist())
    owners = ring.owners[np.searchsorted(ring.positions, KEYS) % ring.entries]
    assert (lists[:, 0] == owners).all()


@settings(max_examples=60, deadline=None)
@given(servers=st.integers(2, 10), points=st.integers(1, 30), zones=st.integers(1, 5),
       copies=st.integers(1, 5), rack=st.lists(st.integers(0, 4), min_size=10, max_size=10))
def test_zone_aware_table_agrees_with_the_walk(servers: int, points: int, zones: int,
                                               copies: int, rack: list[int]) -> None:
    """Zone-aware: the table equals the walk skipping chosen zones, and no two copies of a
    key share a zone."""
    zone_of = [r % zones for r in rack[:servers]]
    copies = min(copies, len(set(zone_of)))
    ring = generate_ring([Server(f"s{i}") for i in range(servers)], points, "fnv1a-fmix32")
    lists = preference_lists(ring, KEYS, copies, np.array(zone_of))
    assert lists.tolist() == _reference(ring, KEYS, copies, zone_of)
    assert all(len({zone_of[s] for s in row}) == copies for row in lists.tolist())


def test_wraps_past_the_last_point() -> None:
    """A key past the last point starts at the first: the worked ring 10/45/80."""
    ring = Ring(np.array([10, 45, 80], dtype=np.uint32), np.array([0, 1, 2], dtype=np.uint16))
    hashes = np.array([5, 10, 11, 50, 90], dtype=np.uint32)
    assert preference_lists(ring, hashes, 2).tolist() == [[0, 1], [0, 1], [1, 2], [2, 0],
                                                          [0, 1]]


def test_more_copies_than_servers_is_refused() -> None:
    """Three copies on a ring of two servers: an error that says how many there are."""
    ring = Ring(np.array([10, 45], dtype=np.uint32), np.array([0, 1], dtype=np.uint16))
    with pytest.raises(HarnessError, match=r"3 copies need 3 distinct servers .* \(got 2\)"):
        preference_lists(ring, KEYS, 3)


@pytest.mark.parametrize("servers", [
    [Server(f"10.0.0.{i}:11211") for i in range(1, 9)],
    [Server(f"cache-{i}:11211", w) for i, w in enumerate([1, 2, 3, 1, 5, 2], start=1)],
])
def test_ketama_lists_equal_uhashring_range(servers: list[Server]) -> None:
    """Live peer: our libketama ring's 3-copy lists equal uhashring's ketama
    `range(key, size=3, unique=True)` for 3,000 keys."""
    construction = get_construction("libketama")
    ring = construction.build_ring(servers)
    keys = [f"user:{i}" for i in range(3000)]
    ours = preference_lists(ring, construction.key_hashes([k.encode() for k in keys]), 3)
    theirs = HashRing({s.name: {"weight": int(s.weight)} for s in servers}, hash_fn="ketama")
    names = [s.name for s in servers]
    assert [[names[i] for i in row] for row in ours.tolist()] == [
        [node["nodename"] for node in theirs.range(k, size=3, unique=True)] for k in keys]


RENDEZVOUS = ["rendezvous", "rendezvous-weighted"]


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(RENDEZVOUS), servers=st.integers(1, 12),
       copies=st.integers(1, 12), zones=st.integers(0, 4),
       weights=st.lists(st.sampled_from([1.0, 0.5, 3.0]), min_size=12, max_size=12))
def test_rendezvous_top_scores_agree_with_the_plain_ranking(
        name: str, servers: int, copies: int, zones: int, weights: list[float]) -> None:
    """Rendezvous replica sets: the numpy ranking equals the plain ranking for every key
    (zone-aware too), the owner comes first, and the copies are distinct."""
    algorithm_class = get_algorithm(name)
    fleet = [Server(f"node-{i}", weights[i] if name == "rendezvous-weighted" else 1.0)
             for i in range(servers)]
    algorithm = algorithm_class.build(fleet)
    zone_of = np.arange(servers) % zones if zones else None
    places = servers if zone_of is None else len(set(zone_of.tolist()))
    copies = min(copies, places)
    hashes = algorithm.hash_keys([f"k{i}".encode() for i in range(300)])
    assert isinstance(algorithm, RendezvousAlgorithm | WeightedRendezvousAlgorithm)
    fast = ReplicaPlacement(algorithm, copies, zone_of).lists(hashes)
    assert fast.tolist() == [ranked_reference(algorithm, int(h), copies, zone_of)
                             for h in hashes]
    assert (fast[:, 0] == algorithm.lookup_many(hashes)).all()
    assert all(len(set(row)) == copies for row in fast.tolist())


def test_rendezvous_failure_passes_each_key_to_its_next_score() -> None:
    """Rendezvous: when a server fails, each of its keys' lists loses it and gains the next
    server of the ranking; other keys keep their lists."""
    fleet = [Server(f"node-{i}") for i in range(10)]
    before = get_algorithm("rendezvous").build(fleet)
    after = get_algorithm("rendezvous").build(fleet[1:])
    hashes = before.hash_keys([f"k{i}".encode() for i in range(2000)])
    old = ReplicaPlacement(before, 3).lists(hashes).astype(int)
    new = ReplicaPlacement(after, 3).lists(hashes).astype(int) + 1
    lost = (old == 0).any(axis=1)
    assert (old[~lost] == new[~lost]).all()
    for row_old, row_new in zip(old[lost].tolist(), new[lost].tolist(), strict=True):
        assert row_new[:2] == [s for s in row_old if s != 0][:2]


def test_the_c_table_takes_misaligned_strided_and_wider_arrays() -> None:
    """cext/replicas.c reads copies of misaligned, strided or int64 inputs, never the
    arrays themselves: the table is the same for each shape, and refusals are errors."""
    ring = generate_ring([Server(f"s{i}") for i in range(6)], 20, "fnv1a-fmix32")
    expected = c_replicas.replica_start_table(ring.owners, ring.owners, 3)
    buffer = np.zeros(2 * ring.entries + 1, dtype=np.uint16)
    buffer[1::2] = ring.owners
    strided = buffer[1::2]
    raw = np.zeros(ring.owners.nbytes + 1, dtype=np.uint8)
    misaligned = raw[1:].view(np.uint16)
    misaligned[:] = ring.owners
    for labels in (strided, misaligned, ring.owners.astype(np.int64)):
        assert (c_replicas.replica_start_table(labels, ring.owners, 3) == expected).all()
    with pytest.raises(HarnessError, match="1 to 64 copies"):
        c_replicas.replica_start_table(ring.owners, ring.owners, 65)
    with pytest.raises(HarnessError, match="of one non-zero length"):
        c_replicas.replica_start_table(ring.owners[:-1], ring.owners, 2)
