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

#: the ints CPython keeps as singletons (-5 to 256): every entry holding one shares it
SMALL_INTS = (-5, 256)


class TuplesLayout(LayoutBase):
    name: ClassVar[str] = "tuples"
    hash_bits: ClassVar[int] = 32
    object_entries: ClassVar[bool] = True

    def __init__(self, entries: list[tuple[int, int]]) -> None:
        self._entries = entries
        self._nbytes: int | None = None

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
        """The list, its tuples and the int objects they hold, each object counted once:
        small ints are interpreter singletons, counted once by value; every other int was
        made for its entry by `tolist` and is its own. Counted once and kept (the layout
        does not change): a set of every object's id, as this once kept, held about as
        many bytes as the layout itself (71 MB at 800,000 entries) each time it was asked."""
        if self._nbytes is None:
            small: set[int] = set()
            total = sys.getsizeof(self._entries)
            size = sys.getsizeof
            for entry in self._entries:
                total += size(entry)
                for number in entry:
                    if SMALL_INTS[0] <= number <= SMALL_INTS[1]:
                        small.add(number)
                    else:
                        total += size(number)
            self._nbytes = total + sum(size(number) for number in small)
        return self._nbytes

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
