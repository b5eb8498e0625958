"""The bucketed layout's own edges: empty buckets, a key above its bucket's last entry,
one crowded bucket, a one-point ring, and skewed buckets where the interpolated
guess lands far from the answer (hypothesis property tests against the reference)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.native.bucketed import ALIGNMENTS, CBucketedRing
from harness.core.ring import Ring, reference_lookup_many, reference_owners
from harness.core.servers import numbered_servers
from harness.recipes.constructions.generator import generate_ring
from harness.recipes.layouts import get_layout

pytestmark = pytest.mark.c_core

BUCKET = 2**16  # positions per bucket: the low 16 bits
TOP_BUCKET = 2**16 - 1

# Edge buckets and edge lows are drawn often: the first and last bucket, and the
# first and last position inside a bucket.
buckets_st = st.one_of(st.sampled_from([0, 1, TOP_BUCKET - 1, TOP_BUCKET]),
                       st.integers(0, TOP_BUCKET))
lows_st = st.one_of(st.sampled_from([0, 1, BUCKET - 2, BUCKET - 1]), st.integers(0, BUCKET - 1))


def _position(bucket: int, low: int) -> int:
    return bucket * BUCKET + low


def _check(ring: Ring, keys: list[int]) -> None:
    """Batch and scalar bucketed lookups both equal the reference on these keys."""
    layout = get_layout("bucketed").build(ring.positions, ring.owners)
    expected = reference_lookup_many(ring, keys)
    assert layout.lookup_many(np.array(keys, dtype=np.uint32)).tolist() == expected
    assert [layout.lookup(k) for k in keys] == expected


def _keys_around(positions: npt.NDArray[np.uint32], extra: list[int]) -> list[int]:
    """Each position, its neighbours, its bucket's first and last slot, and the space's ends."""
    keys = {0, 2**32 - 1, *extra}
    for p in positions.tolist():
        bucket_start = p - p % BUCKET
        keys.update({p, p - 1, p + 1, bucket_start, bucket_start + BUCKET - 1, bucket_start - 1,
                     bucket_start + BUCKET})
    return sorted(k for k in keys if 0 <= k < 2**32)


@st.composite
def sparse_rings(draw: st.DrawFn) -> Ring:
    """Few points over few buckets: most buckets are empty, edge buckets and lows are common."""
    pairs = draw(st.lists(st.tuples(buckets_st, lows_st), min_size=1, max_size=60))
    owners = draw(st.lists(st.integers(0, 9), min_size=len(pairs), max_size=len(pairs)))
    return Ring.from_points([_position(b, low) for b, low in pairs], owners)


@settings(max_examples=300, deadline=None)
@given(ring=sparse_rings(), extra=st.lists(st.integers(0, 2**32 - 1), max_size=50))
def test_sparse_rings_with_empty_buckets(ring: Ring, extra: list[int]) -> None:
    """Keys in empty buckets, past their bucket's last entry or above the last point route right."""
    _check(ring, _keys_around(ring.positions, extra))


@settings(max_examples=200, deadline=None)
@given(bucket=buckets_st, lows=st.lists(lows_st, min_size=1, max_size=200, unique=True),
       extra_lows=st.lists(lows_st, max_size=50))
def test_all_points_in_one_bucket(bucket: int, lows: list[int], extra_lows: list[int]) -> None:
    """One crowded bucket: keys below, inside and above it (wrapping to its first entry)."""
    ring = Ring.from_points([_position(bucket, low) for low in lows], range(len(lows)))
    extra = [_position(bucket, low) for low in extra_lows]
    _check(ring, _keys_around(ring.positions, extra))


@given(bucket=buckets_st, low=lows_st, extra=st.lists(st.integers(0, 2**32 - 1), max_size=50))
def test_one_point_ring(bucket: int, low: int, extra: list[int]) -> None:
    """A one-point ring sends every key to its only server, whichever bucket the key is in."""
    position = _position(bucket, low)
    ring = Ring.from_points([position], [7])
    keys = _keys_around(ring.positions, extra)
    _check(ring, keys)
    layout = get_layout("bucketed").build(ring.positions, ring.owners)
    assert set(layout.lookup_many(np.array(keys, dtype=np.uint32)).tolist()) == {7}


@settings(max_examples=100, deadline=None)
@given(
    bucket=buckets_st,
    start=st.integers(0, BUCKET - 1),
    count=st.integers(1, 5000),
    gap=st.integers(1, 3),
    seed=st.integers(0, 2**32 - 1),
)
def test_skewed_buckets(bucket: int, start: int, count: int, gap: int, seed: int) -> None:
    """A bucket whose entries bunch at one end: the guess misses far and the search still lands."""
    lows = np.arange(start, min(start + count * gap, BUCKET), gap)
    positions = (bucket * BUCKET + lows).astype(np.uint32)
    owners = (np.arange(len(lows)) % 1000).astype(np.uint16)
    ring = Ring.from_points(positions, owners)
    keys = np.random.default_rng(seed).integers(0, BUCKET, 2000) + bucket * BUCKET
    expected = reference_owners(ring, keys.astype(np.uint32))
    layout = get_layout("bucketed").build(ring.positions, ring.owners)
    np.testing.assert_array_equal(layout.lookup_many(keys.astype(np.uint32)), expected)
    sample = keys[:200].tolist()
    assert [layout.lookup(k) for k in sample] == expected[:200].tolist()


def test_key_past_its_bucket_goes_to_the_next_non_empty_bucket() -> None:
    """A key above all of its bucket skips the empty buckets after it; past the end, it wraps."""
    ring = Ring.from_points([_position(3, 10), _position(3, 20), _position(9, 0)], [1, 2, 3])
    keys = [_position(3, 21), _position(5, 0), _position(9, 0), _position(9, 1), 2**32 - 1]
    _check(ring, keys)
    layout = get_layout("bucketed").build(ring.positions, ring.owners)
    assert layout.lookup_many(np.array(keys, dtype=np.uint32)).tolist() == [3, 3, 3, 1, 1]


def test_every_low_of_one_bucket_taken() -> None:
    """A full bucket (all 65,536 lows): every key in it is an exact hit on its own entry."""
    lows = np.arange(BUCKET, dtype=np.uint32)
    positions = lows + 42 * BUCKET
    owners = (lows % 997).astype(np.uint16)
    layout = get_layout("bucketed").build(positions, owners)
    np.testing.assert_array_equal(layout.lookup_many(positions), owners)
    assert layout.lookup(int(positions[-1]) + 1) == owners[0]


def _windowed_ring(points: int, window: int, empty_top: bool) -> Ring:
    """A generated ring of 1000 servers x `points` (2**21 entries or more: the windowed
    batch path) with some buckets rebuilt: 5 crowded (20,000 entries), 7 empty, 9 bunched
    in its low third, 11 in its high third, 13 exactly two windows long (the shortest
    bucket that counts a window), 14 one entry shorter (searched); with `empty_top`, the
    top bucket empty too, so keys above the last entry wrap from an empty bucket."""
    uniform = generate_ring(numbered_servers(1000), points, "fnv1a-fmix32")
    rng = np.random.default_rng(window)
    rebuilt = {5, 7, 9, 11, 13, 14} | ({TOP_BUCKET} if empty_top else set())
    kept = uniform.positions[~np.isin(uniform.positions >> 16, list(rebuilt))]
    custom = [
        (5 << 16) + np.sort(rng.choice(BUCKET, 20_000, replace=False)),
        (9 << 16) + np.arange(3000) * 7,  # lows 0..20,993 of 65,535
        (11 << 16) + BUCKET - 1 - np.arange(3000)[::-1] * 7,  # lows 44,542..65,535
        (13 << 16) + np.sort(rng.choice(BUCKET, 2 * window, replace=False)),
        (14 << 16) + np.sort(rng.choice(BUCKET, 2 * window - 1, replace=False)),
    ]
    positions = np.concatenate([kept, *custom]).astype(np.uint32)
    return Ring.from_points(positions, rng.integers(0, 1000, len(positions)))


def _windowed_keys(ring: Ring) -> npt.NDArray[np.uint32]:
    """About 100,000 keys: on and beside a sample of entries and every entry of the
    rebuilt buckets, the edges of every 16th bucket and of the rebuilt ones (first slot,
    last slot, first and last entry and their neighbours), a grid over every rebuilt
    bucket (the empty ones too), random keys, and the wrap-around (0, 2**32-1, the last
    entry and above)."""
    positions = ring.positions.astype(np.int64)
    offsets = np.searchsorted(positions, np.arange(BUCKET + 1, dtype=np.int64) << 16)
    rebuilt = [5, 7, 9, 11, 13, 14, TOP_BUCKET]
    buckets = np.unique(np.concatenate([np.arange(0, BUCKET, 16), rebuilt, [1, TOP_BUCKET - 1]]))
    firsts = positions[np.minimum(offsets[buckets], ring.entries - 1)]
    lasts = positions[np.maximum(offsets[buckets + 1] - 1, 0)]
    starts = buckets.astype(np.int64) << 16
    rebuilt_entries = np.concatenate(
        [positions[offsets[b]:offsets[b + 1]] for b in rebuilt])
    on_entries = np.concatenate([positions[:: ring.entries // 10_000], rebuilt_entries])
    grid = np.concatenate([(b << 16) + np.arange(0, BUCKET, 29) for b in rebuilt])
    keys = np.concatenate([
        on_entries - 1, on_entries, on_entries + 1,
        starts, starts - 1, starts + BUCKET - 1,
        firsts - 1, firsts, firsts + 1, lasts - 1, lasts, lasts + 1,
        grid, np.random.default_rng(ring.entries).integers(0, 2**32, 20_000),
        [0, 1, 2**32 - 1, 2**32 - 2, positions[-1] + 1, positions[0] - 1],
    ])
    return np.unique(keys[(keys >= 0) & (keys < 2**32)]).astype(np.uint32)


@pytest.mark.parametrize(("points", "window", "empty_top"),
                         [(2200, 16, False), (4400, 32, True)])
def test_windowed_batch_routes_like_the_reference_key_by_key(
    points: int, window: int, empty_top: bool
) -> None:
    """Rings of 2**21 entries and more take the windowed batch path (16 entries; 32 from
    2**22): key by key, it routes like the reference on and beside entries, at bucket
    edges, in crowded, bunched, empty and two-window buckets, and across the wrap-around,
    with its windows centred on the guess and on multiples of 8 and 16 entries."""
    ring = _windowed_ring(points, window, empty_top)
    # the path this case is for (bucketed.c: buckets average two windows or more)
    assert 2 * window * BUCKET <= ring.entries < 4 * window * BUCKET
    keys = _windowed_keys(ring)
    expected = np.array(reference_lookup_many(ring, keys), dtype=np.uint16)
    layout = get_layout("bucketed").build(ring.positions, ring.owners)
    c_ring = CBucketedRing(ring.positions, ring.owners)
    default = c_ring.tuning
    assert default.window == window and default.align == 1
    for align in ALIGNMENTS:
        tuning = replace(default, align=align)
        # the layout as a run uses it (its own tuning), then each alignment
        got = layout.lookup_many(keys) if align == 1 else c_ring.lookup_many(keys, tuning)
        wrong = np.flatnonzero(got != expected)
        assert not wrong.size, (
            f"{tuning.label}: {wrong.size} of {len(keys)} keys misrouted, first: "
            + ", ".join(f"{int(keys[i]):#010x} -> {got[i]} (reference {expected[i]})"
                        for i in wrong[:5]))
