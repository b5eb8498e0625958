"""Riak's fixed ring (`riak`): riak_core's own assertions on a leave's transfer and the
properties its claim tests hold (tests/fixtures/riak/claim.json says where from), the
partition a key belongs to, the forms against the plain reference under hypothesis,
preference lists, and a leave's handoff."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.errors import HarnessError
from harness.core.servers import Server
from harness.recipes.algorithms import ALGORITHMS
from harness.recipes.algorithms.riak import RiakAlgorithm, key_index, term_to_binary_pair
from harness.recipes.algorithms.riak_claim import joined, left, simple_transfer
from harness.recipes.constructions.allocated import SplitMix64
from tests.paths import FIXTURES

VECTORS: dict[str, Any] = json.loads((FIXTURES / "riak" / "claim.json").read_text())


def _others(ring: list[str], leaving: str) -> list[tuple[str, int]]:
    """The counts riak_core's tests pass: every other node's partitions, by name."""
    return sorted((n, c) for n, c in Counter(ring).items() if n != leaving)


@pytest.mark.parametrize("case", VECTORS["simple_transfer"], ids=lambda c: c["leaving"])
def test_simple_transfer_as_riak_cores_tests_assert(case: dict[str, Any]) -> None:
    """Every assertion of riak_core's simple_transfer tests, for 20 seeds (the partitions
    they name have one qualifying node, so no draw decides them)."""
    for seed in range(20):
        ring = simple_transfer(case["ring"], case["leaving"], _others(case["ring"],
                               case["leaving"]), case["target_n"], SplitMix64(seed))
        if case["expect"] == "target_n_fail":
            assert ring is None
        else:
            assert ring is not None and case["leaving"] not in ring
            for index, node in case["expect"].items():
                assert ring[int(index)] == node


def test_simple_transfer_leaves_counts_two_apart() -> None:
    """riak_core's even-distribution test: most and least differ by 2, and the least is
    under 64 div 9 (claim must then still want, to rebalance)."""
    case = VECTORS["even_distribution"]
    for seed in range(20):
        ring = simple_transfer(case["ring"], case["leaving"],
                               _others(case["ring"], case["leaving"]), case["target_n"],
                               SplitMix64(seed))
        assert ring is not None
        held = sorted(Counter(ring).values())
        assert held[-1] - held[0] == 2 and held[0] < 64 // 9


def _meets_target_n_wrapped(ring: list[str], target_n: int) -> bool:
    size = len(ring)
    return all(ring[i] != ring[(i + d) % size] for i in range(size) for d in range(1, target_n))


def test_claim_meets_riak_cores_properties() -> None:
    """prop_claim_ensures_unique_nodes_adding_singly with choose_claim_v2 over its whole
    range (ring sizes 16 to 512, 4 to 15 nodes joining one at a time, target_n_val 4,
    n_val 3): target_n met round the wrap, every 3 successive partitions on 3 nodes,
    every node between Q div N and ceiling(Q / N) partitions."""
    props = VECTORS["claim_properties"]
    n_val, target_n = props["n_val"], props["target_n_val"]
    for size in props["ring_sizes"]:
        for nodes in range(props["nodes"][0], props["nodes"][1] + 1):
            ring = joined(size, [f"dev{i}@127.0.0.1" for i in range(1, nodes + 1)], target_n)
            assert _meets_target_n_wrapped(ring, target_n), (size, nodes)
            assert all(len({ring[(i + k) % size] for k in range(n_val)}) == n_val
                       for i in range(size)), (size, nodes)
            held = Counter(ring)
            assert len(held) == nodes
            assert all(size // nodes <= c <= -(-size // nodes) for c in held.values())


def test_fresh_ring_and_joins_keep_earlier_owners_mostly() -> None:
    """A fresh ring is its first node's; a join only moves partitions to the joiner
    (claim takes from nodes over their share, and gives nothing back)."""
    names = [f"n{i}" for i in range(8)]
    assert joined(64, names[:1], 4) == ["n0"] * 64
    before, after = joined(64, names[:7], 4), joined(64, names, 4)
    assert {a for b, a in zip(before, after, strict=True) if a != b} == {"n7"}


def test_key_index_is_sha1_of_the_erlang_term() -> None:
    """`term_to_binary({<<"b">>, <<"k">>})` is 131, 104 (small tuple), 2, then each
    binary as 109 and a 4-byte length (Erlang's external term format)."""
    assert term_to_binary_pair(b"b", b"k") == bytes(
        [131, 104, 2, 109, 0, 0, 0, 1, 98, 109, 0, 0, 0, 1, 107])
    assert key_index(b"b", b"k") == int.from_bytes(
        hashlib.sha1(term_to_binary_pair(b"b", b"k")).digest(), "big")


def test_a_key_belongs_to_the_next_partition() -> None:
    """chash splits the ring after the partition the index falls in: an index at or past
    partition i's start (i * 2**160 / Q) is served by partition i + 1, the last by 0."""
    servers = [Server(f"n{i}") for i in range(4)]
    riak = RiakAlgorithm.build(servers, ring_creation_size=8)
    starts = np.arange(0, 8, dtype=np.uint64) << np.uint64(61)
    owner = [int(i) for i in riak.reference_owners(starts)]
    expected = [[s.name for s in servers].index(riak.owners[(i + 1) % 8]) for i in range(8)]
    assert owner == expected
    last = np.array([2**64 - 1], dtype=np.uint64)
    assert riak.lookup(2**64 - 1) == [s.name for s in servers].index(riak.owners[0])
    assert riak.lookup_many(last).tolist() == riak.reference_lookup_many(last)


@settings(max_examples=40, deadline=None)
@given(nodes=st.integers(1, 20), size_power=st.integers(3, 8), target_n=st.integers(1, 5),
       hashes=st.lists(st.one_of(st.integers(0, 2**64 - 1),
                                 st.sampled_from([0, 1, 2**63, 2**64 - 1])),
                       min_size=1, max_size=50))
def test_every_form_routes_like_the_reference(nodes: int, size_power: int, target_n: int,
                                              hashes: list[int]) -> None:
    """lookup, lookup_many, the vectorised and the plain reference agree; each key's
    preference list starts at its owner and walks successive partitions."""
    size = 2**size_power
    if nodes > size:
        return
    riak = RiakAlgorithm.build([Server(f"s{i}") for i in range(nodes)],
                               ring_creation_size=size, target_n_val=target_n)
    keys = np.array(hashes, dtype=np.uint64)
    expected = riak.reference_lookup_many(keys)
    assert riak.reference_owners(keys).tolist() == expected
    assert riak.lookup_many(keys).tolist() == expected
    assert [riak.lookup(h) for h in hashes] == expected
    lists = riak.preference_lists(keys, 3)
    assert lists[:, 0].tolist() == expected
    first = riak.partitions(keys)
    for row, start in zip(lists.tolist(), first.tolist(), strict=True):
        assert row == [riak._owner_index[(start + k) % size] for k in range(3)]


def test_route_hashes_keys_with_the_bucket() -> None:
    """route = lookup of the top 64 bits of each key's SHA-1 index, in its bucket."""
    servers = [Server(f"n{i}") for i in range(5)]
    riak = RiakAlgorithm.build(servers, bucket="users")
    keys = [f"key-{i}".encode() for i in range(200)]
    tops = [key_index(b"users", k) >> 96 for k in keys]
    assert riak.hash_keys(keys).tolist() == tops
    assert riak.route(keys).tolist() == riak.reference_lookup_many(np.array(tops,
                                                                           dtype=np.uint64))
    other = RiakAlgorithm.build(servers, bucket="orders")
    assert other.hash_keys(keys).tolist() != tops


def test_a_leave_hands_off_its_partitions() -> None:
    """`without`: the leaver owns nothing, its partitions' keys move, and the rest of the
    ring keeps its owners unless claim rebalances after (then every node holds at least
    Q div N)."""
    servers = [Server(f"n{i}") for i in range(10)]
    riak = RiakAlgorithm.build(servers)
    fallen = riak.without(5)
    assert isinstance(fallen, RiakAlgorithm)
    assert "n5" not in fallen.owners and len(fallen.servers) == 9
    assert min(Counter(fallen.owners).values()) >= 64 // 9
    moved = [i for i, (a, b) in enumerate(zip(riak.owners, fallen.owners, strict=True))
             if a != b]
    assert {i for i, o in enumerate(riak.owners) if o == "n5"} <= set(moved)
    again = riak.without(5)
    assert isinstance(again, RiakAlgorithm) and again.owners == fallen.owners
    names = [s.name for s in servers]
    assert left(riak.owners, "n5", names, 4, 0) == fallen.owners


@pytest.mark.parametrize(("params", "servers", "message"), [
    ({"ring_creation_size": 48}, 4, "ring_creation_size must be a power of 2"),
    ({"ring_creation_size": 4}, 2, "ring_creation_size must be an integer from 8"),
    ({"ring_creation_size": 2048}, 4, "ring_creation_size must be an integer from 8"),
    ({"target_n_val": 0}, 4, "target_n_val must be an integer from 1"),
    ({}, 65, "at most the ring's 64 partitions"),
    ({"vnodes": 3}, 4, "vnodes"),
])
def test_parameters_and_servers_are_checked(params: dict[str, Any], servers: int,
                                            message: str) -> None:
    """One-line errors for a bad ring size, target_n_val, too many servers, an unknown
    parameter; weights are refused (Riak has none)."""
    with pytest.raises(HarnessError, match=message):
        ALGORITHMS["riak"].build([Server(f"s{i}") for i in range(servers)], **params)
    with pytest.raises(HarnessError, match="weight 1"):
        ALGORITHMS["riak"].build([Server("a"), Server("b", 2)])

