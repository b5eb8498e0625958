"""Cassandra's token allocator for replication factor 1 (`cassandra` construction,
`allocation = "allocator"`): the port against the tokens Cassandra's own
NoReplicationTokenAllocator chose when compiled and run here
(tests/fixtures/cassandra-allocator/README.md says how), the port's parts against their
Java definitions, and the construction's rings in every 64-bit layout."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.errors import HarnessError
from harness.core.ring import reference_lookup_many
from harness.core.servers import Server
from harness.recipes.constructions import cassandra_allocator, get_construction
from harness.recipes.constructions.cassandra_allocator import (
    LONG_MAX,
    LONG_MIN,
    JavaPriorityQueue,
    JavaRandom,
    allocate_tokens,
    ranges_of,
    size,
    split,
)
from harness.recipes.layouts import LAYOUTS
from harness.recipes.traits import recipe_traits
from tests.paths import FIXTURES

VECTORS: list[dict[str, Any]] = json.loads(
    (FIXTURES / "cassandra-allocator" / "vectors.json").read_text())
LAYOUTS_64 = [name for name, cls in LAYOUTS.items() if cls.hash_bits == 64]
longs = st.integers(min_value=LONG_MIN, max_value=LONG_MAX)


def case_id(case: dict[str, Any]) -> str:
    counts = case["num_tokens"]
    shape = (f"{len(counts)}x{counts[0]}" if len(set(counts)) == 1
             else f"{len(counts)}-mixed")
    return f"seed{case['seed']}-{shape}"


@pytest.mark.parametrize("case", VECTORS, ids=case_id)
def test_tokens_equal_cassandras_allocator(case: dict[str, Any]) -> None:
    """Every token of every unit equals the one Cassandra's classes chose."""
    assert allocate_tokens(case["num_tokens"], case["seed"]) == case["tokens"]


def test_vectors_cover_allocation_not_only_random_draws() -> None:
    """The vectors would catch a port that drew every token at random: in every case of
    more than one unit, the later units' tokens are not the next random draws."""
    for case in VECTORS:
        if len(case["num_tokens"]) < 2 or case["num_tokens"][1] > case["num_tokens"][0]:
            continue
        random = JavaRandom(case["seed"])
        drawn = [random.next_long() for _ in range(sum(case["num_tokens"]))]
        first = case["num_tokens"][0]
        assert sorted(drawn[:first]) == case["tokens"][0]
        assert sorted(drawn[first:first + case["num_tokens"][1]]) != case["tokens"][1]


def test_ties_through_javas_heap_give_the_same_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the sorted shortcut off, every donor's ranges go through JavaPriorityQueue,
    and the tokens still equal Cassandra's (the shortcut is only taken when it cannot
    differ: the largest ranges distinct)."""
    monkeypatch.setattr(cassandra_allocator, "strictly_decreasing", lambda weights: False)
    for case in VECTORS:
        if sum(case["num_tokens"]) <= 2000:
            assert allocate_tokens(case["num_tokens"], case["seed"]) == case["tokens"]


def test_java_random_matches_javas_published_values() -> None:
    """java.util.Random(42): nextInt() is -1170105035, then 234785527 (values any JVM
    prints for `new Random(42)`); nextLong is two such draws."""
    random = JavaRandom(42)
    assert [random.next_bits(32), random.next_bits(32)] == [-1170105035, 234785527]
    assert JavaRandom(42).next_long() == (-1170105035 << 32) + 234785527


@settings(max_examples=300, deadline=None)
@given(tokens=st.lists(longs, min_size=1, max_size=40, unique=True))
def test_numpy_ranges_equal_token_size(tokens: list[int]) -> None:
    """The numpy ranges (int64 differences that wrap) equal `LongToken.size` written on
    Python ints, for every token from its predecessor."""
    ordered = sorted(tokens)
    expected = [size(ordered[i - 1], ordered[i]) for i in range(len(ordered))]
    assert ranges_of(np.array(ordered, dtype=np.int64)).tolist() == expected


def test_size_edges() -> None:
    """A token's size to itself is the whole ring; the largest step is just under it."""
    assert size(5, 5) == 1.0
    assert size(LONG_MIN, LONG_MAX) == 1.0  # 2**64 - 1 rounds to 2**64 as a double
    assert size(LONG_MAX, LONG_MIN) == 2.0**-64
    assert size(-1, 0) == 2.0**-64 and size(0, -1) == 1.0


@settings(max_examples=300, deadline=None)
@given(left=longs, right=longs, ratio=st.floats(min_value=0.1, max_value=0.9))
def test_split_lies_inside_the_range(left: int, right: int, ratio: float) -> None:
    """A split token lies in the range from left to right (wrapping), about `ratio` of the
    way: within one token plus the ratio's rounding."""
    token = split(left, right, ratio)
    assert LONG_MIN <= token <= LONG_MAX
    span = (right - left) % 2**64 or 2**64
    along = (token - left) % 2**64
    assert abs(along - span * ratio) <= 2 + span * 2**-50


def test_java_priority_queue_orders_ties_as_java_does() -> None:
    """Weights 1, 1, 1, 2, 1, 3, 1, 2, 2, 1 for a to j, offered in turn to a
    java.util.PriorityQueue of Weighted-like entries (compareTo = Double.compare(other,
    this)) and polled to empty: OpenJDK 17 printed "fhidgcejba". A heap with other sift
    rules (Python's heapq) orders the ties differently."""
    queue: JavaPriorityQueue[str] = JavaPriorityQueue()
    for weight, value in zip([1, 1, 1, 2, 1, 3, 1, 2, 2, 1], "abcdefghij", strict=True):
        queue.add(float(weight), value)
    assert "".join(queue.poll()[1] for _ in range(10)) == "fhidgcejba"


def fleet(count: int, weights: tuple[float, ...] = (1,)) -> list[Server]:
    return [Server(f"10.0.0.{i}", weights[i % len(weights)]) for i in range(count)]


def test_construction_places_the_allocators_tokens() -> None:
    """`allocation = "allocator"`: node i holds the tokens unit i got, num_tokens per unit
    weight, and a join keeps every earlier node's tokens (only ranges to it move)."""
    construction = get_construction("cassandra", points_per_weight=8, seed=3,
                                    allocation="allocator")
    servers = fleet(10, (1, 2))
    expected = allocate_tokens(construction.point_counts(servers), 3)
    got = construction.node_tokens(servers)  # type: ignore[attr-defined]
    assert [t.tolist() for t in got] == expected
    ring = construction.build_ring(servers)
    assert np.bincount(ring.owners).tolist() == [8, 16] * 5 and ring.collisions == 0
    keys = [f"key-{i}".encode() for i in range(3000)]
    hashes = construction.key_hashes(keys)
    old = np.array(reference_lookup_many(ring, hashes))
    grown = construction.build_ring([*servers, Server("10.0.0.10")])
    new = np.array(reference_lookup_many(grown, hashes))
    assert set(new[old != new].tolist()) == {10}


def test_a_leave_keeps_the_others_tokens() -> None:
    """A node leaving takes only its own tokens: its ranges pass to the next tokens, and
    every other key stays where it was."""
    construction = get_construction("cassandra", points_per_weight=4, seed=0,
                                    allocation="allocator")
    servers = fleet(8)
    ring = construction.build_ring(servers)
    after = construction.remove_server(ring, 3)
    assert after is not None and after.entries == ring.entries - 4
    keys = [f"k{i}".encode() for i in range(2000)]
    hashes = construction.key_hashes(keys)
    old = np.array(reference_lookup_many(ring, hashes))
    new = np.array(reference_lookup_many(after, hashes))
    renumbered = np.where(old > 3, old - 1, old)
    assert (new[old != 3] == renumbered[old != 3]).all()


@settings(max_examples=25, deadline=None)
@given(servers=st.integers(min_value=1, max_value=12), tokens=st.integers(1, 16),
       seed=st.integers(0, 2**64 - 1),
       keys=st.lists(st.binary(max_size=16), min_size=1, max_size=40))
def test_every_form_routes_allocated_rings_alike(servers: int, tokens: int, seed: int,
                                                 keys: list[bytes]) -> None:
    """Every 64-bit layout of an allocated ring routes each key as the reference does."""
    construction = get_construction("cassandra", points_per_weight=tokens, seed=seed,
                                    allocation="allocator")
    ring = construction.build_ring(fleet(servers))
    hashes = construction.key_hashes(keys)
    expected = reference_lookup_many(ring, hashes)
    for name in LAYOUTS_64:
        layout = LAYOUTS[name].build(ring.positions, ring.owners)
        assert layout.lookup_many(hashes).tolist() == expected, name


def test_allocation_is_checked() -> None:
    """A one-line error naming the parameter, the choices and what was given."""
    with pytest.raises(HarnessError, match="allocation") as raised:
        get_construction("cassandra", allocation="replication-aware")
    assert "\n" not in str(raised.value) and "replication-aware" in str(raised.value)
    with pytest.raises(HarnessError, match="allocation"):
        get_construction("cassandra", allocation=1)


def test_traits_and_label_name_the_allocator() -> None:
    params = {"construction": "cassandra", "points_per_weight": 16, "seed": 0,
              "allocation": "allocator"}
    traits = recipe_traits("ring", params, [Server("a")])
    assert "token allocator" in traits["point hash"]
    assert get_construction("cassandra", allocation="allocator").label == (
        "cassandra allocator num_tokens=16")


def test_a_token_put_twice_changes_owner_as_a_tree_map_does() -> None:
    """A split of a range one token wide lands on the range's start, a token already in
    the ring: Cassandra's `sortedTokens.put` then gives that token to the new unit, and
    the ring keeps one entry for it."""
    assert split(7, 8, 0.9) == 7
    allocator = cassandra_allocator.NoReplicationAllocator(0)
    allocator.tokens = np.array([5, 9], dtype=np.int64)
    allocator.owners = np.array([0, 1], dtype=np.int64)
    allocator._put([5, 7, 7], 2)
    assert allocator.tokens.tolist() == [5, 7, 9]
    assert allocator.owners.tolist() == [2, 2, 1]


def test_holds_cassandras_offline_allocator_checks() -> None:
    """What Cassandra's OfflineTokenAllocatorTest enforces for rf = 1 on one rack
    (OfflineTokenAllocator's validateAllocation: a warning fails the test), held by the
    port: 32 nodes added one at a time with 1 to 16 tokens each, distinct tokens, and the
    standard deviation of ownership per token never growing by more than 0.05
    (WARN_STDEV_GROWTH) when a node joins, checked as validateAllocation checks it: only
    when the deviation before was not 0.0 (two nodes of one token split the ring exactly
    in half, and the third then grows it by 0.14)."""
    for tokens in (1, 2, 4, 8, 16):
        placed = allocate_tokens([tokens] * 32, 0)
        previous = None
        for nodes in range(1, 33):
            flat = sorted((t, node) for node in range(nodes) for t in placed[node])
            assert len({t for t, _ in flat}) == nodes * tokens
            ranges = ranges_of(np.array([t for t, _ in flat], dtype=np.int64))
            owners = np.array([node for _, node in flat])
            per_token = np.bincount(owners, weights=ranges, minlength=nodes) / tokens
            spread = float(np.std(per_token, ddof=1)) if nodes > 1 else 0.0
            if previous:  # validateAllocation skips a previous deviation of 0.0
                assert spread - previous <= 0.05, (tokens, nodes)
            previous = spread


DIGESTS: list[dict[str, Any]] = json.loads(
    (FIXTURES / "cassandra-allocator" / "digests.json").read_text())


def case_text(seed: int, counts: list[int], tokens: list[list[int]]) -> str:
    """A case as GenerateVectors.runCase prints it, whose SHA-256 digests.json keeps."""
    rows = ",\n    ".join("[" + ", ".join(str(t) for t in unit) + "]" for unit in tokens)
    return (f'{{"seed": {seed}, "num_tokens": [{", ".join(str(c) for c in counts)}], '
            f'"tokens": [{rows}]}}')


def test_case_text_is_the_generators() -> None:
    """The text the digests are taken of, rebuilt from a kept vector, is its JSON."""
    case = VECTORS[1]
    text = case_text(case["seed"], case["num_tokens"], case["tokens"])
    assert json.loads(text) == case


@pytest.mark.parametrize("case", DIGESTS, ids=lambda case: f"seed{case['seed']}")
def test_mixed_num_tokens_equal_cassandras_or_fail_where_it_throws(
        case: dict[str, Any]) -> None:
    """40 more fleets of 25 to 60 nodes with num_tokens drawn from 1 to 48 (by
    java.util.Random(seed), as GenerateVectors draws them): where Cassandra's allocator
    chose tokens, the port chooses the same (the SHA-256 of the case's text); where it
    threw NoSuchElementException (a donor asked for more ranges than it holds), the port
    raises AllocatorFailure."""
    shape = JavaRandom(case["seed"])
    counts = [1 + shape.next_int(48) for _ in range(25 + shape.next_int(36))]
    if "throws" in case:
        with pytest.raises(cassandra_allocator.AllocatorFailure, match="NoSuchElement"):
            allocate_tokens(counts, case["seed"])
        return
    text = case_text(case["seed"], counts, allocate_tokens(counts, case["seed"]))
    assert hashlib.sha256(text.encode()).hexdigest() == case["sha256"]


def test_a_fleet_the_allocator_cannot_place_is_refused_before_any_work() -> None:
    """The construction names the failure in one line instead of building another ring."""
    shape = JavaRandom(next(c["seed"] for c in DIGESTS if "throws" in c))
    counts = [1 + shape.next_int(48) for _ in range(25 + shape.next_int(36))]
    seed = next(c["seed"] for c in DIGESTS if "throws" in c)
    servers = [Server(f"n{i}", count / 16) for i, count in enumerate(counts)]
    construction = get_construction("cassandra", points_per_weight=16, seed=seed,
                                    allocation="allocator")
    assert construction.point_counts(servers) == counts
    problem = construction.check_servers(servers)
    assert problem is not None and "NoSuchElementException" in problem and "\n" not in problem
    with pytest.raises(HarnessError, match="token allocator throws: node"):
        construction.build_ring(servers)
