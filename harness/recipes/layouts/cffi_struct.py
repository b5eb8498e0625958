"""Shared code of the C struct layouts: an array of `struct ring_entry_<kind>` (cext/ring.h).

Lookups run in C: a scalar lookup is one call, a batch lookup one C loop that
reads the numpy key buffer in place and writes owners into a numpy array.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, Self

import numpy as np
import numpy.typing as npt

from harness.core.native import ring as c_ring
from harness.recipes.layouts.base import CFunctions, LayoutBase


class CffiStructLayout(LayoutBase):
    name: ClassVar[str]
    hash_bits: ClassVar[int] = 32
    struct_kind: ClassVar[str]
    #: what the counts metric counts (ring.c, one set per struct kind)
    c_functions: ClassVar[CFunctions | None]

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        cls.c_functions = CFunctions(build=f"ring_fill_{cls.struct_kind}",
                                     scalar=f"ring_lookup_{cls.struct_kind}",
                                     batch=f"ring_lookup_many_{cls.struct_kind}")

    def __init__(self, array: c_ring.CEntryArray) -> None:
        self._array = array
        # The C array's own methods, bound once: a wrapper method here would add a
        # Python call to every scalar lookup, which costs more than the C search.
        self.lookup: Callable[[int], int] = array.lookup
        self.lookup_many: Callable[
            [npt.NDArray[np.unsignedinteger]], npt.NDArray[np.uint16]
        ] = array.lookup_many

    @classmethod
    def build(
        cls, positions: npt.NDArray[np.unsignedinteger], owners: npt.NDArray[np.uint16]
    ) -> Self:
        return cls(c_ring.CEntryArray(cls.struct_kind, positions, owners))

    @property
    def entries(self) -> int:
        return self._array.entries

    @property
    def entry_size(self) -> int:
        return self._array.entry_size

    @property
    def nbytes(self) -> int:
        return self._array.nbytes
