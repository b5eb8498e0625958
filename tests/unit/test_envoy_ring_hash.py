"""Envoy's ring hash (`envoy_ring_hash`): every ring and route of Envoy's own tests that the
construction covers, replayed from tests/fixtures/envoy_ring_hash_vectors.json (copied from
envoyproxy/envoy's ring_hash_lb_test.cc, commit in the file), and its forms against each other."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.errors import HarnessError, ScenarioError
from harness.core.ring import reference_lookup_many
from harness.core.servers import Server
from harness.recipes.constructions import get_construction
from harness.recipes.constructions.envoy_ring_hash import (
    DEFAULT_MAXIMUM_RING_SIZE,
    DEFAULT_MINIMUM_RING_SIZE,
    choose_index,
    hash_counts,
    murmur_hash2_64,
    murmur_hash2_64_many,
    normalized_locality_weights,
    normalized_weights,
    ring_points,
)
from tests.paths import FIXTURES

VECTORS = json.loads((FIXTURES / "envoy_ring_hash_vectors.json").read_text())
CASES: list[dict[str, Any]] = VECTORS["cases"]
MAX64 = 2**64 - 1


def walked_hosts(case: dict[str, Any]) -> tuple[list[int], list[float]]:
    """The hosts Envoy walks (indexes into the case's hosts) and their normalised weights:
    locality by locality for locality-weighted cases, else all hosts in order."""
    weights = case.get("weights", [1] * len(case["hosts"]))
    if "localities" not in case:
        return list(range(len(case["hosts"]))), normalized_weights(weights)
    groups = [members for members, _ in case["localities"]]
    shares = normalized_locality_weights([[weights[i] for i in members] for members in groups],
                                         [weight for _, weight in case["localities"]])
    hosts = [i for members, share in zip(groups, shares, strict=True) if share for i in members]
    return hosts, [w for share in shares for w in share]


def built(case: dict[str, Any]) -> tuple[int, list[int], list[int], list[int]]:
    """The case's ring: size, hashes per walked host, sorted positions, their host indexes."""
    hosts, weights = walked_hosts(case)
    size, counts, positions, owners = ring_points(
        [case["hosts"][i] for i in hosts], weights, case["minimum_ring_size"],
        case.get("maximum_ring_size", DEFAULT_MAXIMUM_RING_SIZE),
        case.get("hash_function", "xx_hash"))
    order = np.argsort(positions, kind="stable")
    return (size, counts, positions[order].tolist(),
            [hosts[i] for i in owners[order].tolist()])


@pytest.mark.parametrize("case", CASES, ids=[case["test"] for case in CASES])
def test_envoy_vectors(case: dict[str, Any]) -> None:
    """Ring size, hashes per host, the ring itself, routes (with retry attempts) and the
    spread of evenly spaced hashes: each as Envoy's test expects it."""
    size, counts, positions, owners = built(case)
    if "ring_size" in case:
        assert size == case["ring_size"]
        assert (min(counts), max(counts)) == (case["min_hashes_per_host"],
                                              case["max_hashes_per_host"])
    if "ring" in case:
        assert [[case["hosts"][o], p] for o, p in zip(owners, positions, strict=True)] \
            == case["ring"]
    for route in case.get("routes", []):
        index = choose_index(positions, route["hash"], route.get("attempt", 0))
        assert owners[index] == route["host"], route
    spread = case.get("spread")
    if spread:
        n = spread["hashes"]
        tally = [0] * len(case["hosts"])
        for i in range(n):
            tally[owners[choose_index(positions, i * (MAX64 // n))]] += 1
        if "counts" in spread:
            assert tally == spread["counts"]
        else:
            assert tally.count(0) == spread["hosts_with_none"] and sum(tally) == n


def test_every_case_is_checked() -> None:
    """17 cases, all with something to check: 57 routes, 8 rings, 5 spreads."""
    assert len(CASES) == 17
    assert sum(len(case.get("routes", [])) for case in CASES) == 57
    assert sum("ring" in case for case in CASES) == 8
    assert sum("spread" in case for case in CASES) == 5
    assert all({"ring", "routes", "spread"} & case.keys() for case in CASES)


FLAT = [case for case in CASES if "localities" not in case]


@pytest.mark.parametrize("case", FLAT, ids=[case["test"] for case in FLAT])
def test_construction_routes_envoy_vectors(case: dict[str, Any]) -> None:
    """The registered construction, built from servers (weights and hash function as the
    case has them), routes each first attempt as Envoy does, in both of its forms."""
    servers = [Server(name, weight) for name, weight in
               zip(case["hosts"], case.get("weights", [1] * len(case["hosts"])), strict=True)]
    construction = get_construction(
        "envoy_ring_hash", minimum_ring_size=case["minimum_ring_size"],
        maximum_ring_size=case.get("maximum_ring_size", DEFAULT_MAXIMUM_RING_SIZE),
        hash_function=case.get("hash_function", "xx_hash"))
    ring = construction.build_ring(servers)
    reference = construction.build_ring_reference(servers)  # type: ignore[attr-defined]
    assert np.array_equal(ring.positions, reference.positions)
    assert np.array_equal(ring.owners, reference.owners)
    first = [route for route in case.get("routes", []) if not route.get("attempt")]
    hashes = np.array([route["hash"] for route in first], dtype=np.uint64)
    assert reference_lookup_many(ring, hashes) == [route["host"] for route in first]


#: std::hash<std::string>{}(s) printed by a program built with g++ 12 (libstdc++) on x86-64
LIBSTDCXX_HASHES = {b"": 6142509188972423790, b"a": 4993892634952068459,
                    b"abcdefgh": 8664279048047335611, b"abcdefghi": 13036955925923793583,
                    b"127.0.0.1:80_0": 17613279263364193813,
                    b"127.0.0.1:90_1": 7593076544525390372}


def test_murmur_hash2_matches_libstdcxx() -> None:
    """Envoy's MURMUR_HASH_2 is libstdc++'s std::hash<std::string>: the empty string, a
    tail alone, one whole word, a word and a tail, and two point names."""
    names = list(LIBSTDCXX_HASHES)
    assert [murmur_hash2_64(name) for name in names] == list(LIBSTDCXX_HASHES.values())
    assert murmur_hash2_64_many(names).tolist() == list(LIBSTDCXX_HASHES.values())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(max_size=40), min_size=1, max_size=30))
def test_murmur_vectorised_matches_reference(names: list[bytes]) -> None:
    assert murmur_hash2_64_many(names).tolist() == [murmur_hash2_64(n) for n in names]


fleets = st.lists(st.tuples(st.integers(0, 10_000), st.integers(1, 5)), min_size=1,
                  max_size=12, unique_by=lambda server: server[0])


@settings(max_examples=40, deadline=None)
@given(fleets, st.sampled_from(["xx_hash", "murmur_hash_2"]), st.integers(1, 300),
       st.integers(1, 400), st.lists(st.integers(0, MAX64), max_size=30),
       st.integers(0, 40))
def test_forms_route_alike(fleet: list[tuple[int, int]], hash_function: str, minimum: int,
                           extra: int, hashes: list[int], attempt: int) -> None:
    """Any fleet and ring bounds: the C/numpy ring equals the point-by-point Python one,
    Ring lookups equal Envoy's search, and hashes per host follow the running sums (the
    total is the ring's size or one more, each host within 2 of its exact share)."""
    servers = [Server(f"10.0.{n // 250}.{n % 250}:80", weight) for n, weight in fleet]
    construction = get_construction("envoy_ring_hash", hash_function=hash_function,
                                    minimum_ring_size=minimum, maximum_ring_size=minimum + extra)
    ring = construction.build_ring(servers)
    reference = construction.build_ring_reference(servers)  # type: ignore[attr-defined]
    assert np.array_equal(ring.positions, reference.positions)
    assert np.array_equal(ring.owners, reference.owners)
    positions = ring.positions.tolist()
    assert reference_lookup_many(ring, np.array(hashes, dtype=np.uint64)) == [
        int(ring.owners[choose_index(positions, h)]) for h in hashes]
    if ring.collisions == 0:
        # with every entry kept, attempt n is n places on, wrapping
        for h in hashes:
            assert choose_index(positions, h, attempt) == (
                (choose_index(positions, h) + attempt) % len(positions))
    weights = normalized_weights([weight for _, weight in fleet])
    size, counts = hash_counts(weights, minimum, minimum + extra)
    # the running sums are doubles: the last target can round just above the size (weights
    # 0.8 and 0.2 on a ring of 3 give 3 + 1 hashes), and Envoy then pushes one more entry
    assert sum(counts) == len(ring.positions) + ring.collisions
    assert size <= sum(counts) <= size + 1
    # running sums: a host's count is within 1 of its share of the scale, which is within
    # 1 of the ring's size
    assert all(abs(count - share * size) < 2
               for count, share in zip(counts, weights, strict=True))


def test_default_ring_sizes_and_key_hash() -> None:
    """Defaults 1,024 and 8,388,608: 3 equal hosts get 342 hashes each (1,026 entries);
    keys are hashed with xxHash64, seed 0, as Envoy's hash policies."""
    construction = get_construction("envoy_ring_hash")
    servers = [Server(f"10.0.0.{i}:80") for i in range(3)]
    assert (DEFAULT_MINIMUM_RING_SIZE, DEFAULT_MAXIMUM_RING_SIZE) == (1024, 8_388_608)
    assert construction.point_counts(servers) == [342, 342, 342]
    assert construction.bits == 64 and construction.label == "envoy_ring_hash"
    assert construction.key_hashes([b"user-1"]).tolist() == [xxhash.xxh64_intdigest(b"user-1")]


def test_validation() -> None:
    """Envoy's own refusal of a minimum above the maximum, in its words; sizes within
    Envoy's bounds; positive integer weights."""
    with pytest.raises(ScenarioError, match=r"maximum_ring_size must be at least "
                                            r"minimum_ring_size \(20\).*\(got 10\)"):
        get_construction("envoy_ring_hash", minimum_ring_size=20, maximum_ring_size=10)
    with pytest.raises(ScenarioError, match="maximum_ring_size"):
        get_construction("envoy_ring_hash", maximum_ring_size=8_388_609)
    with pytest.raises(ScenarioError, match="hash_function"):
        get_construction("envoy_ring_hash", hash_function="md5")
    construction = get_construction("envoy_ring_hash")
    assert construction.check_servers([Server("a:1", 1.5)]) is not None
    with pytest.raises(HarnessError, match="positive integer weights"):
        construction.build_ring([Server("a:1", 0.5)])


def ketama_search(positions: list[int], key_hash: int) -> int:
    """Envoy's `chooseHost` search as its source describes it (libketama's, on signed
    indexes): the middle of [low, high] until hash <= middle and hash > the one before
    (0 before the first), 0 when the search runs past either end."""
    low, high = 0, len(positions)
    while True:
        middle = (low + high) // 2
        if middle == len(positions):
            return 0
        value = positions[middle]
        before = 0 if middle == 0 else positions[middle - 1]
        if before < key_hash <= value:
            return middle
        if value < key_hash:
            low = middle + 1
        else:
            high = middle - 1
        if low > high:
            return 0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, MAX64), min_size=1, max_size=40, unique=True),
       st.lists(st.integers(0, MAX64), max_size=20))
def test_choose_index_is_envoys_search(points: list[int], hashes: list[int]) -> None:
    """The first position >= hash, wrapping to 0, is what Envoy's libketama-style search
    finds on distinct sorted positions, at the ends and on the points themselves."""
    positions = sorted(points)
    probes = hashes + positions + [p + 1 for p in positions if p < MAX64] + [0, MAX64]
    for h in probes:
        assert choose_index(positions, h) == ketama_search(positions, h)
