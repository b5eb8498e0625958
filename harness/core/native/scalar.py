"""Bindings of cext/scalar.c (`harness.core.native.compiled._scalar`): scalar lookups
called by vectorcall.

cffi's multi-argument call path costs more than a search itself (cext/scalar.c says
how much), so a scalar lookup is a `ScalarLookup` bound to the C array a binding
module allocated through cffi (harness.core.native.ring, .bucketed, .algorithms),
called with the key alone. `search_reference` is the timing gate's reference for
those lookups: a plain lower bound over bare sorted positions, reached by the same call.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.native._c import c_input, compiled_scalar

__all__ = ["ScalarLookup", "search_reference"]

#: ScalarLookup(kind, entries_address, entries, offsets_address, owner): one lookup per
#: call, `owner` kept alive as long as the lookup (cext/scalar.c)
ScalarLookup = compiled_scalar.ScalarLookup


def search_reference(positions: npt.NDArray[np.unsignedinteger]) -> Callable[[int], int]:
    """A plain lower bound over the sorted `positions` (32 or 64 bits), called exactly like
    a C layout's scalar lookup; returns the index of the first position >= the key. The
    timing gate's reference for scalar lookups that run in C (cext/scalar.c)."""
    bits = positions.dtype.itemsize * 8
    if bits not in (32, 64) or len(positions) < 1:
        raise HarnessError(f"a search reference needs 32- or 64-bit positions (got {bits} bits, "
                           f"{len(positions)} of them)")
    array = c_input(positions, np.uint32 if bits == 32 else np.uint64)
    lookup: Callable[[int], int] = ScalarLookup(f"search{bits}", array.ctypes.data, len(array),
                                                0, array)
    return lookup
