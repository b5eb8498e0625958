"""Cassandra's NetworkTopologyStrategy (`harness.core.network_topology`): the DataStax C#
driver's token-map vectors (tests/fixtures/cassandra/network_topology.json says where
from), the properties Cassandra's own strategy tests assert (as many replicas as the
factors, no node twice, one per rack while racks last), and the per-token table against
the plain walk under hypothesis."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.client_hashes import cassandra_position
from harness.core.network_topology import Topology, placement_reference, split_zone
from harness.recipes.constructions.cassandra import ring_of_tokens
from tests.paths import FIXTURES

VECTORS: dict[str, Any] = json.loads(
    (FIXTURES / "cassandra" / "network_topology.json").read_text())
#: the driver's order where Cassandra's one-pass walk takes a rack repeat earlier:
#: (test, token) -> the order Cassandra's code gives (the same replicas)
ONE_PASS_ORDER = {("TokenMap_Build_NetworkTopology_Multiple_Racks_Skipping_Hosts_Test", 0):
                  [0, 1, 2, 3, 4],
                  ("TokenMap_Build_NetworkTopology_Multiple_Racks_Skipping_Hosts_Test", 4):
                  [4, 5, 6, 7, 0]}


def _cases() -> list[tuple[str, list[Any], dict[str, int], int, list[int]]]:
    return [(case["test"], case["hosts"], spec["factors"], token, expected)
            for case in VECTORS["cases"] for spec in case["keyspaces"].values()
            for token, expected in spec["replicas"]]


@pytest.mark.parametrize(("test", "hosts", "factors", "token", "expected"), _cases())
def test_replicas_equal_the_drivers(test: str, hosts: list[Any], factors: dict[str, int],
                                    token: int, expected: list[int]) -> None:
    """Every case: the same replicas as the driver, the owner first; the same order too,
    but where the driver fills a data centre's rack repeats after its last new rack."""
    ring = ring_of_tokens([h[3] for h in hosts])
    topology = Topology.of([f"{h[1]}/{h[2]}" for h in hosts], factors)
    at = cassandra_position(token)
    got = [hosts[i][0] for i in placement_reference(ring.positions.tolist(),
                                                    ring.owners.tolist(), at, topology)]
    assert sorted(got) == sorted(expected) and got[0] == expected[0]
    assert got == ONE_PASS_ORDER.get((test, token), expected)
    table = [hosts[i][0] for i in topology.lists(ring, np.array([at], dtype=np.uint64))[0]]
    assert table == got


def test_zones_name_data_centre_and_rack() -> None:
    """"dc/rack"; a zone without a slash is a data centre of one rack; racks of the same
    name in two data centres are two racks."""
    assert split_zone("dc1/r1") == ("dc1", "r1") and split_zone("east") == ("east", "east")
    topology = Topology.of(["a/r", "b/r", "a/r", "c/x"], {"a": 2, "b": 1})
    assert topology.dc_of == (0, 1, 0, -1)
    assert topology.rack_of == (0, 1, 0, 2)
    assert topology.placed() == [2, 1] and topology.copies == 3


@st.composite
def fleets(draw: st.DrawFn) -> tuple[list[list[int]], list[str], dict[str, int]]:
    nodes = draw(st.integers(1, 12))
    zones = [f"dc{draw(st.integers(0, 2))}/r{draw(st.integers(0, 3))}" for _ in range(nodes)]
    tokens = draw(st.lists(st.integers(-(2**63) + 1, 2**63 - 1), min_size=nodes * 3,
                           max_size=nodes * 3, unique=True))
    node_tokens = [tokens[3 * i:3 * i + draw(st.integers(1, 3))] for i in range(nodes)]
    factors = {f"dc{d}": draw(st.integers(1, 4)) for d in range(draw(st.integers(1, 3)))}
    return node_tokens, zones, factors


@settings(max_examples=60, deadline=None)
@given(fleet=fleets(), keys=st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=30))
def test_table_equals_walk_and_cassandras_properties(
        fleet: tuple[list[list[int]], list[str], dict[str, int]], keys: list[int]) -> None:
    """The per-token table gives every key the plain walk's list; each list holds
    min(factor, nodes) replicas of each data centre, no node twice, and as many distinct
    racks of a data centre as its factor allows."""
    node_tokens, zones, factors = fleet
    topology = Topology.of(zones, factors)
    if topology.copies == 0:
        return
    ring = ring_of_tokens(node_tokens)
    hashes = np.array(keys, dtype=np.uint64)
    lists = topology.lists(ring, hashes)
    positions, owners = ring.positions.tolist(), ring.owners.tolist()
    for key, row in zip(keys, lists.tolist(), strict=True):
        assert row == placement_reference(positions, owners, key, topology)
        assert len(set(row)) == len(row) == topology.copies
        for dc, placed in enumerate(topology.placed()):
            mine = [s for s in row if topology.dc_of[s] == dc]
            racks = {topology.rack_of[s] for s in range(len(zones)) if topology.dc_of[s] == dc}
            assert len(mine) == placed
            assert len({topology.rack_of[s] for s in mine}) == min(placed, len(racks))


def test_without_and_joined_renumber() -> None:
    """A failed server leaves the numbering; a joining one takes another's place."""
    topology = Topology.of(["a/1", "a/2", "b/1"], {"a": 1, "b": 1})
    assert topology.without(0).dc_of == (0, 1) and topology.without(0).rack_of == (1, 2)
    assert topology.joined(2).dc_of == (0, 0, 1, 1)
