"""Layout registry, entry sizes and C struct layouts."""

import tracemalloc

import numpy as np
import numpy.typing as npt
import pytest

from harness.core.errors import HarnessError, UnknownNameError
from harness.core.native import bucketed as c_bucketed
from harness.core.native import ring as c_ring
from harness.recipes.layouts import LAYOUTS, get_layout
from harness.recipes.layouts.numpy_struct import entry_dtype

pytestmark = pytest.mark.c_core

#: layouts whose nbytes is exactly entry_size x entries
EXPECTED_ENTRY_SIZE = {
    "numpy-aligned": 8,
    "numpy-packed": 6,
    "cffi-aligned": 8,
    "cffi-packed": 6,
    "numpy-aligned-64": 16,
    "numpy-packed-64": 10,
    "cffi-aligned-64": 16,
    "cffi-packed-64": 10,
    "numpy-soa": 6,
}
BUCKET_TABLE_BYTES = (2**16 + 1) * 4  # uint32 offset per bucket, plus the end


def test_registry_names() -> None:
    """The registry holds the five original layouts, then the six added since, in that order."""
    assert list(LAYOUTS) == [
        "tuples", "numpy-aligned", "numpy-packed", "cffi-aligned", "cffi-packed",
        "numpy-aligned-64", "numpy-packed-64", "cffi-aligned-64", "cffi-packed-64",
        "numpy-soa", "bucketed",
    ]
    assert all(cls.name == name for name, cls in LAYOUTS.items())


def test_hash_widths() -> None:
    """The -64 layouts store 64-bit hashes; all others store 32-bit hashes."""
    assert {name: cls.hash_bits for name, cls in LAYOUTS.items()} == {
        name: 64 if name.endswith("-64") else 32 for name in LAYOUTS
    }


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
    """Array layouts report their entry size (6 to 16 bytes) and nbytes = entry_size x entries."""
    dtype: type[np.unsignedinteger] = np.uint64 if LAYOUTS[name].hash_bits == 64 else np.uint32
    positions = np.arange(entries, dtype=dtype) * 7
    layout = LAYOUTS[name].build(positions, np.zeros(entries, dtype=np.uint16))
    assert layout.entry_size == EXPECTED_ENTRY_SIZE[name]
    assert layout.nbytes == EXPECTED_ENTRY_SIZE[name] * entries


def test_tuples_cost_about_a_hundred_bytes_per_entry() -> None:
    """A list of (position, owner) tuples costs list slot + tuple + int objects per entry."""
    positions = np.arange(10_000, dtype=np.uint32) * 400_000 + 2**31
    layout = LAYOUTS["tuples"].build(positions, np.zeros(10_000, dtype=np.uint16))
    # 8-byte list slot + 56-byte 2-tuple + 32-byte int above 2**30; owner 0 is shared.
    assert 90 <= layout.entry_size <= 100


@pytest.mark.parametrize("entries", [1, 1000, 10_000_000])
def test_bucketed_counts_table_and_entries(entries: int) -> None:
    """bucketed: 4 bytes per entry plus the fixed offset table; <= 4.1 bytes/entry at 10M."""
    positions = np.arange(entries, dtype=np.uint32) * 429  # spread over the whole space
    layout = LAYOUTS["bucketed"].build(positions, np.zeros(entries, dtype=np.uint16))
    assert layout.entry_size == 4
    assert layout.nbytes == 4 * entries + BUCKET_TABLE_BYTES
    if entries == 10_000_000:
        assert layout.nbytes / entries <= 4.1


def test_bucketed_refuses_unsorted_positions() -> None:
    """The C build checks its precondition: unsorted or repeated positions are an error."""
    owners = np.zeros(3, dtype=np.uint16)
    for positions in ([1, 3, 2], [1, 2, 2]):
        with pytest.raises(HarnessError, match="sorted and unique"):
            LAYOUTS["bucketed"].build(np.array(positions, dtype=np.uint32), owners)


def test_bucketed_refuses_an_empty_ring() -> None:
    """A bucketed layout with no entry would read past its array; it is refused instead."""
    with pytest.raises(HarnessError, match="1 to 2"):
        LAYOUTS["bucketed"].build(np.array([], dtype=np.uint32), np.array([], dtype=np.uint16))


def test_c_struct_sizes_and_offsets() -> None:
    """The compiler lays out every struct at the size its layout promises, idx where expected."""
    assert c_ring.struct_layout("aligned") == (8, 4)
    assert c_ring.struct_layout("packed") == (6, 4)
    assert c_ring.struct_layout("aligned64") == (16, 8)
    assert c_ring.struct_layout("packed64") == (10, 8)
    assert c_bucketed.bucket_entry_layout() == (4, 2)


def test_import_check_covers_every_struct() -> None:
    """The import-time check knows every C struct kind, each with the size the tests expect."""
    assert {kind: (s.size, s.idx_offset) for kind, s in c_ring.STRUCTS.items()} == {
        kind: c_ring.struct_layout(kind) for kind in ("aligned", "packed", "aligned64",
                                                      "packed64")
    }
    assert (c_bucketed.BUCKET_ENTRY.size, c_bucketed.BUCKET_ENTRY.idx_offset) == (4, 2)


@pytest.mark.parametrize(("hash_bits", "aligned_size", "packed_size", "idx_offset"),
                         [(32, 8, 6, 4), (64, 16, 10, 8)])
def test_numpy_dtypes_mirror_the_c_structs(
    hash_bits: int, aligned_size: int, packed_size: int, idx_offset: int
) -> None:
    """numpy's aligned and packed records match the C structs byte for byte, at both widths."""
    aligned = entry_dtype(align=True, hash_bits=hash_bits)
    packed = entry_dtype(align=False, hash_bits=hash_bits)
    assert aligned.fields is not None and packed.fields is not None
    assert (aligned.itemsize, aligned.fields["idx"][1]) == (aligned_size, idx_offset)
    assert (packed.itemsize, packed.fields["idx"][1]) == (packed_size, idx_offset)


def _lookup_peak_bytes(name: str, keys: npt.NDArray[np.unsignedinteger]) -> int:
    """Peak bytes numpy allocates during one batch lookup on a 1,000,000-entry ring."""
    positions = np.arange(1_000_000, dtype=np.uint32) * 4000
    layout = LAYOUTS[name].build(positions, np.zeros(1_000_000, dtype=np.uint16))
    tracemalloc.start()
    try:
        layout.lookup_many(keys)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("key_dtype", [np.uint32, np.int64])
def test_numpy_soa_searches_positions_in_place(key_dtype: type[np.integer]) -> None:
    """numpy-soa copies no column per batch (even for int64 keys); numpy-packed copies 4 MB."""
    keys = np.arange(1000, dtype=key_dtype) * 1000
    assert _lookup_peak_bytes("numpy-soa", keys) < 100_000
    assert _lookup_peak_bytes("numpy-packed", keys) >= 4_000_000


def test_c_batch_lookup_reads_keys_in_place_and_accepts_other_dtypes() -> None:
    """cffi layouts accept any integer key array; results match for uint32 and int64 input."""
    positions = np.array([10, 20, 30], dtype=np.uint32)
    layout = LAYOUTS["cffi-packed"].build(positions, np.array([1, 2, 3], dtype=np.uint16))
    keys = np.array([0, 15, 25, 35], dtype=np.uint32)
    assert layout.lookup_many(keys).tolist() == [1, 2, 3, 1]
    assert layout.lookup_many(keys.astype(np.int64)).tolist() == [1, 2, 3, 1]
