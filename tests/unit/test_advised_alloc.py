"""Large arrays for rings and the memory floor (cext/advised_alloc.h): zeroed, freed,
advised for huge pages before they are first written from 4 MiB on, and from 32 MiB on a
mapping of their own, so that every C layout and the floor are read on the same kind of
pages."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from harness.core.native._c import address, ffi, large_array
from harness.core.native.bucketed import CBucketedRing
from harness.core.native.random_access import floor_array
from harness.core.native.ring import CEntryArray

HUGE_PAGES_FROM = 4 * 2**20
OWN_MAPPING_FROM = 32 * 2**20

linux_only = pytest.mark.skipif(
    not Path("/sys/kernel/mm/transparent_hugepage").is_dir(),
    reason="no transparent huge pages in this kernel: no advice to read back from smaps")


def _mapping_of(addr: int) -> dict[str, str]:
    """The /proc/self/smaps fields of the mapping that holds `addr`, VmFlags among them."""
    fields: dict[str, str] = {}
    inside = False
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            head = line.split(None, 1)[0]
            if not head.endswith(":"):
                low, high = (int(part, 16) for part in head.split("-"))
                if inside:
                    break
                inside = low <= addr < high
                fields = {"range": head}
            elif inside:
                fields[head[:-1]] = line.split(None, 1)[1].strip() if " " in line else ""
    return fields


@pytest.mark.parametrize("count", [1, 1000, HUGE_PAGES_FROM // 4 - 1, HUGE_PAGES_FROM // 4,
                                   3 * HUGE_PAGES_FROM // 4 + 5, OWN_MAPPING_FROM // 4 + 3])
def test_an_array_is_zeroed_writable_and_cache_line_aligned(count: int) -> None:
    """Below and above the threshold: every element reads 0, takes a write, and the array
    starts on a 64-byte line (a bucketed window's lines are whole lines of the array)."""
    array = large_array("uint32_t[]", count)
    view = np.frombuffer(ffi.buffer(array), dtype=np.uint32)
    assert len(view) == count and not view.any()
    view[:] = np.arange(count, dtype=np.uint32)
    assert int(array[count - 1]) == count - 1
    assert address(array) % 64 == 0


@linux_only
def test_an_array_of_32_mib_is_its_own_mapping_advised_for_huge_pages() -> None:
    """From 32 MiB on: a mapping of its own (never heap pages written before), carrying the
    huge-page advice (VmFlags "hg") whether or not the kernel had huge pages to give."""
    array = large_array("uint32_t[]", OWN_MAPPING_FROM // 4)
    mapping = _mapping_of(address(array))
    assert "hg" in mapping["VmFlags"].split(), mapping
    low, high = (int(part, 16) for part in mapping["range"].split("-"))
    # the array's mapping (plus its 64-byte header, rounded to pages), or one the kernel
    # merged it with: never smaller than the array, and never the heap
    assert high - low >= OWN_MAPPING_FROM
    maps = Path("/proc/self/maps").read_text()
    assert "[heap]" not in maps.split(mapping["range"], 1)[1].split("\n", 1)[0]


@linux_only
def test_an_array_of_4_mib_is_advised_where_malloc_put_it() -> None:
    """From 4 MiB to 32 MiB: malloc's block, whose whole pages carry the advice."""
    array = large_array("uint32_t[]", HUGE_PAGES_FROM // 4)
    mapping = _mapping_of(address(array) + 8192)
    assert "hg" in mapping["VmFlags"].split(), mapping


@pytest.mark.parametrize("size", [8 * 2**20, 40 * 2**20])
def test_freed_arrays_give_their_memory_back(size: int) -> None:
    """Arrays of 8 MiB (malloc's) and 40 MiB (own mappings) made, written and dropped one
    after another, 800 MiB in all: past the first tenth the process holds no more than
    it did (each is freed, or unmapped, when cffi frees it; a leak would add `size` a
    time). Measured from the first tenth on, because how much of the first few frees
    malloc keeps depends on the heap the process had before (up to 9 arrays' worth)."""
    def rss_kib() -> int:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
    arrays = 800 * 2**20 // size
    warmed = 0
    for made in range(arrays):
        array = large_array("uint8_t[]", size)
        # written in place: a bytes object of `size` to copy from would be the test's
        # own allocation, kept by malloc after it is freed
        np.frombuffer(ffi.buffer(array), dtype=np.uint8).fill(1)
        del array
        if made == arrays // 10:
            warmed = rss_kib()
    assert rss_kib() - warmed < size // 1024 + 16 * 1024


@linux_only
def test_the_c_layouts_and_the_floor_share_the_advised_pages() -> None:
    """The entries of cffi-packed and bucketed and the floor's array, at 2M entries, are
    all advised: timed against each other on the same kind of pages."""
    rng = np.random.default_rng(7)
    positions = np.unique(rng.integers(0, 2**32, 2_000_000, dtype=np.uint64)).astype(np.uint32)
    owners = rng.integers(0, 100, len(positions)).astype(np.uint16)
    bucketed = CBucketedRing(positions, owners)
    packed = CEntryArray("packed", positions, owners)
    floor = floor_array(len(positions))
    assert floor.tolist()[:3] == [0, 1, 2] and int(floor[-1]) == len(positions) - 1
    # a page in: the array's first bytes may share a page with malloc's header, which
    # is not advised
    for addr in (address(bucketed._array), address(packed._array), floor.ctypes.data):
        assert "hg" in _mapping_of(addr + 8192)["VmFlags"].split()
