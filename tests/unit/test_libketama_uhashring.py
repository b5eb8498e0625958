"""Our libketama construction against uhashring's ketama mode, point for point and key for key."""

import numpy as np
import pytest
from uhashring import HashRing  # type: ignore[import-untyped]  # ships no type hints

from harness.core.ring import Ring, reference_lookup_many
from harness.core.servers import Server
from harness.recipes.constructions import get_construction
from harness.recipes.constructions.libketama import digest_counts

KEYS_PER_SET = 5_000
# Two servers whose ketama points collide at 2493200072 (found by a birthday search).
COLLIDING = ("cache-349:11211", "cache-450:11211")
COLLISION_POINT = 2493200072

SERVER_SETS = {
    "4 equal": [Server(f"10.0.0.{i}:11211") for i in range(1, 5)],
    "5 weighted": [Server(f"mc{i}.example:11211", w) for i, w in enumerate([1, 2, 3, 1, 5])],
    "10 weights 1..10": [Server(f"cache-{i}:11211", i) for i in range(1, 11)],
    "3 large weights": [Server("a:1", 100), Server("b:2", 1), Server("c:3", 50)],
    "61 equal": [Server(f"node{i}:11211") for i in range(61)],
}


def uhashring_ketama(servers: list[Server]) -> HashRing:
    return HashRing({s.name: {"weight": int(s.weight)} for s in servers}, hash_fn="ketama")


def owners_by_us(ring: Ring, keys: list[str]) -> list[int]:
    hashes = get_construction("libketama").key_hashes([k.encode() for k in keys])
    return reference_lookup_many(ring, hashes)


@pytest.mark.parametrize("set_name", list(SERVER_SETS))
def test_same_points_as_uhashring(set_name: str) -> None:
    """Every point and its owner equal uhashring's continuum (same count per weight too)."""
    servers = SERVER_SETS[set_name]
    ring = get_construction("libketama").build_ring(servers)
    theirs = uhashring_ketama(servers)
    assert ring.positions.tolist() == sorted(theirs.ring)
    names = [servers[i].name for i in ring.owners.tolist()]
    assert names == [theirs.ring[p] for p in ring.positions.tolist()]


@pytest.mark.parametrize("set_name", list(SERVER_SETS))
def test_same_owner_as_uhashring_for_every_key(set_name: str) -> None:
    """5,000 keys per server set get the same server from our ring and from uhashring."""
    servers = SERVER_SETS[set_name]
    theirs = uhashring_ketama(servers)
    keys = [f"user:{set_name}:{i}" for i in range(KEYS_PER_SET)]
    ours = owners_by_us(get_construction("libketama").build_ring(servers), keys)
    assert [servers[i].name for i in ours] == [theirs.get_node(k) for k in keys]
    # Every server on the ring owns some keys, so the comparison has teeth. A share
    # under 1/(40 n) floors to no digests: "b:2" (1/151 of 3 servers) is off both rings.
    assert set(ours) == {i for i, count in enumerate(digest_counts(servers)) if count}


@pytest.mark.parametrize("order", [COLLIDING, COLLIDING[::-1]])
def test_collision_goes_to_the_server_listed_last(order: tuple[str, str]) -> None:
    """uhashring's dict keeps the last writer of a shared point; so does our construction."""
    servers = [Server(name) for name in order]
    ring = get_construction("libketama").build_ring(servers)
    theirs = uhashring_ketama(servers)
    assert ring.collisions == 1
    at = int(np.searchsorted(ring.positions, COLLISION_POINT))
    assert ring.positions[at] == COLLISION_POINT
    assert servers[ring.owners[at]].name == theirs.ring[COLLISION_POINT] == order[-1]
    # Keys whose hash falls just before the shared point are routed to it by both.
    previous = int(ring.positions[at - 1])
    keys = [k for k in (f"k{i}" for i in range(200_000))
            if previous < int(get_construction("libketama").key_hashes([k.encode()])[0])
            <= COLLISION_POINT][:5]
    assert keys
    assert [servers[i].name for i in owners_by_us(ring, keys)] == [theirs.get_node(k) for k in keys]


def test_uhashring_sends_an_exact_hit_to_the_next_point() -> None:
    """A key hashing onto a point: we (and C libketama) pick that point, uhashring the next."""
    servers = SERVER_SETS["4 equal"]
    ring = get_construction("libketama").build_ring(servers)
    theirs = uhashring_ketama(servers)
    key = f"{servers[0].name}-0"  # its hash is the first point of servers[0]
    (ours,) = owners_by_us(ring, [key])
    at = int(np.searchsorted(ring.positions, theirs.hashi(key))) + 1
    assert ours == 0
    assert theirs.get_node(key) == servers[int(ring.owners[at % ring.entries])].name


def test_a_tiny_share_gets_no_points() -> None:
    """Weight 1 against 150 among 3 servers floors to 0 digests, in uhashring as in ours."""
    servers = SERVER_SETS["3 large weights"]
    assert digest_counts(servers) == [79, 0, 39]
    assert "b:2" not in set(uhashring_ketama(servers).ring.values())
