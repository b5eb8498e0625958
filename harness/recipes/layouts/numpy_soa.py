"""`numpy-soa`: two parallel arrays, positions (uint32) and owners (uint16).

A structure of arrays instead of an array of structures: 6 bytes per entry,
like `numpy-packed`, but without packing. The positions are one contiguous
uint32 array, so `np.searchsorted` searches them in place, with none of the
per-call column copy that the struct layouts pay. The price: an entry's
position and owner live in two different arrays, so a lookup touches two
cache lines instead of one.
"""

from __future__ import annotations

import bisect
from typing import ClassVar, Self

import numpy as np
import numpy.typing as npt

from harness.recipes.layouts.base import LayoutBase


class NumpySoaLayout(LayoutBase):
    name: ClassVar[str] = "numpy-soa"
    hash_bits: ClassVar[int] = 32

    def __init__(self, positions: npt.NDArray[np.uint32], owners: npt.NDArray[np.uint16]) -> None:
        self._positions = positions
        self._owners = owners

    @classmethod
    def build(
        cls, positions: npt.NDArray[np.unsignedinteger], owners: npt.NDArray[np.uint16]
    ) -> Self:
        # Own copies: the layout's memory must be its own, not a view of the ring's.
        return cls(np.array(positions, dtype=np.uint32), np.array(owners, dtype=np.uint16))

    @property
    def entries(self) -> int:
        return len(self._positions)

    @property
    def entry_size(self) -> int:
        return int(self._positions.itemsize + self._owners.itemsize)

    @property
    def nbytes(self) -> int:
        return int(self._positions.nbytes + self._owners.nbytes)

    def lookup(self, key_hash: int) -> int:
        # bisect probes log2(n) elements; searchsorted costs more per call for one key.
        i = bisect.bisect_left(self._positions, key_hash)
        return int(self._owners[i if i < len(self._owners) else 0])

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        # Keys of another dtype (int64, say) would make searchsorted convert the whole
        # positions array to the common type on every call; convert the keys instead.
        keys = np.asarray(key_hashes, dtype=np.uint32)
        i = np.searchsorted(self._positions, keys, side="left")
        i[i == len(self._owners)] = 0
        return self._owners[i]
