"""What the binding modules of harness.core.native share: the cffi handle of the C core
and the small array helpers their calls go through. Private to this package.

`ffi` and `lib` are those of `harness.core.native.compiled._ring_c` (cext/build_ffi.py
declares every C unit in it); each binding module calls its own unit's functions
through them, and they never leave harness.core.native. Importing this module checks
that the C core is built, `_scalar` (cext/scalar.c) included, and raises a HarnessError
saying how to build it if not: every binding module imports it before any compiled one.
"""

from __future__ import annotations

import array
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError

try:
    import harness.core.native.compiled._ring_c as _ring_c
    import harness.core.native.compiled._scalar as compiled_scalar
except ImportError as exc:  # pragma: no cover - depends on how the package was installed
    raise HarnessError(
        "the C core (harness.core.native.compiled) is not built; install the package with "
        "`pip install .` (or `python setup.py build_ext --inplace` in a checkout)"
    ) from exc

# `compiled_scalar` (cext/scalar.c) is imported here under the same check, for
# harness.core.native.scalar, which binds it.
__all__ = ["COMPILED_FILE", "address", "c_input", "compiled_scalar", "ffi", "joined_names",
           "large_array", "lib", "u16_out", "u32_buffer", "u64_in"]

ffi, lib = _ring_c.ffi, _ring_c.lib
#: the compiled C core's file: its digest names the build a tuning was measured with
COMPILED_FILE: str = str(_ring_c.__file__)


#: cffi arrays from cext/advised_alloc.c, zeroed there (after the advice: zeroed here,
#: their pages would be written, and faulted in, before the advice could matter)
_advised_new = ffi.new_allocator(alloc=lib.ring_advised_alloc, free=lib.ring_advised_free,
                                 should_clear_after_alloc=False)


def large_array(ctype: str, count: int) -> Any:
    """A zeroed cffi array of `count` `ctype` (say "uint32_t[]") for an array read at
    random, a ring's entries or the memory floor's: from 4 MiB on advised for huge pages
    before it is written, from 32 MiB on a fresh mapping of its own, so that every C
    layout and the floor are timed on the same kind of pages (cext/advised_alloc.h says
    why, and why not a mapping of its own below 32 MiB)."""
    return _advised_new(ctype, count)


def address(cdata: Any) -> int:
    """The address of a cffi array, for a ScalarLookup (which keeps the array alive)."""
    return int(ffi.cast("uintptr_t", cdata))


def c_input(array: npt.ArrayLike, dtype: type[np.generic]) -> npt.NDArray[Any]:
    """`array` as C-contiguous and aligned `dtype`, copied only if it is not already.

    C reads the elements through typed pointers: from a misaligned buffer (a view at an
    odd byte offset, which np.ascontiguousarray passes through unchanged) that is
    undefined behaviour, reported by tox -e sanitize as "load of misaligned address".
    """
    contiguous = np.ascontiguousarray(array, dtype=dtype)
    return contiguous if contiguous.flags.aligned else contiguous.copy()


def joined_names(names: Sequence[bytes]) -> tuple[bytes, npt.NDArray[np.uint64]]:
    """Names stored end to end, as the C batch hashes take them: the joined bytes, and
    offsets such that name i is joined[offsets[i]:offsets[i + 1]]."""
    # array.array fills from map(len) in C: about 15 ns a name less than np.fromiter
    lengths = np.frombuffer(array.array("Q", map(len, names)), dtype=np.uint64)
    offsets = np.zeros(len(names) + 1, dtype=np.uint64)
    np.cumsum(lengths, out=offsets[1:])
    return b"".join(names), offsets


def u32_buffer(array: npt.NDArray[Any]) -> Any:
    return ffi.from_buffer("uint32_t[]", array)


def u16_out(array: npt.NDArray[np.uint16]) -> Any:
    return ffi.from_buffer("uint16_t[]", array, require_writable=True)


def u64_in(key_hashes: npt.NDArray[np.unsignedinteger]) -> Any:
    # uint64, C-contiguous and aligned input is read in place; anything else is copied once.
    return c_input(key_hashes, np.uint64)
