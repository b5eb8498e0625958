"""A foreign peer's shared library, loaded through cffi in ABI mode (`dlopen`).

The library implements the C ABI of `abi/ring_peer.h` (shipped in the package; `python
-m harness abi` prints its path). Nothing is compiled: cffi reads the header's marked
block (`cdef_blocks`) and calls the symbols the library exports. Everything above this
module passes plain Python and numpy values.

A library is loaded here only in a worker process (`foreign_worker.py`, supervised from
`recipes/peers/foreign/library_peer.py`): a wrong pointer in it ends that process, not
the run. What can be checked here is: the ABI version, the symbols, each call's status,
and the owners it writes (the caller checks they are in range).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cffi  # type: ignore[import-untyped]  # cffi ships no type hints
import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.native.cdef_blocks import cdef_blocks

HEADER = Path(__file__).with_name("abi") / "ring_peer.h"
#: the ABI version this harness speaks (RING_PEER_ABI_VERSION in the header)
ABI_VERSION = 1
#: room for the library's build error message, NUL included
ERROR_BYTES = 512

#: what cffi declares: the header's block between its cffi markers
DECLARATIONS = "".join(block.text for block in cdef_blocks(HEADER))
REQUIRED = ("ring_peer_abi_version", "ring_peer_build", "ring_peer_route", "ring_peer_nbytes",
            "ring_peer_free")
OPTIONAL = ("ring_peer_lookup", "ring_peer_entries")

_ffi = cffi.FFI()
_ffi.cdef(DECLARATIONS)


def _has(lib: Any, symbol: str) -> bool:
    try:
        getattr(lib, symbol)
    except AttributeError:  # cffi resolves a symbol on first use and fails if it is absent
        return False
    return True


@dataclass
class ForeignLibrary:
    """One loaded library: its handle and which optional calls it exports."""

    path: str
    lib: Any
    has_lookup: bool
    has_entries: bool

    @classmethod
    def open(cls, path: str) -> ForeignLibrary:
        """dlopen `path` and check its ABI; a HarnessError names what is wrong.

        The library is opened by its absolute path: given a bare file name (`libz.so.1`),
        dlopen would search the system's folders instead of the current one, and load
        another library than the file the scenario's check found."""
        try:
            lib = _ffi.dlopen(os.path.abspath(path))
        except OSError as exc:
            raise HarnessError(f"library {path}: cannot be loaded ({exc})") from None
        missing = [symbol for symbol in REQUIRED if not _has(lib, symbol)]
        if missing:
            raise HarnessError(f"library {path}: does not export {', '.join(missing)} "
                               f"(see {HEADER.name})")
        version = int(lib.ring_peer_abi_version())
        if version != ABI_VERSION:
            raise HarnessError(f"library {path}: speaks ring_peer ABI {version}, this harness "
                               f"speaks {ABI_VERSION}")
        return cls(path, lib, _has(lib, "ring_peer_lookup"), _has(lib, "ring_peer_entries"))

    def build(self, names: list[str], weights: list[float], params: str) -> ForeignRing:
        # The ABI takes NUL-terminated names: one holding a NUL would arrive cut short
        # (validation refuses them; this is the boundary's own guard).
        if any("\0" in name for name in [*names, params]):
            raise HarnessError(f"library {self.path}: a server name or the params hold a NUL "
                               "character, which a C string cannot carry")
        encoded = [_ffi.new("char[]", name.encode()) for name in names]
        name_array = _ffi.new("const char *[]", encoded)
        weight_array = _ffi.new("double[]", weights)
        error = _ffi.new("char[]", ERROR_BYTES)
        handle = self.lib.ring_peer_build(name_array, weight_array, len(names),
                                          params.encode(), error, ERROR_BYTES)
        if handle == _ffi.NULL:
            message = _ffi.string(error).decode(errors="replace") or "no message"
            raise HarnessError(f"library {self.path}: build failed: {message}")
        return ForeignRing(self, _ffi.gc(handle, self.lib.ring_peer_free))


class ForeignRing:
    """A structure the library built; freed by the library when this object goes."""

    def __init__(self, library: ForeignLibrary, handle: Any) -> None:
        self._library, self._lib, self._handle = library, library.lib, handle

    def route(self, keys: bytes | memoryview, offsets: npt.NDArray[np.uint64],
              owners: npt.NDArray[np.uint16] | None = None) -> npt.NDArray[np.uint16]:
        """Owners of the len(offsets) - 1 keys held back to back in `keys` (written into
        `owners` when given: a worker's shared region)."""
        n = len(offsets) - 1
        owners = np.zeros(n, np.uint16) if owners is None else owners
        status = self._lib.ring_peer_route(
            self._handle, _ffi.from_buffer("uint8_t[]", keys),
            _ffi.from_buffer("uint64_t[]", offsets), n,
            _ffi.from_buffer("uint16_t[]", owners, require_writable=True))
        self._check(status, "route")
        return owners

    def lookup(self, hashes: npt.NDArray[np.uint64],
               owners: npt.NDArray[np.uint16] | None = None) -> npt.NDArray[np.uint16]:
        owners = np.zeros(len(hashes), np.uint16) if owners is None else owners
        status = self._lib.ring_peer_lookup(
            self._handle, _ffi.from_buffer("uint64_t[]", hashes), len(hashes),
            _ffi.from_buffer("uint16_t[]", owners, require_writable=True))
        self._check(status, "lookup")
        return owners

    @property
    def nbytes(self) -> int:
        """The library's own byte count, or -1 when it does not know."""
        return int(self._lib.ring_peer_nbytes(self._handle))

    @property
    def entries(self) -> int:
        """Points on the library's ring, or -1 when it does not know."""
        return int(self._lib.ring_peer_entries(self._handle)) if self._library.has_entries \
            else -1

    def _check(self, status: int, call: str) -> None:
        if status != 0:
            raise HarnessError(f"library {self._library.path}: ring_peer_{call} failed "
                               f"(returned {status})")
