"""Every layout routes exactly like the plain-Python reference (hypothesis property tests).

Each layout takes rings of its own hash width: 32-bit layouts get 32-bit rings,
64-bit layouts 64-bit rings.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.ring import Ring, reference_lookup_many, reference_owners
from harness.core.servers import numbered_servers
from harness.recipes.constructions.generator import generate_ring
from harness.recipes.layouts import LAYOUTS

pytestmark = pytest.mark.c_core

BITS = [32, 64]
DTYPES = {32: np.uint32, 64: np.uint64}
LAYOUTS_BY_BITS = {
    bits: [name for name, cls in LAYOUTS.items() if cls.hash_bits == bits] for bits in BITS
}
HASHES_BY_BITS = {32: "blake2b-32", 64: "blake2b-64"}


def top(bits: int) -> int:
    return int(2**bits - 1)


def positions_st(bits: int) -> st.SearchStrategy[int]:
    # Around 2**32 too: a 64-bit layout that truncated to 32 bits would misroute there.
    near_2_32 = st.integers(2**32 - 3, min(2**32 + 3, top(bits)))
    return st.one_of(st.integers(0, top(bits)), near_2_32)


def keys_st(bits: int) -> st.SearchStrategy[list[int]]:
    # Keys that stress the edges: 0, the top of the space, and (below) exact hits.
    return st.lists(
        st.one_of(positions_st(bits), st.sampled_from([0, 1, top(bits) - 1, top(bits)])),
        max_size=200,
    )


@st.composite
def rings_and_keys(draw: st.DrawFn, bits: int) -> tuple[Ring, npt.NDArray[np.unsignedinteger]]:
    positions = draw(st.lists(positions_st(bits), min_size=1, max_size=200))
    # Few servers so that duplicate positions across servers (collisions) are common.
    owners = draw(st.lists(st.integers(0, 5), min_size=len(positions), max_size=len(positions)))
    if draw(st.booleans()):
        dupes = draw(st.lists(st.sampled_from(positions), max_size=10))
        positions += dupes
        owners += draw(st.lists(st.integers(0, 5), min_size=len(dupes), max_size=len(dupes)))
    ring = Ring.from_points(positions, owners, bits=bits)
    exact = draw(st.lists(st.sampled_from(ring.positions.tolist()), max_size=20))
    last = int(ring.positions[-1])
    above = [last + 1] if last < top(bits) else []
    keys = draw(keys_st(bits)) + exact + above
    return ring, np.array(keys, dtype=DTYPES[bits])


def _check_parity(ring: Ring, keys: npt.NDArray[np.unsignedinteger]) -> None:
    expected = reference_lookup_many(ring, keys)
    for name in LAYOUTS_BY_BITS[ring.bits]:
        layout = LAYOUTS[name].build(ring.positions, ring.owners)
        assert layout.entries == ring.entries, name
        assert layout.lookup_many(keys).tolist() == expected, name
        assert [layout.lookup(int(k)) for k in keys] == expected, name


def test_every_layout_is_checked_at_its_width() -> None:
    """Each hash width has layouts to check, and every layout is in one of the widths."""
    assert len(LAYOUTS_BY_BITS[32]) >= 5 and len(LAYOUTS_BY_BITS[64]) == 4
    assert sum(len(names) for names in LAYOUTS_BY_BITS.values()) == len(LAYOUTS)


@pytest.mark.parametrize("bits", BITS)
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_all_layouts_match_reference(bits: int, data: st.DataObject) -> None:
    """Random rings (with collisions, exact hits, wrap-around keys): every layout agrees."""
    _check_parity(*data.draw(rings_and_keys(bits)))


@pytest.mark.parametrize("bits", BITS)
@settings(deadline=None)
@given(data=st.data())
def test_single_point_ring_owns_everything(bits: int, data: st.DataObject) -> None:
    """A one-point ring sends every key, including 0 and 2**bits-1, to its only server."""
    position = data.draw(positions_st(bits))
    keys = data.draw(keys_st(bits))
    ring = Ring.from_points([position], [3], bits=bits)
    _check_parity(ring, np.array([*keys, position], dtype=DTYPES[bits]))
    for name in LAYOUTS_BY_BITS[bits]:
        layout = LAYOUTS[name].build(ring.positions, ring.owners)
        assert set(layout.lookup_many(np.array(keys, dtype=DTYPES[bits])).tolist()) <= {3}


@pytest.mark.parametrize("bits", BITS)
def test_wrap_around_at_the_top_of_the_space(bits: int) -> None:
    """Keys above the last point, and 2**bits-1, wrap to the first point; so does key 0."""
    high = 2 ** (bits - 1)  # above every 32-bit value in a 64-bit ring
    ring = Ring.from_points([100, 200, high], [0, 1, 2], bits=bits)
    keys = np.array([0, 100, 101, high, high + 1, top(bits)], dtype=DTYPES[bits])
    for name in LAYOUTS_BY_BITS[bits]:
        layout = LAYOUTS[name].build(ring.positions, ring.owners)
        assert layout.lookup_many(keys).tolist() == [0, 0, 1, 2, 0, 0], name
        assert [layout.lookup(int(k)) for k in keys] == [0, 0, 1, 2, 0, 0], name


@pytest.mark.parametrize("bits", BITS)
@pytest.mark.parametrize("points", [1, 1000, 100_000])
def test_generated_rings_agree_on_many_keys(bits: int, points: int) -> None:
    """On generated rings of up to 100,000 points, 100,000 random keys route identically."""
    ring = generate_ring(
        numbered_servers(min(points, 100)), max(1, points // 100), HASHES_BY_BITS[bits]
    )
    keys = np.random.default_rng(points).integers(0, 2**bits, 100_000, dtype=DTYPES[bits])
    expected = np.array(reference_lookup_many(ring, keys), dtype=np.uint16)
    for name in LAYOUTS_BY_BITS[bits]:
        layout = LAYOUTS[name].build(ring.positions, ring.owners)
        np.testing.assert_array_equal(layout.lookup_many(keys), expected, err_msg=name)


@pytest.mark.parametrize("bits", BITS)
def test_million_point_ring_parity(bits: int) -> None:
    """On a 1,000,000-point ring the array layouts agree with each other and with numpy's search."""
    rng = np.random.default_rng(7)
    dtype = DTYPES[bits]
    positions = rng.integers(0, 2**bits, 1_000_000, dtype=dtype)
    ring = Ring.from_points(positions, rng.integers(0, 1000, 1_000_000), bits=bits)
    keys = rng.integers(0, 2**bits, 200_000, dtype=dtype)
    expected = reference_owners(ring, keys)
    sample = keys[:2000]
    assert reference_lookup_many(ring, sample) == expected[:2000].tolist()
    for name in LAYOUTS_BY_BITS[bits]:
        if name == "tuples":
            continue  # a million tuples is slow, not different: the tests above cover it
        layout = LAYOUTS[name].build(ring.positions, ring.owners)
        np.testing.assert_array_equal(layout.lookup_many(keys), expected, err_msg=name)
