"""Layout registry, entry sizes and C struct layouts."""

import numpy as np
import pytest

from harness import _cbindings
from harness.errors import UnknownNameError
from harness.layouts import LAYOUTS, get_layout
from harness.layouts.numpy_struct import entry_dtype

EXPECTED_ENTRY_SIZE = {"numpy-aligned": 8, "numpy-packed": 6, "cffi-aligned": 8, "cffi-packed": 6}


def test_registry_names() -> None:
    """The registry holds the five layouts of the mission, under their documented names."""
    assert list(LAYOUTS) == ["tuples", "numpy-aligned", "numpy-packed", "cffi-aligned",
                             "cffi-packed"]
    assert all(cls.name == name for name, cls in LAYOUTS.items())


def test_unknown_layout_lists_valid_names() -> None:
    """An unknown layout name gets an error that lists every valid one."""
    with pytest.raises(UnknownNameError) as info:
        get_layout("numpy-compressed")
    assert "numpy-compressed" in str(info.value)
    for name in LAYOUTS:
        assert name in str(info.value)


@pytest.mark.parametrize("name", list(EXPECTED_ENTRY_SIZE))
@pytest.mark.parametrize("entries", [1, 1000, 12345])
def test_array_layouts_take_their_entry_size(name: str, entries: int) -> None:
    """Array layouts report 6 or 8 bytes per entry and nbytes = entry_size x entries."""
    positions = np.arange(entries, dtype=np.uint32) * 7
    layout = LAYOUTS[name].build(positions, np.zeros(entries, dtype=np.uint16))
    assert layout.entry_size == EXPECTED_ENTRY_SIZE[name]
    assert layout.nbytes == EXPECTED_ENTRY_SIZE[name] * entries


def test_tuples_cost_about_a_hundred_bytes_per_entry() -> None:
    """A list of (position, owner) tuples costs list slot + tuple + int objects per entry."""
    positions = np.arange(10_000, dtype=np.uint32) * 400_000 + 2**31
    layout = LAYOUTS["tuples"].build(positions, np.zeros(10_000, dtype=np.uint16))
    # 8-byte list slot + 56-byte 2-tuple + 32-byte int above 2**30; owner 0 is shared.
    assert 90 <= layout.entry_size <= 100


def test_c_struct_sizes_and_offsets() -> None:
    """The compiler lays out the aligned struct in 8 bytes and the packed one in 6; idx at 4."""
    assert _cbindings.struct_layout("aligned") == (8, 4)
    assert _cbindings.struct_layout("packed") == (6, 4)


def test_numpy_dtypes_mirror_the_c_structs() -> None:
    """numpy's aligned and packed records match the C structs byte for byte."""
    aligned, packed = entry_dtype(align=True), entry_dtype(align=False)
    assert (aligned.itemsize, aligned.fields["idx"][1]) == (8, 4)
    assert (packed.itemsize, packed.fields["idx"][1]) == (6, 4)


def test_c_batch_lookup_reads_keys_in_place_and_accepts_other_dtypes() -> None:
    """cffi layouts accept any integer key array; results match for uint32 and int64 input."""
    positions = np.array([10, 20, 30], dtype=np.uint32)
    layout = LAYOUTS["cffi-packed"].build(positions, np.array([1, 2, 3], dtype=np.uint16))
    keys = np.array([0, 15, 25, 35], dtype=np.uint32)
    assert layout.lookup_many(keys).tolist() == [1, 2, 3, 1]
    assert layout.lookup_many(keys.astype(np.int64)).tolist() == [1, 2, 3, 1]
