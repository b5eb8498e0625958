"""The one module that touches the compiled C core (`harness._ring_c`).

Everything it exposes takes and returns plain Python and numpy values; the
cffi `ffi`/`lib` objects never leave this module. C struct sizes are checked
at import, because cffi reports a packed/unpacked mismatch between its cdef
and the compiler only at first use.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from harness.errors import HarnessError

try:
    from harness._ring_c import ffi, lib
except ImportError as exc:  # pragma: no cover - depends on how the package was installed
    raise HarnessError(
        "the C core (harness._ring_c) is not built; install the package with "
        "`pip install .` (or `python setup.py build_ext --inplace` in a checkout)"
    ) from exc

#: struct name in ring.h -> (bytes per entry, offset of idx) that the layout promises
STRUCTS: dict[str, tuple[int, int]] = {
    "aligned": (8, 4),
    "packed": (6, 4),
}


def _check_struct_layouts() -> None:
    for kind, (size, idx_offset) in STRUCTS.items():
        c_size = getattr(lib, f"ring_entry_{kind}_size")()
        c_offset = getattr(lib, f"ring_entry_{kind}_idx_offset")()
        ffi_size = ffi.sizeof(f"struct ring_entry_{kind}")
        ffi_offset = ffi.offsetof(f"struct ring_entry_{kind}", "idx")
        if not (c_size == ffi_size == size and c_offset == ffi_offset == idx_offset):
            raise HarnessError(
                f"struct ring_entry_{kind}: expected size {size} and idx at offset {idx_offset}; "
                f"the C compiler says size {c_size}, offset {c_offset}; cffi says size "
                f"{ffi_size}, offset {ffi_offset}"
            )


_check_struct_layouts()


def struct_layout(kind: str) -> tuple[int, int]:
    """(sizeof, offsetof idx) of `struct ring_entry_<kind>` as the C compiler laid it out."""
    return (
        int(getattr(lib, f"ring_entry_{kind}_size")()),
        int(getattr(lib, f"ring_entry_{kind}_idx_offset")()),
    )


def _u32_buffer(array: npt.NDArray[Any]) -> Any:
    return ffi.from_buffer("uint32_t[]", array)


class CEntryArray:
    """A C array of `struct ring_entry_<kind>` built from sorted positions and owners.

    The array is allocated once with `ffi.new` (malloc underneath, so allocator
    profilers see it) and freed when this object is collected.
    """

    def __init__(
        self,
        kind: str,
        positions: npt.NDArray[np.uint32],
        owners: npt.NDArray[np.uint16],
    ) -> None:
        if kind not in STRUCTS:
            raise HarnessError(f"no C struct layout {kind!r}; valid: {', '.join(STRUCTS)}")
        positions = np.ascontiguousarray(positions, dtype=np.uint32)
        owners = np.ascontiguousarray(owners, dtype=np.uint16)
        self.kind = kind
        self.entries = len(positions)
        self.entry_size = STRUCTS[kind][0]
        self._array = ffi.new(f"struct ring_entry_{kind}[]", self.entries)
        self._lookup_many = getattr(lib, f"ring_lookup_many_{kind}")
        getattr(lib, f"ring_fill_{kind}")(
            self._array,
            _u32_buffer(positions),
            ffi.from_buffer("uint16_t[]", owners),
            self.entries,
        )
        # A C-level partial straight onto the cffi function: a Python method in between
        # costs about as much as the binary search itself.
        self.lookup: Callable[[int], int] = functools.partial(
            getattr(lib, f"ring_lookup_{kind}"), self._array, self.entries
        )

    @property
    def nbytes(self) -> int:
        return int(ffi.sizeof(self._array))

    def lookup_many(self, key_hashes: npt.NDArray[np.uint32]) -> npt.NDArray[np.uint16]:
        # A uint32, C-contiguous input is read in place; anything else is converted once.
        keys = np.ascontiguousarray(key_hashes, dtype=np.uint32)
        out = np.empty(len(keys), dtype=np.uint16)
        self._lookup_many(
            self._array,
            self.entries,
            _u32_buffer(keys),
            len(keys),
            ffi.from_buffer("uint16_t[]", out, require_writable=True),
        )
        return out


def fnv1a_fmix32_many(names: Sequence[bytes]) -> npt.NDArray[np.uint32]:
    """FNV-1a + fmix32 over many names, in one C call over a joined buffer."""
    lengths = np.fromiter((len(n) for n in names), dtype=np.uint64, count=len(names))
    offsets = np.zeros(len(names) + 1, dtype=np.uint64)
    np.cumsum(lengths, out=offsets[1:])
    joined = b"".join(names)
    out = np.empty(len(names), dtype=np.uint32)
    lib.hash_fnv1a_fmix32_many(
        ffi.from_buffer("uint8_t[]", joined),
        ffi.from_buffer("uint64_t[]", offsets),
        len(names),
        ffi.from_buffer("uint32_t[]", out, require_writable=True),
    )
    return out
