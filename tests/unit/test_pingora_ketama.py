"""Pingora's ketama (`pingora`, v1 and v2): pingora-ketama's own test vectors, replayed from
tests/fixtures/pingora_ketama_vectors.json (commit in the file), v1 against our nginx, v2's
tie rule on Pingora's own backwards-compatibility setup, and the 6-byte points."""

from __future__ import annotations

import ipaddress
import json
import struct
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.errors import HarnessError, ScenarioError
from harness.core.ring import Ring, reference_lookup_many, reference_owners
from harness.core.servers import Server
from harness.recipes.constructions import get_construction
from harness.recipes.constructions.pingora import (
    PingoraConstruction,
    parse_socket_address,
    point_base,
)
from harness.recipes.layouts import LAYOUTS
from tests.paths import FIXTURES

VECTORS = json.loads((FIXTURES / "pingora_ketama_vectors.json").read_text())
CASES: list[dict[str, Any]] = VECTORS["cases"]
ALPHABET = np.frombuffer(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
                         dtype=np.uint8)


def servers_of(case: dict[str, Any]) -> list[Server]:
    return [Server(name, case.get("weight", 1)) for name in case["hosts"]]


def walk(ring: Ring, key_hash: int, steps: int) -> list[int]:
    """The owners of `steps` points from the key's own on, wrapping: node_iter's walk."""
    start = int(np.searchsorted(ring.positions, key_hash, side="left")) % ring.entries
    return [int(ring.owners[(start + step) % ring.entries]) for step in range(steps)]


@pytest.mark.parametrize("version", ["v1", "v2"])
@pytest.mark.parametrize("case", CASES, ids=[case["test"] for case in CASES])
def test_pingora_vectors(case: dict[str, Any], version: str) -> None:
    """Every route and walk of pingora-ketama's tests, by v1 and by v2 (no two points of
    these fleets coincide, so v2's tie rule does not bite), in C and in Python."""
    servers = servers_of(case)
    construction = get_construction("pingora", version=version)
    ring = construction.build_ring(servers)
    reference = construction.build_ring_reference(servers)  # type: ignore[attr-defined]
    assert np.array_equal(ring.positions, reference.positions)
    assert np.array_equal(ring.owners, reference.owners)
    assert ring.collisions == 0
    keys = [route["key"].encode() for route in case.get("routes", [])]
    if keys:
        owners = reference_owners(ring, construction.key_hashes(keys)).tolist()
        assert [case["hosts"][o] for o in owners] == [r["host"] for r in case["routes"]]
    for item in case.get("walks", []):
        key_hash = int(construction.key_hashes([item["key"].encode()])[0])
        assert [case["hosts"][o] for o in walk(ring, key_hash, len(item["hosts"]))] \
            == item["hosts"]


def test_every_vector_is_counted() -> None:
    """7 cases: 1,011 routes (1,001 logged by a real nginx) and 3 walks of 20 points."""
    assert len(CASES) == 7
    assert sum(len(case.get("routes", [])) for case in CASES) == 1011
    assert sum(len(w["hosts"]) for case in CASES for w in case.get("walks", [])) == 20


@pytest.mark.parametrize("case", [c for c in CASES if "[" not in c["hosts"][0]],
                         ids=[c["test"] for c in CASES if "[" not in c["hosts"][0]])
def test_v1_is_our_nginx_on_ipv4(case: dict[str, Any]) -> None:
    """v1 and our nginx construction build the same ring on IPv4 fleets."""
    servers = servers_of(case)
    v1 = get_construction("pingora", version="v1").build_ring(servers)
    nginx = get_construction("nginx").build_ring(servers)
    assert np.array_equal(v1.positions, nginx.positions)
    assert np.array_equal(v1.owners, nginx.owners)


def test_ipv6_is_hashed_without_brackets() -> None:
    """Pingora hashes "::1\\0<port>" where nginx hashes the configured "[::1]": the rings
    differ, and Pingora's own IPv6 walk is v1's, not nginx's."""
    servers = [Server(f"[::1]:{port}") for port in (7777, 7778, 7779)]
    loopback = parse_socket_address("[::1]:7777")
    assert loopback is not None and point_base(*loopback) == b"::1\x007777"
    v1 = get_construction("pingora", version="v1").build_ring(servers)
    nginx = get_construction("nginx").build_ring(servers)
    assert not np.array_equal(v1.positions, nginx.positions)


def pingora_setup(seed: int, backends: int = 2000,
                  keys: int = 20_000) -> tuple[list[Server], list[bytes]]:
    """Pingora's test_v2_to_old_version setup: random socket addresses (IPv4 or IPv6, half
    each, any port), weights 1..9, kept in address order (its BTreeSet), and random
    20-character alphanumeric keys."""
    rng = np.random.default_rng(seed)
    chosen: dict[tuple[int, int, int], Server] = {}
    while len(chosen) < backends:
        port = int(rng.integers(0, 2**16))
        weight = int(rng.integers(1, 10))
        if rng.integers(0, 2):
            v4 = ipaddress.IPv4Address(int(rng.integers(0, 2**32)))
            chosen[(4, int(v4), port)] = Server(f"{v4}:{port}", weight)
        else:
            v6 = ipaddress.IPv6Address(int.from_bytes(rng.bytes(16), "big"))
            chosen[(6, int(v6), port)] = Server(f"[{v6}]:{port}", weight)
    servers = [chosen[order] for order in sorted(chosen)]
    letters = ALPHABET[rng.integers(0, len(ALPHABET), size=(keys, 20))]
    return servers, [row.tobytes() for row in letters]


def disagreement(servers: list[Server], keys: list[bytes]) -> tuple[float, int]:
    """Share of keys v1 and v2 send to different servers, and v2's collisions."""
    v1 = get_construction("pingora", version="v1")
    v2 = get_construction("pingora", version="v2")
    ring1, ring2 = v1.build_ring(servers), v2.build_ring(servers)
    hashes = v1.key_hashes(keys)
    differ = reference_owners(ring1, hashes) != reference_owners(ring2, hashes)
    return float(np.mean(differ)), ring2.collisions


def changed_share(first: Ring, second: Ring) -> float:
    """Exact share of the 2**32 key hashes two rings of the same positions send to
    different servers: the arcs of the positions whose owner differs."""
    assert np.array_equal(first.positions, second.positions)
    positions = first.positions.astype(np.int64)
    arcs = np.empty_like(positions)
    arcs[1:] = np.diff(positions)
    arcs[0] = positions[0] + 2**32 - positions[-1]  # the first point owns the wrap
    return float(arcs[first.owners != second.owners].sum() / 2**32)


def test_v2_against_v1_on_pingoras_setup() -> None:
    """On Pingora's setup (2,000 backends in address order, 20,000 keys) v2 and our v1
    agree on every key: the first-listed server is the smallest address. Listed in a
    shuffled order, v1's winners change and v2's do not: 139 of 277 tied positions change
    hands, 0.0085% of the hash space (under Pingora's 0.1%, on every key sampled too)."""
    servers, keys = pingora_setup(seed=2026)
    share, collisions = disagreement(servers, keys)
    assert collisions > 100  # about 8 million points on 2**32 positions: ties do occur
    assert share == 0.0
    shuffled = [servers[i] for i in np.random.default_rng(7).permutation(len(servers))]
    v2 = get_construction("pingora")
    assert np.array_equal(v2.build_ring(shuffled).positions, v2.build_ring(servers).positions)
    names = np.array([s.name for s in servers])
    assert (names[v2.build_ring(servers).owners] == np.array(
        [s.name for s in shuffled])[v2.build_ring(shuffled).owners]).all()
    share, _ = disagreement(shuffled, keys)
    assert share < 0.001
    v1 = get_construction("pingora", version="v1").build_ring(shuffled)
    exact = changed_share(v1, v2.build_ring(shuffled))
    assert 0.0 < exact < 0.001
    assert int(np.count_nonzero(v1.owners != v2.build_ring(shuffled).owners)) == 139


sockets = st.one_of(
    st.tuples(st.ip_addresses(v=4), st.integers(0, 65535)).map(lambda a: f"{a[0]}:{a[1]}"),
    st.tuples(st.ip_addresses(v=6), st.integers(0, 65535)).map(lambda a: f"[{a[0]}]:{a[1]}"))


@settings(max_examples=40, deadline=None)
@given(st.lists(sockets, min_size=1, max_size=8, unique=True),
       st.lists(st.integers(1, 4), min_size=8, max_size=8), st.integers(1, 300),
       st.sampled_from(["v1", "v2"]), st.lists(st.integers(0, 2**32 - 1), max_size=20))
def test_forms_route_alike(names: list[str], weights: list[int], multiple: int, version: str,
                           hashes: list[int]) -> None:
    """Any socket addresses: the C ring equals the Python one and lookups agree; v2's ring
    does not depend on the order of the configuration."""
    servers = [Server(name, weight) for name, weight in zip(names, weights, strict=False)]
    if len({parse_socket_address(n) for n in names}) < len(names):
        return  # two spellings of one address: refused, tested below
    params = {"version": version} | ({"point_multiple": multiple} if version == "v2" else {})
    construction = get_construction("pingora", **params)
    ring = construction.build_ring(servers)
    reference = construction.build_ring_reference(servers)  # type: ignore[attr-defined]
    assert np.array_equal(ring.positions, reference.positions)
    assert np.array_equal(ring.owners, reference.owners)
    array = np.array(hashes, dtype=np.uint32)
    assert reference_owners(ring, array).tolist() == reference_lookup_many(ring, array)
    if version == "v2":
        flipped = construction.build_ring(servers[::-1])
        assert np.array_equal(flipped.positions, ring.positions)
        assert [servers[::-1][o].name for o in flipped.owners.tolist()] \
            == [servers[o].name for o in ring.owners.tolist()]


def test_six_byte_points_are_our_packed_entries() -> None:
    """v2's point, `[u8; 6]` = the u32 hash then the u16 node, native-endian, is byte for
    byte an entry of our packed layouts (numpy-packed's array; cffi-packed's 6 bytes)."""
    servers = [Server(f"10.0.0.{i}:80", 1 + i % 3) for i in range(1, 6)]
    ring = get_construction("pingora").build_ring(servers)
    layout = LAYOUTS["numpy-packed"].build(ring.positions, ring.owners)
    expected = b"".join(struct.pack("=IH", int(h), int(n))
                        for h, n in zip(ring.positions, ring.owners, strict=True))
    assert layout._array.tobytes() == expected  # type: ignore[attr-defined]
    assert LAYOUTS["cffi-packed"].build(ring.positions, ring.owners).entry_size == 6


@pytest.mark.parametrize(("names", "message"), [
    (["backend:80"], "socket addresses"),
    (["10.0.0.1"], "socket addresses"),
    (["10.0.0.01:80"], "socket addresses"),
    (["10.0.0.1:65536"], "socket addresses"),
    (["[::1]:80", "[0::1]:80"], "distinct socket addresses"),
])
def test_refused_servers(names: list[str], message: str) -> None:
    construction = PingoraConstruction()
    problem = construction.check_servers([Server(name) for name in names])
    assert problem is not None and message in problem
    with pytest.raises(HarnessError, match=message):
        construction.build_ring([Server(name) for name in names])


def test_validation_and_labels() -> None:
    """v1 fixes 160 points a weight; a fractional weight is refused; labels name both."""
    with pytest.raises(ScenarioError, match="point_multiple must be 160"):
        get_construction("pingora", version="v1", point_multiple=100)
    with pytest.raises(ScenarioError, match="point_multiple"):
        get_construction("pingora", point_multiple=0)
    assert PingoraConstruction().check_servers([Server("10.0.0.1:80", 1.5)]) is not None
    assert PingoraConstruction().label == "pingora v2"
    assert PingoraConstruction(version="v1").label == "pingora v1"
    assert PingoraConstruction(point_multiple=40).label == "pingora v2 x40"
    mapped = parse_socket_address("[::ffff:1.2.3.4]:80")
    assert mapped is not None and point_base(*mapped) == b"::ffff:1.2.3.4\x0080"
