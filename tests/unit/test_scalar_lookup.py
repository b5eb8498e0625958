"""The vectorcall scalar lookup (compiled `_scalar`): argument checks and array lifetime."""

import gc

import numpy as np
import pytest

from harness.recipes.layouts import LAYOUTS

pytestmark = pytest.mark.c_core

C_LAYOUTS = ["cffi-aligned", "cffi-packed", "bucketed"]


def _layout(name: str):  # type: ignore[no-untyped-def]
    positions = np.array([10, 70_000, 2**32 - 5], dtype=np.uint32)
    return LAYOUTS[name].build(positions, np.array([1, 2, 3], dtype=np.uint16))


@pytest.mark.parametrize("name", C_LAYOUTS)
def test_keys_route_and_numpy_integers_are_accepted(name: str) -> None:
    """Python ints and numpy integer scalars give the same owners, wrap included."""
    lookup = _layout(name).lookup
    assert [lookup(k) for k in (0, 10, 11, 70_000, 2**32 - 4, 2**32 - 1)] == [1, 1, 2, 2, 1, 1]
    assert lookup(np.uint32(11)) == 2 and lookup(np.int64(70_001)) == 3


@pytest.mark.parametrize("name", C_LAYOUTS)
def test_out_of_range_and_wrong_arguments_raise(name: str) -> None:
    """A key outside 0..2**32-1, a non-integer or a wrong argument count raises, never wraps."""
    lookup = _layout(name).lookup
    with pytest.raises(OverflowError):
        lookup(2**32)
    with pytest.raises(OverflowError):
        lookup(-1)
    with pytest.raises(TypeError):
        lookup(1.5)
    with pytest.raises(TypeError):
        lookup()
    with pytest.raises(TypeError):
        lookup(1, 2)


def test_wide_layouts_take_64_bit_keys() -> None:
    """64-bit layouts accept keys up to 2**64-1 and refuse 2**64."""
    positions = np.array([5, 2**63], dtype=np.uint64)
    lookup = LAYOUTS["cffi-packed-64"].build(positions, np.array([7, 8], dtype=np.uint16)).lookup
    assert [lookup(0), lookup(6), lookup(2**64 - 1)] == [7, 8, 7]
    with pytest.raises(OverflowError):
        lookup(2**64)


@pytest.mark.parametrize("name", C_LAYOUTS)
def test_lookup_keeps_its_arrays_alive(name: str) -> None:
    """A bound lookup outlives its layout object: it holds the C arrays it reads."""
    lookup = _layout(name).lookup
    gc.collect()
    np.zeros(10_000_000, dtype=np.uint8)  # reuse freed memory if anything was freed
    assert [lookup(k) for k in (5, 50_000, 4_000_000_000)] == [1, 2, 3]
