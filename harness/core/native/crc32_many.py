"""Bindings of cext/crc32_many.c: zlib's CRC-32 of a batch of names in one C call (the
same library Python's zlib.crc32 calls, without a Python call per name)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from harness.core.native._c import ffi, joined_names, lib

__all__ = ["crc32_many"]


def crc32_many(names: Sequence[bytes]) -> npt.NDArray[np.uint32]:
    """The CRC-32 of each name."""
    joined, offsets = joined_names(names)
    out = np.empty(len(names), dtype=np.uint32)
    lib.crc32_many(joined, ffi.from_buffer("uint64_t[]", offsets), len(names),
                   ffi.from_buffer("uint32_t[]", out, require_writable=True))
    return out
