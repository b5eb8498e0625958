"""Shared code of the numpy struct layouts: a structured array `{u4 hash, u2 idx}`
(`{u8 hash, u2 idx}` for 64-bit hashes).

With `align=True` numpy pads the record as a C compiler would (to 8 bytes, or
16 for 64-bit hashes); without it the record is the packed 6 (or 10) bytes.
All keep the natural numpy idiom: `np.searchsorted` on the `hash` field. That
field is a strided view (stride 6 to 16, and unaligned when packed), which
searchsorted cannot search in place: every batch call makes a contiguous copy
of the whole column. The copy is a real cost of these layouts, and the memory
pass reports it as `lookup_peak_bytes`.
"""

from __future__ import annotations

import bisect
from typing import ClassVar, Self

import numpy as np
import numpy.typing as npt

from harness.recipes.layouts.base import LayoutBase


def entry_dtype(align: bool, hash_bits: int = 32) -> np.dtype[np.void]:
    return np.dtype([("hash", f"<u{hash_bits // 8}"), ("idx", "<u2")], align=align)


class NumpyStructLayout(LayoutBase):
    name: ClassVar[str]
    hash_bits: ClassVar[int] = 32
    align: ClassVar[bool]

    def __init__(self, array: npt.NDArray[np.void]) -> None:
        self._array = array
        self._hashes = array["hash"]
        self._owners = array["idx"]

    @classmethod
    def build(
        cls, positions: npt.NDArray[np.unsignedinteger], owners: npt.NDArray[np.uint16]
    ) -> Self:
        array = np.empty(len(positions), dtype=entry_dtype(cls.align, cls.hash_bits))
        array["hash"] = positions
        array["idx"] = owners
        return cls(array)

    @property
    def entries(self) -> int:
        return len(self._array)

    @property
    def entry_size(self) -> int:
        return int(self._array.dtype.itemsize)

    @property
    def nbytes(self) -> int:
        return int(self._array.nbytes)

    def lookup(self, key_hash: int) -> int:
        # bisect probes log2(n) elements of the field view; searchsorted would copy the
        # whole column for a single key.
        i = bisect.bisect_left(self._hashes, key_hash)
        return int(self._owners[i if i < len(self._owners) else 0])

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        i = np.searchsorted(self._hashes, key_hashes, side="left")
        i[i == len(self._owners)] = 0
        return self._owners[i]
