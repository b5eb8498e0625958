"""`bucketed`: the ring indexed by the top 16 bits of the hash, 4 bytes per entry.

A table of 2**16 + 1 uint32 offsets says where each of the 2**16 buckets
starts; an entry keeps only the low 16 bits of its position (the top 16 are
its bucket's number) next to its uint16 owner. A lookup reads two offsets and
searches one small bucket (about n / 65536 entries) instead of the whole ring:
two or three cache misses instead of log2(n). The table is a fixed 256 KiB,
so the layout only pays off on large rings: at 16,384 entries it costs 16
bytes per entry on top of the 4, at 10 million about 0.03. See cext/bucketed.h.

Its batch lookup starts with the C core's default tuning for its size; `calibrate`
swaps in the one measured fastest on this machine (harness.recipes.layouts.
bucketed_tuning, cached by bucketed_cache), which the throughput metric does before
timing it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, Self

import numpy as np
import numpy.typing as npt

from harness.core.calibration import Calibration
from harness.core.native import bucketed as c_bucketed
from harness.recipes.layouts import bucketed_cache
from harness.recipes.layouts.base import CFunctions, LayoutBase


class BucketedLayout(LayoutBase):
    name: ClassVar[str] = "bucketed"
    hash_bits: ClassVar[int] = 32
    #: what the counts metric counts (bucketed.c)
    c_functions: ClassVar[CFunctions | None] = CFunctions(
        build="ring_bucketed_build", scalar="ring_bucketed_lookup",
        batch="ring_bucketed_lookup_many")
    #: the offset table: where each of the 2**16 buckets of the top 16 bits starts
    index_bits: ClassVar[int] = c_bucketed.BUCKETS.bit_length() - 1

    def __init__(self, ring: c_bucketed.CBucketedRing) -> None:
        self._ring = ring
        # Bound once, as in CffiStructLayout: a wrapper would add a Python call per lookup.
        self.lookup: Callable[[int], int] = ring.lookup
        self.lookup_many: Callable[
            [npt.NDArray[np.unsignedinteger]], npt.NDArray[np.uint16]
        ] = ring.lookup_many

    @classmethod
    def build(
        cls, positions: npt.NDArray[np.unsignedinteger], owners: npt.NDArray[np.uint16]
    ) -> Self:
        return cls(c_bucketed.CBucketedRing(positions, owners))

    def calibrate(self) -> Calibration:
        """Tune the batch lookup for this machine and ring size (cached, else measured)."""
        calibration = bucketed_cache.calibrate(self._ring.lookup_many, self.entries)
        self._ring.tune(calibration.chosen_tuning)
        return calibration

    @property
    def tuning(self) -> c_bucketed.BucketedTuning:
        return self._ring.tuning

    @property
    def entries(self) -> int:
        return self._ring.entries

    @property
    def entry_size(self) -> int:
        """The entry stride; the offset table (fixed size) is counted in `nbytes` only."""
        return c_bucketed.BUCKET_ENTRY.size

    @property
    def nbytes(self) -> int:
        return self._ring.nbytes
