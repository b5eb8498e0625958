"""Bindings of cext/bucketed.c: the bucketed layout (bucketed.h).

`CBucketedRing` is a table of 2**16 + 1 bucket offsets and an array of 4-byte
`struct ring_bucket_entry`, both built in C from sorted positions; its scalar lookup is
a ScalarLookup (harness.core.native.scalar) bound to both. The entry struct's size and
offset are checked at import, as harness.core.native.ring checks its structs.

Its batch lookup runs as a `BucketedTuning` says (window width, pipeline depth,
offsets prefetch distance, window alignment: `struct ring_bucketed_tuning`); a ring starts with the
C core's default for its size, and `tune` swaps in another (one the calibration in
harness.recipes.layouts.bucketed_tuning chose). Every tuning routes identically.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.native._c import (
    COMPILED_FILE,
    address,
    c_input,
    ffi,
    large_array,
    lib,
    u16_out,
    u32_buffer,
)
from harness.core.native.ring import StructSpec, check_struct
from harness.core.native.scalar import ScalarLookup

__all__ = ["ALIGNMENTS", "BUCKETS", "BUCKET_ENTRY", "MAX_DEPTH", "MAX_OFFSETS_AHEAD",
           "WINDOWS", "BucketedTuning", "CBucketedRing", "bucket_entry_layout",
           "compiled_module_file", "default_tuning"]

#: `struct ring_bucket_entry` (bucketed.h): low 16 bits of the position, then idx
BUCKET_ENTRY = StructSpec(size=4, idx_offset=2, hash_bits=32)
#: buckets of the bucketed layout (top 16 bits of a 32-bit hash), as in bucketed.h
BUCKETS = 2**16

check_struct("struct ring_bucket_entry", "ring_bucket_entry", BUCKET_ENTRY)

#: the window widths the C lookup has a loop for; 0 is the search, with no window
WINDOWS = (0, 8, 16, 24, 32, 48, 64)
#: the multiples of entries a window may start on: 1 (centred on the guess), 8, or 16 (a
#: 64-byte cache line: the entries array starts on a line, as `large_array` aligns it)
ALIGNMENTS = (1, 8, 16)
#: bounds of the pipeline's depth (a power of two) and of the offsets' prefetch distance
MAX_DEPTH = int(lib.RING_BUCKETED_MAX_DEPTH)
MAX_OFFSETS_AHEAD = int(lib.RING_BUCKETED_MAX_AHEAD)


@dataclass(frozen=True, order=True)
class BucketedTuning:
    """How the batch lookup runs (`struct ring_bucketed_tuning`, bucketed.h).

    window: entries counted around the interpolated guess (0: search the bucket);
    depth: keys between reading a key's offsets and counting its window;
    offsets_ahead: keys between prefetching a key's offsets and reading them;
    align: windows start on a multiple of this many entries (one of ALIGNMENTS, at most
    the window), the nearest to the start centred on the guess.
    """
    window: int
    depth: int
    offsets_ahead: int
    align: int = 1

    def __post_init__(self) -> None:
        if not self.valid():
            raise HarnessError(
                f"bucketed tuning: window must be one of {', '.join(map(str, WINDOWS))}, "
                f"depth a power of two from 1 to {MAX_DEPTH}, offsets_ahead 1 to "
                f"{MAX_OFFSETS_AHEAD} and align one of {', '.join(map(str, ALIGNMENTS))} "
                f"and at most the window (got window={self.window!r}, depth={self.depth!r}, "
                f"offsets_ahead={self.offsets_ahead!r}, align={self.align!r})")

    def valid(self) -> bool:
        """What ring_bucketed_tuning_valid accepts, asked of the C core itself."""
        fields = (self.window, self.depth, self.offsets_ahead, self.align)
        if not all(isinstance(f, int) and not isinstance(f, bool) and 0 <= f < 2**32
                   for f in fields):
            return False
        return bool(lib.ring_bucketed_tuning_valid(_c_tuning(self)))

    @property
    def label(self) -> str:
        if self.window == 0:
            return "search"
        aligned = f" on multiples of {self.align}" if self.align > 1 else ""
        return (f"window {self.window}{aligned}, depth {self.depth}, "
                f"offsets {self.offsets_ahead} ahead")


def _c_tuning(tuning: BucketedTuning) -> Any:
    return ffi.new("struct ring_bucketed_tuning *",
                   (tuning.window, tuning.depth, tuning.offsets_ahead, tuning.align))


def compiled_module_file() -> str:
    """The file of the compiled C core this layout runs in."""
    return COMPILED_FILE


def default_tuning(entries: int) -> BucketedTuning:
    """The tuning the C core uses for a ring of `entries` when none is chosen."""
    chosen = lib.ring_bucketed_default_tuning(entries)
    return BucketedTuning(int(chosen.window), int(chosen.depth), int(chosen.offsets_ahead),
                          int(chosen.align))


def bucket_entry_layout() -> tuple[int, int]:
    """(sizeof, offsetof idx) of `struct ring_bucket_entry` as the C compiler laid it out."""
    return int(lib.ring_bucket_entry_size()), int(lib.ring_bucket_entry_idx_offset())


class CBucketedRing:
    """The bucketed layout of bucketed.h: a table of 2**16 + 1 bucket offsets and an
    array of 4-byte `struct ring_bucket_entry`, both built in C from sorted positions.

    Both arrays come from malloc (the offsets by `ffi.new`, the entries by `large_array`,
    which advises a large one for huge pages), so allocator profilers see them.
    """

    def __init__(self, positions: npt.NDArray[np.uint32], owners: npt.NDArray[np.uint16]) -> None:
        if not 0 < len(positions) < 2**32:
            # Offsets are uint32, and a lookup always reads one entry.
            raise HarnessError(
                f"the bucketed layout holds 1 to 2**32-1 entries (got {len(positions)})"
            )
        positions = c_input(positions, np.uint32)
        owners = c_input(owners, np.uint16)
        self.entries = len(positions)
        self._offsets = ffi.new("uint32_t[]", BUCKETS + 1)
        self._array = large_array("struct ring_bucket_entry[]", self.entries)
        status = lib.ring_bucketed_build(
            self._offsets,
            self._array,
            u32_buffer(positions),
            ffi.from_buffer("uint16_t[]", owners),
            self.entries,
        )
        if status != 0:
            raise HarnessError("bucketed layout: positions must be sorted and unique")
        self.tuning = default_tuning(self.entries)
        self._c_tuning = _c_tuning(self.tuning)
        self.lookup: Callable[[int], int] = ScalarLookup(
            "bucketed", address(self._array), self.entries, address(self._offsets),
            (self._offsets, self._array),
        )

    @property
    def nbytes(self) -> int:
        """The offset table and the entries: every byte this layout allocated."""
        return int(ffi.sizeof(self._offsets) + ffi.sizeof(self._array))

    def tune(self, tuning: BucketedTuning) -> None:
        """Run later batch lookups as `tuning` says (the routes stay the same)."""
        self.tuning = tuning
        self._c_tuning = _c_tuning(tuning)

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger],
                    tuning: BucketedTuning | None = None) -> npt.NDArray[np.uint16]:
        """The owner of each key, run as `tuning` says (default: this ring's own)."""
        # A uint32, C-contiguous, aligned input is read in place; anything else is converted once.
        keys = c_input(key_hashes, np.uint32)
        out = np.empty(len(keys), dtype=np.uint16)
        status = lib.ring_bucketed_lookup_many(
            self._offsets, self._array, u32_buffer(keys), len(keys), u16_out(out),
            self._c_tuning if tuning is None else _c_tuning(tuning))
        if status != 0:  # pragma: no cover - BucketedTuning refuses what C refuses
            raise HarnessError(f"bucketed layout: the C core refused the tuning {tuning}")
        return out
