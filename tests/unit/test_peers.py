"""Peer registry and the uhashring peers, checked against our libketama construction."""

import pytest

from harness.core.errors import HarnessError, UnknownNameError
from harness.core.ring import reference_lookup_many
from harness.core.servers import Server
from harness.recipes.constructions import get_construction
from harness.recipes.peers import PEERS, get_peer
from harness.recipes.peers.sizing import deep_sizeof

SERVERS = [Server(f"cache-{i}:11211", w) for i, w in enumerate([1, 2, 1, 3, 1, 2])]


def test_registry_names_and_unknown_name() -> None:
    """The registry holds both uhashring modes and the algorithm peers; an unknown name
    lists them."""
    assert list(PEERS) == ["uhashring", "uhashring-ketama", "pymemcache",
                           "jump-consistent-hash", "hashring"]
    assert all(cls.name == name for name, cls in PEERS.items())
    with pytest.raises(UnknownNameError, match="uhashring, uhashring-ketama, pymemcache"):
        get_peer("pingora")


def test_ketama_peer_agrees_with_libketama_construction() -> None:
    """uhashring-ketama and our libketama ring give 5,000 keys the same server index."""
    peer = get_peer("uhashring-ketama").build(SERVERS)
    construction = get_construction("libketama")
    ring = construction.build_ring(SERVERS)
    keys = [f"session:{i}" for i in range(5_000)]
    ours = reference_lookup_many(ring, construction.key_hashes([k.encode() for k in keys]))
    assert [peer.lookup_key(k) for k in keys] == ours
    assert peer.entries == ring.entries


def test_default_peer_places_160_points_per_weight() -> None:
    """uhashring's default ring has 160 points per unit weight and routes to every server."""
    peer = get_peer("uhashring").build(SERVERS)
    assert peer.entries == 160 * 10
    assert {peer.lookup_key(f"k{i}") for i in range(2_000)} == set(range(len(SERVERS)))


@pytest.mark.parametrize("name", ["uhashring", "uhashring-ketama", "hashring"])
def test_memory_grows_with_the_ring(name: str) -> None:
    """Ten times the servers (and points) count several times the bytes, tens of bytes a point."""
    small = get_peer(name).build([Server(f"s{i}:1") for i in range(2)])
    large = get_peer(name).build([Server(f"s{i}:1") for i in range(20)])
    assert large.nbytes > 5 * small.nbytes
    assert 40 < large.nbytes / large.entries < 400  # a Python int, a list slot, a dict entry


def test_table_free_peers_size_what_they_hold() -> None:
    """jump.hash holds nothing; pymemcache holds its node list (tens of bytes a node)."""
    assert get_peer("jump-consistent-hash").build([Server(f"s{i}:1") for i in range(20)]
                                                  ).nbytes == 0
    small = get_peer("pymemcache").build([Server(f"s{i}:1") for i in range(2)])
    large = get_peer("pymemcache").build([Server(f"s{i}:1") for i in range(20)])
    assert 20 < (large.nbytes - small.nbytes) / 18 < 200


def test_deep_sizeof_counts_shared_objects_once() -> None:
    """An object reachable twice is counted once; unknown object types are refused."""
    item = "x" * 1000
    assert deep_sizeof([[item], [item]]) < deep_sizeof([[item], ["y" * 1000]])
    with pytest.raises(TypeError, match="plain data only"):
        deep_sizeof([object()])


@pytest.mark.parametrize(
    ("servers", "message"),
    [
        ([Server("a:1", 1.5)], r"positive integer.*'a:1'.*1\.5"),
        ([Server("a:1"), Server("a:1")], "unique"),
        ([], "at least one server"),
    ],
)
def test_peer_refuses_what_uhashring_cannot_hold(servers: list[Server], message: str) -> None:
    """Fractional weights, duplicate names and empty lists are refused with a clear message."""
    with pytest.raises(HarnessError, match=message):
        get_peer("uhashring-ketama").build(servers)
