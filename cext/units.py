"""The C units of the core, one entry each: the one list that setup.py and
cext/build_ffi.py read, so that a new unit is one line here.

A unit `name` is cext/<name>.c (none for a header-only unit) and cext/<name>.h, whose
marked blocks (`/* cffi:begin */ ... /* cffi:end */`, harness/core/native/cdef_blocks.py)
are what cffi declares. Every unit with a source is compiled into
`harness.core.native.compiled._ring_c`; the `scalar` ones are also compiled into
`harness.core.native.compiled._scalar` (cext/scalar.c calls their lookups).
`libraries` are what the unit links (the modules link the union, in the order met).

The order is the link order, and so where each function lands in the modules: keep it,
and add a unit at the end (functions start on 64-byte lines, cext/build_ffi.py says why,
but a module's layout still follows this order).

This file imports the standard library only: the build loads it by its path.
"""

from __future__ import annotations

from typing import NamedTuple


class Unit(NamedTuple):
    """One C unit: cext/<name>.c and cext/<name>.h."""

    name: str
    #: its header carries cffi blocks (a header-only unit's helpers are inline, not bound)
    bound: bool = True
    #: it has a cext/<name>.c
    source: bool = True
    #: also compiled into _scalar
    scalar: bool = False
    libraries: tuple[str, ...] = ()


UNITS = [
    Unit("ring", scalar=True),
    Unit("bucketed", scalar=True),
    Unit("lru"),
    Unit("hashes", scalar=True),
    # libm's log for weighted rendezvous, the one mcrouter's std::log calls
    Unit("algorithms", scalar=True, libraries=("m",)),
    # point names' MD5 and long names' BLAKE2b from OpenSSL's libcrypto, CRC-32 from zlib
    # (cext/generate.c says why; key names' MD5 is our own, cext/md5_many.h says why)
    Unit("generate", libraries=("crypto", "z", "pthread")),
    Unit("blake2b_lanes"),
    Unit("lean", libraries=("pthread",)),
    Unit("random_access"),
    Unit("range_hashes", scalar=True),
    Unit("anchor", scalar=True),
    Unit("memento", scalar=True),
    Unit("dx", scalar=True),
    Unit("jumpback", scalar=True),
    Unit("splitmix", bound=False, source=False, scalar=True),
    Unit("replicas"),
    Unit("client_hashes"),
    Unit("md5_many"),
    Unit("crc32_many", libraries=("z",)),
    Unit("advised_alloc"),
    # the hashes client traits add (FNV, one-at-a-time, MurmurHash3, xxHash from its spec)
    Unit("trait_hashes"),
]


def sources(units: list[Unit]) -> list[str]:
    """The .c files of `units`, relative to the project root (where setup.py runs)."""
    return [f"cext/{unit.name}.c" for unit in units if unit.source]


def headers(units: list[Unit]) -> list[str]:
    """The .h files of `units`, relative to the project root: what the build depends on."""
    return [f"cext/{unit.name}.h" for unit in units]


def libraries(units: list[Unit]) -> list[str]:
    """Every library `units` link, each once, in the order met."""
    return list(dict.fromkeys(library for unit in units for library in unit.libraries))


def scalar_units() -> list[Unit]:
    """The units compiled into _scalar beside cext/scalar.c."""
    return [unit for unit in UNITS if unit.scalar]
