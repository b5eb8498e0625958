"""Bindings of cext/ring.c: the ring's struct-array layouts (`struct ring_entry_<kind>`).

`CEntryArray` is a C array of one such struct kind, filled and searched in C; its
scalar lookup is a ScalarLookup (harness.core.native.scalar) bound to the same array.
The struct sizes and offsets are checked at import, because cffi reports a
packed/unpacked mismatch between its cdef and the compiler only at first use;
`StructSpec` and `check_struct` serve the bucketed layout's check too
(harness.core.native.bucketed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.native._c import address, c_input, ffi, large_array, lib, u16_out
from harness.core.native.scalar import ScalarLookup

__all__ = ["STRUCTS", "CEntryArray", "StructSpec", "check_struct", "struct_layout"]


@dataclass(frozen=True)
class StructSpec:
    """What a layout promises about its C struct: stride, offset of idx, hash width."""

    size: int
    idx_offset: int
    hash_bits: int

    @property
    def hash_ctype(self) -> str:
        return f"uint{self.hash_bits}_t"

    @property
    def hash_dtype(self) -> type[np.unsignedinteger]:
        return np.uint32 if self.hash_bits == 32 else np.uint64


#: struct kind in ring.h (`struct ring_entry_<kind>`) -> what the layout promises
STRUCTS: dict[str, StructSpec] = {
    "aligned": StructSpec(size=8, idx_offset=4, hash_bits=32),
    "packed": StructSpec(size=6, idx_offset=4, hash_bits=32),
    "aligned64": StructSpec(size=16, idx_offset=8, hash_bits=64),
    "packed64": StructSpec(size=10, idx_offset=8, hash_bits=64),
}


def check_struct(struct: str, prefix: str, spec: StructSpec) -> None:
    """Raise unless the C compiler (`<prefix>_size`, `<prefix>_idx_offset`) and cffi both
    lay `struct` out as `spec` promises."""
    c_size = getattr(lib, f"{prefix}_size")()
    c_offset = getattr(lib, f"{prefix}_idx_offset")()
    ffi_size = ffi.sizeof(struct)
    ffi_offset = ffi.offsetof(struct, "idx")
    if not (c_size == ffi_size == spec.size and c_offset == ffi_offset == spec.idx_offset):
        raise HarnessError(
            f"{struct}: expected size {spec.size} and idx at offset {spec.idx_offset}; "
            f"the C compiler says size {c_size}, offset {c_offset}; cffi says size "
            f"{ffi_size}, offset {ffi_offset}"
        )


def _check_struct_layouts() -> None:
    for kind, spec in STRUCTS.items():
        check_struct(f"struct ring_entry_{kind}", f"ring_entry_{kind}", spec)


_check_struct_layouts()


def struct_layout(kind: str) -> tuple[int, int]:
    """(sizeof, offsetof idx) of `struct ring_entry_<kind>` as the C compiler laid it out."""
    return (
        int(getattr(lib, f"ring_entry_{kind}_size")()),
        int(getattr(lib, f"ring_entry_{kind}_idx_offset")()),
    )


class CEntryArray:
    """A C array of `struct ring_entry_<kind>` built from sorted positions and owners.

    The array is allocated once with `large_array` (malloc's, advised for huge pages
    from 4 MiB on, a mapping of its own from 32 MiB on; allocator profilers see both)
    and freed when this object is collected.
    """

    def __init__(
        self,
        kind: str,
        positions: npt.NDArray[np.unsignedinteger],
        owners: npt.NDArray[np.uint16],
    ) -> None:
        if kind not in STRUCTS:
            raise HarnessError(f"no C struct layout {kind!r}; valid: {', '.join(STRUCTS)}")
        spec = STRUCTS[kind]
        self._hash_dtype = spec.hash_dtype
        self._hash_array = f"{spec.hash_ctype}[]"
        positions = c_input(positions, spec.hash_dtype)
        owners = c_input(owners, np.uint16)
        self.kind = kind
        self.entries = len(positions)
        self.entry_size = spec.size
        self._array = large_array(f"struct ring_entry_{kind}[]", self.entries)
        self._lookup_many = getattr(lib, f"ring_lookup_many_{kind}")
        getattr(lib, f"ring_fill_{kind}")(
            self._array,
            ffi.from_buffer(self._hash_array, positions),
            ffi.from_buffer("uint16_t[]", owners),
            self.entries,
        )
        self.lookup: Callable[[int], int] = ScalarLookup(
            kind, address(self._array), self.entries, 0, self._array
        )

    @property
    def nbytes(self) -> int:
        return int(ffi.sizeof(self._array))

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        # Keys of the struct's hash type, C-contiguous and aligned, are read in place;
        # anything else is converted once.
        keys = c_input(key_hashes, self._hash_dtype)
        out = np.empty(len(keys), dtype=np.uint16)
        self._lookup_many(
            self._array,
            self.entries,
            ffi.from_buffer(self._hash_array, keys),
            len(keys),
            u16_out(out),
        )
        return out
