"""The haproxy construction without HAProxy: its hashes, its arcs, its checks.

tests/live/test_haproxy_live.py checks it against a real HAProxy; these check the parts
against each other: batch against single hashes, and the ring's usual lookup
against HAProxy's nearest-point search, on every boundary.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.errors import HarnessError, ScenarioError
from harness.core.ring import reference_lookup_many
from harness.core.servers import Server
from harness.recipes.algorithms import ALGORITHMS
from harness.recipes.constructions import CONSTRUCTIONS, get_construction
from harness.recipes.constructions.haproxy import (
    MAX_SERVER_ID,
    HaproxyConstruction,
    arc_ends,
    full_hash,
    full_hash_many,
    key_hash,
    nearest_point_owner,
    sdbm,
    sdbm_many,
)

MASK32 = 0xFFFFFFFF


def haproxy(**params: str) -> HaproxyConstruction:
    construction = get_construction("haproxy", **params)
    assert isinstance(construction, HaproxyConstruction)
    return construction


@given(st.lists(st.integers(0, MASK32), max_size=50))
def test_full_hash_batch_equals_single(values: list[int]) -> None:
    """full_hash over a uint32 array wraps as the integer form masks."""
    batch = full_hash_many(np.array(values, dtype=np.uint32))
    assert batch.tolist() == [full_hash(v) for v in values]


def test_full_hash_is_a_bijection_on_a_sample() -> None:
    """Every step is invertible on 32 bits, so distinct inputs never share a point."""
    values = np.arange(2**20, dtype=np.uint32) * np.uint32(4093)
    assert len(np.unique(full_hash_many(values))) == len(values)


@given(st.lists(st.binary(max_size=40), max_size=30))
def test_sdbm_batch_equals_single(keys: list[bytes]) -> None:
    """The column-at-a-time batch gives each key's sdbm, empty keys and high bytes included."""
    assert sdbm_many(keys).tolist() == [sdbm(k) for k in keys]


def test_sdbm_steps() -> None:
    """sdbm appends a byte as h * 65599 + byte, the byte read as 0..255."""
    assert sdbm(b"") == 0
    assert sdbm(b"a") == 97
    assert sdbm(b"ab") == (97 * 65599 + 98) & MASK32
    assert sdbm(b"\xff") == 255
    assert key_hash(b"ab", avalanche=False) == sdbm(b"ab")
    assert key_hash(b"ab") == full_hash(sdbm(b"ab"))
    keys = [b"ab", b"\xc3\xa9"]
    assert haproxy().key_hashes(keys).tolist() == [key_hash(k) for k in keys]
    assert haproxy(key_hash="sdbm").key_hashes(keys).tolist() == [sdbm(k) for k in keys]


def test_nearest_point_wins_and_the_one_before_on_a_tie() -> None:
    """Points 10 (server 0), 20 (1), 31 (2): 15 is 5 from both (the one before wins), 16 is
    nearer 20; 25 is nearer 20, 26 nearer 31; hashes past 31 wrap towards 10."""
    points, owners = [10, 20, 31], [0, 1, 2]
    expected = {10: 0, 15: 0, 16: 1, 20: 1, 25: 1, 26: 2, 31: 2, 0: 0, 5: 0, MASK32: 0,
                31 + (2**32 - 21) // 2: 2, 31 + (2**32 - 21) // 2 + 1: 0}
    for h, owner in expected.items():
        assert nearest_point_owner(points, owners, h) == owner, h
    assert arc_ends(np.array(points, dtype=np.uint32)).tolist() == [
        15, 25, (31 + (2**32 - 21) // 2) % 2**32]


servers_strategy = st.lists(st.integers(0, 6), min_size=1, max_size=6).filter(any).map(
    lambda weights: [Server(f"s{i + 1}", w) for i, w in enumerate(weights)])


@settings(max_examples=60, deadline=None)
@given(servers_strategy, st.sampled_from(["order", "name"]),
       st.lists(st.integers(0, MASK32), max_size=100))
def test_ring_routes_every_hash_as_the_nearest_point_search(
        servers: list[Server], ids: str, extra: list[int]) -> None:
    """The usual lookup on the built ring gives HAProxy's nearest point for every arc end,
    the hash after it, every point and its neighbours, both ends of the space and more."""
    construction = haproxy(server_ids=ids)
    points, owners = construction.points(servers)
    ring = construction.build_ring(servers)
    ends = ring.positions.astype(np.int64)
    wide = points.astype(np.int64)
    hashes = np.concatenate([ends, ends + 1, wide, wide - 1, wide + 1, [0, MASK32], extra])
    hashes = (hashes % 2**32).astype(np.uint32)
    plain_points, plain_owners = points.tolist(), owners.tolist()
    expected = [nearest_point_owner(plain_points, plain_owners, int(h)) for h in hashes]
    assert reference_lookup_many(ring, hashes) == expected


def test_points_per_weight_ids_and_no_collisions() -> None:
    """16 points per unit weight at full_hash(id * 4096 + j); weight 0 gives none."""
    servers = [Server("a", 2), Server("b", 0), Server("c", 256)]
    construction = haproxy()
    assert construction.point_counts(servers) == [32, 0, 4096]
    points, _ = construction.points(servers)
    expected = sorted([full_hash(1 * 4096 + j) for j in range(32)]
                      + [full_hash(3 * 4096 + j) for j in range(4096)])
    assert points.tolist() == expected
    ring = construction.build_ring(servers)
    assert ring.entries == 4128 and ring.collisions == 0
    assert set(ring.owners.tolist()) == {0, 2}
    named = haproxy(server_ids="name").points([Server("srv9", 1), Server("x12", 1)])[0]
    assert sorted(named.tolist()) == sorted(
        full_hash(server_id * 4096 + j) for server_id in (9, 12) for j in range(16))


def test_removing_a_server_with_named_ids_moves_only_its_keys() -> None:
    """With ids kept, a server's removal hands its hashes to neighbours and nothing else
    moves: the nearer of two remaining points is still the nearer one."""
    servers = [Server(f"srv{i}", w) for i, w in zip([3, 8, 1, 20, 5], [1, 4, 2, 1, 3],
                                                     strict=True)]
    construction = haproxy(server_ids="name")
    hashes = construction.key_hashes([f"k{i}".encode() for i in range(20_000)])
    before = reference_lookup_many(construction.build_ring(servers), hashes)
    after = reference_lookup_many(construction.build_ring(servers[:1] + servers[2:]), hashes)
    moved = [(b, a) for b, a in zip(before, after, strict=True) if b != (a if a < 1 else a + 1)]
    assert moved and all(b == 1 for b, _ in moved)


@pytest.mark.parametrize(("servers", "ids", "message"), [
    ([Server("a", 1.5)], "order", "integer weights 0..256, as HAProxy's `weight` (server 'a'"),
    ([Server("a", 257)], "order", "integer weights 0..256"),
    ([Server("a", 0)], "order", "at least one server of positive weight"),
    ([Server("web", 1)], "name", "names ending in an id 1..524287"),
    ([Server("s0", 1)], "name", "names ending in an id 1..524287 for server_ids = 'name' "
                               "(server 's0')"),
    ([Server(f"s{MAX_SERVER_ID + 1}", 1)], "name", "names ending in an id"),
    ([Server("a7", 1), Server("b07", 1)], "name", "distinct ids for server_ids = 'name' "
                                                  "(servers 'a7' and 'b07')"),
])
def test_servers_it_cannot_take_are_refused(servers: list[Server], ids: str,
                                            message: str) -> None:
    construction = haproxy(server_ids=ids)
    problem = construction.check_servers(servers)
    assert problem is not None and message in problem
    with pytest.raises(HarnessError, match="haproxy: servers must have"):
        construction.build_ring(servers)


def test_parameters_labels_and_the_ring_algorithm() -> None:
    """Registered beside the other recipes; labels name what differs from HAProxy's defaults;
    the ring algorithm builds it and hashes keys through it."""
    assert CONSTRUCTIONS["haproxy"] is HaproxyConstruction
    assert haproxy().label == "haproxy"
    assert haproxy(key_hash="sdbm", server_ids="name").label == "haproxy sdbm ids=name"
    with pytest.raises(ScenarioError, match="key_hash must be one of 'sdbm avalanche', 'sdbm'"):
        haproxy(key_hash="djb2")
    servers = [Server("a", 1), Server("b", 3)]
    ring = ALGORITHMS["ring"].build(servers, construction="haproxy")
    assert ring.entries == 64 and ring.key_bits == 32
    keys = [b"user:1", b"user:2"]
    assert ring.hash_keys(keys).tolist() == haproxy().key_hashes(keys).tolist()
