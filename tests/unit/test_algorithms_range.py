"""Range partitioning (harness/recipes/algorithms/range_partition.py): byte order kept,
ranges cut at the sample's quantiles, capped rendezvous placement, and what splits,
merges and a lost server move."""

from __future__ import annotations

import bisect
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.errors import HarnessError
from harness.core.servers import Server
from harness.recipes.algorithms import ALGORITHMS
from harness.recipes.algorithms.range_partition import (
    RangePartition,
    capacities,
    common_prefix,
    order_codes,
    place,
)


def fleet(n: int, weights: list[float] | None = None) -> list[Server]:
    return [Server(f"server-{i}", 1.0 if weights is None else weights[i % len(weights)])
            for i in range(n)]


def build(n: int = 10, **params: object) -> RangePartition:
    params = {"sample_count": 20_000, "range_keys": 100, **params}
    algorithm = ALGORITHMS["range"].build(fleet(n), **params)
    assert isinstance(algorithm, RangePartition)
    return algorithm


@given(st.lists(st.binary(max_size=20), max_size=40), st.binary(max_size=6))
def test_order_codes_keep_byte_order(keys: list[bytes], prefix: bytes) -> None:
    """A key before another in byte order never gets a larger code."""
    ordered = sorted(zip(keys, order_codes(keys, prefix).tolist(), strict=True))
    for (a, ca), (b, cb) in itertools.pairwise(ordered):
        assert ca <= cb, (a, b)


def test_order_codes_past_the_prefix() -> None:
    codes = order_codes([b"key-00000001", b"key-1", b"abc", b"zzz", b"key-"], b"key-")
    assert codes[0] == int.from_bytes(b"00000001", "big")
    assert codes[1] == int.from_bytes(b"1" + bytes(7), "big")
    assert codes[2] == 0 and codes[3] == 2**64 - 1 and codes[4] == 0
    assert common_prefix([b"key-1", b"key-20", b"key-3"]) == b"key-"
    assert common_prefix([]) == b""


def test_ranges_hold_equal_shares_of_the_sample() -> None:
    algorithm = build(10)
    assert algorithm.entries == 200  # 20,000 / 100
    keys = [f"key-{i}".encode() for i in range(20_000)]
    sizes = algorithm.range_sizes(algorithm.hash_keys(keys))
    assert sizes.max() - sizes.min() <= 111  # keys sharing 8 bytes past "key-": none here
    assert sizes.sum() == 20_000


def test_capped_placement_keeps_counts_to_the_weights() -> None:
    servers = fleet(7, [1, 2, 4])
    owners = place(servers, 700)
    held = np.bincount(owners, minlength=7)
    caps = capacities([s.weight for s in servers], 700)
    assert (held <= caps).all() and held.sum() == 700
    weights = np.array([s.weight for s in servers])
    # Caps are shares rounded up: a server is short by at most what the others rounded up.
    exact = 700 * weights / weights.sum()
    assert (held >= exact - (np.ceil(exact) - exact).sum()).all()


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 30), st.integers(1, 400), st.lists(st.binary(max_size=14), max_size=60))
def test_every_form_routes_like_the_plain_reference(servers: int, range_keys: int,
                                                    keys: list[bytes]) -> None:
    algorithm = ALGORITHMS["range"].build(fleet(servers), sample_count=2_000,
                                          range_keys=range_keys)
    assert isinstance(algorithm, RangePartition)
    codes = algorithm.hash_keys([*keys, b"key-1", b"key-999"])
    plain = algorithm.reference_lookup_many(codes)
    assert algorithm.lookup_many(codes).tolist() == plain
    assert algorithm.reference_owners(codes).tolist() == plain
    assert [algorithm.lookup(int(c)) for c in codes] == plain
    splits = algorithm.splits.tolist()
    owners = algorithm.owners.tolist()
    assert plain == [owners[bisect.bisect_right(splits, int(c))] for c in codes]


def test_a_scan_of_consecutive_keys_stays_on_few_servers() -> None:
    algorithm = build(10)
    keys = sorted(f"key-{i}".encode() for i in range(20_000))
    owners = algorithm.route(keys)
    # 1,000 consecutive keys cross at most 1,000 / 100 + 1 range boundaries.
    assert len(np.unique(owners[5_000:6_000])) <= 11


def test_a_lost_server_moves_only_its_ranges() -> None:
    algorithm = build(10)
    keys = [f"key-{i}".encode() for i in range(20_000)]
    before = algorithm.route(keys)
    after = algorithm.without(3).route(keys)
    renumbered = np.where(before > 3, before - 1, before)
    moved = before == 3
    assert (after[~moved] == renumbered[~moved]).all()
    assert moved.any()


def test_split_moves_nothing_until_a_half_moves() -> None:
    algorithm = build(10)
    keys = [f"key-{i}".encode() for i in range(20_000)]
    codes = algorithm.hash_keys(keys)
    before = algorithm.lookup_many(codes)
    split = algorithm.split(5)
    assert split.entries == algorithm.entries + 1
    assert (split.lookup_many(codes) == before).all()
    other = (int(algorithm.owners[5]) + 1) % 10
    moved = split.moved_to(6, other).lookup_many(codes) != before
    half = split.range_sizes(codes)[6]
    assert moved.sum() == half and 0 < half < algorithm.range_sizes(codes)[5]


def test_merge_moves_the_smaller_range_only() -> None:
    algorithm = build(10)
    codes = algorithm.hash_keys([f"key-{i}".encode() for i in range(20_000)])
    before = algorithm.lookup_many(codes)
    sizes = algorithm.range_sizes(codes)
    index = next(i for i in range(algorithm.entries - 1)
                 if algorithm.owners[i] != algorithm.owners[i + 1])
    merged = algorithm.merged(index, codes)
    assert merged.entries == algorithm.entries - 1
    moved = int((merged.lookup_many(codes) != before).sum())
    assert moved == min(sizes[index], sizes[index + 1])


def test_refusals_name_the_parameter() -> None:
    with pytest.raises(HarnessError, match="range_keys"):
        ALGORITHMS["range"].build(fleet(3), range_keys=0)
    with pytest.raises(HarnessError, match="sample_name"):
        ALGORITHMS["range"].build(fleet(3), sample_name="key")
    with pytest.raises(HarnessError, match="weight"):
        ALGORITHMS["range"].build([Server("a", 0.0), Server("b", 1.0)])
