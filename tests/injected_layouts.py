"""Layout registries with one injected regression each, for the gate's tests (never shipped).

The benchmark suite measures whichever registry `--bench-layouts` names, so the
tests point it at these instead of touching any production layout.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import numpy.typing as npt

from harness.recipes.layouts import LAYOUTS, Layout
from harness.recipes.layouts.base import LayoutBase

#: the layout whose lookups get twice the work, and the one whose entries grow 2 bytes
SLOWED = "numpy-packed"
GROWN = "cffi-packed"
#: the layout whose C search runs for 10% more keys than asked (the counts gate's test)
COUNTED = "cffi-packed"


def doubled_lookups(inner: type[Layout]) -> type[Layout]:
    """`inner`, but every lookup and batch lookup is done twice: a 2x slowdown."""

    class DoubledLookups(LayoutBase):
        name: ClassVar[str] = inner.name
        hash_bits: ClassVar[int] = inner.hash_bits

        def __init__(self, layout: Layout) -> None:
            self._layout = layout

        @classmethod
        def build(
            cls, positions: npt.NDArray[np.unsignedinteger], owners: npt.NDArray[np.uint16]
        ) -> DoubledLookups:
            return cls(inner.build(positions, owners))

        @property
        def entries(self) -> int:
            return self._layout.entries

        @property
        def entry_size(self) -> int:
            return self._layout.entry_size

        @property
        def nbytes(self) -> int:
            return self._layout.nbytes

        def lookup(self, key_hash: int) -> int:
            self._layout.lookup(key_hash)
            return self._layout.lookup(key_hash)

        def lookup_many(
            self, key_hashes: npt.NDArray[np.unsignedinteger]
        ) -> npt.NDArray[np.uint16]:
            self._layout.lookup_many(key_hashes)
            return self._layout.lookup_many(key_hashes)

    return DoubledLookups


def wider_entries(inner: type[Layout]) -> type[Layout]:
    """`inner`, but reporting entries 2 bytes wider (as if a field had been added)."""

    class WiderEntries(LayoutBase):
        name: ClassVar[str] = inner.name
        hash_bits: ClassVar[int] = inner.hash_bits

        def __init__(self, layout: Layout) -> None:
            self._layout = layout
            # inner's own lookups, bound once, so that only the memory figures change
            self.lookup = layout.lookup
            self.lookup_many = layout.lookup_many

        @classmethod
        def build(
            cls, positions: npt.NDArray[np.unsignedinteger], owners: npt.NDArray[np.uint16]
        ) -> WiderEntries:
            return cls(inner.build(positions, owners))

        @property
        def entries(self) -> int:
            return self._layout.entries

        @property
        def entry_size(self) -> int:
            return self._layout.entry_size + 2

        @property
        def nbytes(self) -> int:
            return self._layout.nbytes + 2 * self._layout.entries

    return WiderEntries


def tenth_more_lookups(inner: type[Layout]) -> type[Layout]:
    """`inner`, but its C search does 10% more work per key asked for: a batch lookup also
    looks up the first tenth of its keys again, and every tenth scalar lookup is done twice.
    The extra work is real calls of the same C functions (its `c_functions`, inherited),
    so callgrind counts it exactly as it would count a slower search loop."""

    class TenthMoreLookups(LayoutBase):
        name: ClassVar[str] = inner.name
        hash_bits: ClassVar[int] = inner.hash_bits
        c_functions = getattr(inner, "c_functions", None)

        def __init__(self, layout: Layout) -> None:
            self._layout = layout
            self._calls = 0

        @classmethod
        def build(
            cls, positions: npt.NDArray[np.unsignedinteger], owners: npt.NDArray[np.uint16]
        ) -> TenthMoreLookups:
            return cls(inner.build(positions, owners))

        @property
        def entries(self) -> int:
            return self._layout.entries

        @property
        def entry_size(self) -> int:
            return self._layout.entry_size

        @property
        def nbytes(self) -> int:
            return self._layout.nbytes

        def lookup(self, key_hash: int) -> int:
            self._calls += 1
            if self._calls % 10 == 0:
                self._layout.lookup(key_hash)
            return self._layout.lookup(key_hash)

        def lookup_many(
            self, key_hashes: npt.NDArray[np.unsignedinteger]
        ) -> npt.NDArray[np.uint16]:
            self._layout.lookup_many(key_hashes[: len(key_hashes) // 10])
            return self._layout.lookup_many(key_hashes)

    return TenthMoreLookups


#: a few layouts (C, bucketed and pure numpy), to keep the counts gate's tests short
COUNTS_FEW: dict[str, type[Layout]] = {
    name: LAYOUTS[name] for name in ("numpy-aligned", "cffi-packed", "bucketed")}
COUNTS_TENTH_MORE: dict[str, type[Layout]] = {
    **COUNTS_FEW, COUNTED: tenth_more_lookups(LAYOUTS[COUNTED])}
SLOW_LOOKUPS: dict[str, type[Layout]] = {**LAYOUTS, SLOWED: doubled_lookups(LAYOUTS[SLOWED])}
WIDER: dict[str, type[Layout]] = {**LAYOUTS, GROWN: wider_entries(LAYOUTS[GROWN])}
