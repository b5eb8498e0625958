"""`tuples`: a Python list of (position, owner) tuples searched with `bisect`.

The baseline most Python code starts from: every entry is a tuple object
holding two int objects, so an entry costs about 100 bytes instead of 6.
"""

from __future__ import annotations

import bisect
import sys
from typing import ClassVar, Self

import numpy as np
import numpy.typing as npt

from harness.recipes.layouts.base import LayoutBase


class TuplesLayout(LayoutBase):
    name: ClassVar[str] = "tuples"
    hash_bits: ClassVar[int] = 32

    def __init__(self, entries: list[tuple[int, int]]) -> None:
        self._entries = entries

    @classmethod
    def build(
        cls, positions: npt.NDArray[np.unsignedinteger], owners: npt.NDArray[np.uint16]
    ) -> Self:
        return cls(list(zip(positions.tolist(), owners.tolist(), strict=True)))

    @property
    def entries(self) -> int:
        return len(self._entries)

    @property
    def nbytes(self) -> int:
        """The list, its tuples and the int objects they hold, each object counted once
        (small ints are shared interpreter singletons, so they count once too)."""
        seen: set[int] = set()
        total = sys.getsizeof(self._entries)
        for entry in self._entries:
            total += sys.getsizeof(entry)
            for number in entry:
                if id(number) not in seen:
                    seen.add(id(number))
                    total += sys.getsizeof(number)
        return total

    @property
    def entry_size(self) -> int:
        return round(self.nbytes / self.entries)

    def lookup(self, key_hash: int) -> int:
        # (h,) sorts before every (h, owner), so this finds the first position >= h.
        i = bisect.bisect_left(self._entries, (key_hash,))
        return self._entries[i if i < len(self._entries) else 0][1]

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        lookup = self.lookup
        return np.fromiter(
            (lookup(h) for h in key_hashes.tolist()), dtype=np.uint16, count=len(key_hashes)
        )
