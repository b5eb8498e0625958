"""Cassandra's token ring (`cassandra` construction): Murmur3Partitioner tokens against
Cassandra's own values (tests/fixtures/cassandra/murmur3_tokens.json says where they come
from), the C tokens against the plain-Python definition, ownership by the first token >= a
key's, and every 64-bit layout routing keys as Cassandra's signed-token rule does."""

from __future__ import annotations

import bisect
import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.client_hashes import TOKEN_MAX, TOKEN_MIN, cassandra_position, cassandra_token
from harness.core.errors import HarnessError
from harness.core.native import client_hashes as c_client_hashes
from harness.core.ring import reference_lookup_many
from harness.core.servers import Server
from harness.recipes.constructions import get_construction
from harness.recipes.constructions.allocated import SplitMix64
from harness.recipes.constructions.cassandra import node_seed, random_tokens, ring_of_tokens
from harness.recipes.layouts import LAYOUTS
from harness.recipes.traits import recipe_traits
from tests.paths import FIXTURES

pytestmark = pytest.mark.c_core

VECTORS: dict[str, Any] = json.loads((FIXTURES / "cassandra" / "murmur3_tokens.json").read_text())
LAYOUTS_64 = [name for name, cls in LAYOUTS.items() if cls.hash_bits == 64]


def owner_by_signed_tokens(node_tokens: Sequence[Sequence[int] | npt.NDArray[np.int64]],
                           token: int) -> int:
    """Cassandra's rule on signed tokens, written without the ring: the node of the first
    token >= `token`, the smallest token when none is (`TokenMetadata.firstToken`)."""
    flat = sorted((int(t), node) for node, tokens in enumerate(node_tokens) for t in tokens)
    at = bisect.bisect_left([t for t, _ in flat], token)
    return flat[at % len(flat)][1]


@pytest.mark.parametrize("case", VECTORS["tokens"], ids=lambda c: c["key_hex"][:12])
def test_tokens_equal_cassandras(case: dict[str, Any]) -> None:
    """Each key's token, in Python and in C, is the one Cassandra gives (keys with tail
    bytes >= 0x80 among them: Cassandra's sign-extension is in the expected values)."""
    key = bytes.fromhex(case["key_hex"])
    assert cassandra_token(key) == case["token"]
    assert c_client_hashes.cassandra_murmur3_token(key) == case["token"]
    position = c_client_hashes.cassandra_position_many([key])[0]
    assert int(position) == cassandra_position(case["token"])


def test_sign_extension_is_what_the_vectors_pin(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tail bytes read unsigned (the reference MurmurHash3) give other tokens for keys with
    a tail byte >= 0x80 and the same for ASCII keys: Cassandra's values hold such keys, so
    the sign-extension is checked, not assumed."""
    import harness.core.client_hashes as plain

    def unsigned_tail(tail: bytes) -> int:
        return int.from_bytes(tail, "little")

    signed = {case["key_hex"]: cassandra_token(bytes.fromhex(case["key_hex"]))
              for case in VECTORS["tokens"]}
    monkeypatch.setattr(plain, "_tail_word", unsigned_tail)
    differ = [hex_key for hex_key, token in signed.items()
              if cassandra_token(bytes.fromhex(hex_key)) != token]
    assert "fefefefe" in differ and "e2e7" in differ
    assert all(any(b >= 0x80 for b in bytes.fromhex(h)[len(bytes.fromhex(h)) // 16 * 16:])
               for h in differ)
    ascii_key = b"partition-key-17"[:13]
    monkeypatch.undo()
    signed_ascii = cassandra_token(ascii_key)
    monkeypatch.setattr(plain, "_tail_word", unsigned_tail)
    assert cassandra_token(ascii_key) == signed_ascii


def test_empty_key_is_the_minimum_token_and_owned_by_the_first() -> None:
    """Cassandra gives the empty key the minimum token, which the first token owns."""
    assert cassandra_token(b"") == c_client_hashes.cassandra_murmur3_token(b"") == TOKEN_MIN
    ring = ring_of_tokens([[5], [-7]])
    key = c_client_hashes.cassandra_position_many([b""])
    assert reference_lookup_many(ring, key) == [1]


def test_ownership_equals_the_driver_token_map() -> None:
    """Three nodes at tokens 0, 10, 20: the primary replica of each token in the driver's
    SimpleStrategy test, taken from our ring (token + 2**63) and from the signed rule."""
    nodes = VECTORS["ownership"]["node_tokens"]
    ring = ring_of_tokens(nodes)
    for case in VECTORS["ownership"]["primary"]:
        at = np.array([cassandra_position(case["token"])], dtype=np.uint64)
        assert reference_lookup_many(ring, at) == [case["node"]]
        assert owner_by_signed_tokens(nodes, case["token"]) == case["node"]


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=70))
def test_c_tokens_equal_the_python_definition(key: bytes) -> None:
    """Every length across the 16-byte blocks and both halves of the tail."""
    assert c_client_hashes.cassandra_murmur3_token(key) == cassandra_token(key)
    assert TOKEN_MIN < cassandra_token(key) <= TOKEN_MAX or key == b""


@settings(max_examples=40, deadline=None)
@given(servers=st.integers(1, 12), tokens=st.integers(1, 40), seed=st.integers(0, 3),
       weights=st.lists(st.sampled_from([0.5, 1, 2]), min_size=1, max_size=3),
       keys=st.lists(st.binary(max_size=24), min_size=1, max_size=60))
def test_every_form_routes_as_cassandras_rule(servers: int, tokens: int, seed: int,
                                              weights: list[float], keys: list[bytes]) -> None:
    """The construction's ring in every 64-bit layout, its reference and Cassandra's signed
    rule written separately give every key the same node."""
    fleet = [Server(f"10.0.0.{i}", weights[i % len(weights)]) for i in range(servers)]
    construction = get_construction("cassandra", points_per_weight=tokens, seed=seed)
    ring = construction.build_ring(fleet)
    node_tokens = construction.node_tokens(fleet)  # type: ignore[attr-defined]
    hashes = construction.key_hashes(keys)
    expected = [owner_by_signed_tokens(node_tokens, cassandra_token(k)) for k in keys]
    assert reference_lookup_many(ring, hashes) == expected
    for name in LAYOUTS_64:
        layout = LAYOUTS[name].build(ring.positions, ring.owners)
        assert layout.lookup_many(hashes).tolist() == expected, name
        assert [layout.lookup(int(h)) for h in hashes] == expected, name


def test_tokens_per_node_follow_num_tokens_and_weight() -> None:
    """num_tokens per unit weight, rounded, at least one; distinct; never the minimum."""
    construction = get_construction("cassandra", points_per_weight=16, seed=0)
    fleet = [Server("a"), Server("b", 2), Server("c", 0.01)]
    assert construction.point_counts(fleet) == [16, 32, 1]
    ring = construction.build_ring(fleet)
    assert ring.entries == 49 and ring.collisions == 0
    assert np.bincount(ring.owners).tolist() == [16, 32, 1]
    drawn = random_tokens("a", 1536, 0)
    assert len(set(drawn.tolist())) == 1536 and TOKEN_MIN not in drawn.tolist()


def test_token_draws_are_splitmix64_in_order() -> None:
    """The numpy draws are SplitMix64's stream (the plain-Python generator the allocated
    construction defines), read as signed longs."""
    stream = SplitMix64(node_seed("10.0.0.7", 5))
    expected = [(v - 2**64 if v >= 2**63 else v) for v in (stream.next() for _ in range(50))]
    assert random_tokens("10.0.0.7", 50, 5).tolist() == expected


def test_a_node_keeps_its_tokens_when_others_join_or_leave() -> None:
    """Tokens depend on the seed and the node's name only, as a Cassandra node's stay put:
    a join only takes ranges to the new node, and a leave only gives its ranges away."""
    construction = get_construction("cassandra", points_per_weight=8, seed=3)
    fleet = [Server(f"n{i}") for i in range(6)]
    before = construction.node_tokens(fleet)  # type: ignore[attr-defined]
    after = construction.node_tokens([*fleet, Server("n6")])  # type: ignore[attr-defined]
    assert [t.tolist() for t in after[:6]] == [t.tolist() for t in before]
    keys = [f"key-{i}".encode() for i in range(3000)]
    hashes = construction.key_hashes(keys)
    old = np.array(reference_lookup_many(construction.build_ring(fleet), hashes))
    new = np.array(reference_lookup_many(construction.build_ring([*fleet, Server("n6")]),
                                         hashes))
    assert set(new[old != new].tolist()) == {6}
    assert random_tokens("n0", 8, 3).tolist() != random_tokens("n0", 8, 4).tolist()


def test_parameters_are_checked() -> None:
    """One-line errors for num_tokens out of range, a bad seed, an unknown parameter."""
    with pytest.raises(HarnessError, match="points_per_weight"):
        get_construction("cassandra", points_per_weight=0)
    with pytest.raises(HarnessError, match="points_per_weight"):
        get_construction("cassandra", points_per_weight=1537)
    with pytest.raises(HarnessError, match="seed"):
        get_construction("cassandra", seed=-1)
    with pytest.raises(HarnessError, match="hash"):
        get_construction("cassandra", hash="crc32")


def test_traits_name_the_token_hash() -> None:
    """The clients' diff names Cassandra's key hash and its token count."""
    traits = recipe_traits("ring", {"construction": "cassandra", "points_per_weight": 16,
                                    "seed": 0}, [Server("a")])
    assert "Murmur3Partitioner" in traits["key hash"]
    assert traits["points per server"] == "16 x weight (num_tokens)"


def test_allocated_holds_cassandras_offline_allocator_checks() -> None:
    """What Cassandra's OfflineTokenAllocatorTest enforces for rf = 1 on one rack
    (test/unit/org/apache/cassandra/dht/tokenallocator/, OfflineTokenAllocator's
    validateAllocation: a warning fails the test), held by our `allocated` construction,
    which follows its NoReplicationTokenAllocator: 32 nodes added one at a time, each
    with num_tokens distinct tokens, and the standard deviation of each node's
    ownership per token never growing by more than WARN_STDEV_GROWTH = 0.05 when a node
    is added. (Cassandra's allocator itself, ported, is checked token for token in
    tests/unit/test_cassandra_allocator.py.)"""
    for tokens in (1, 2, 4, 8, 16):
        construction = get_construction("allocated", points_per_weight=tokens, seed=0)
        previous = None
        for nodes in range(1, 33):
            ring = construction.build_ring([Server(f"n{i}") for i in range(nodes)])
            assert ring.collisions == 0
            assert np.bincount(ring.owners, minlength=nodes).tolist() == [tokens] * nodes
            positions = ring.positions.astype(np.float64)
            arcs = np.diff(np.concatenate([positions[-1:] - 2**32, positions]))
            per_token = np.bincount(ring.owners, weights=arcs, minlength=nodes) / 2**32 / tokens
            spread = float(np.std(per_token, ddof=1)) if nodes > 1 else 0.0
            if previous:
                assert spread - previous <= 0.05, (tokens, nodes)
            previous = spread
