"""The cffi declarations a C header carries, between its markers: one declaration in C,
read by cffi instead of a copy in a Python string.

A header marks what cffi reads:

    /* cffi:begin */ ... /* cffi:end */
    /* cffi:begin packed */ ... /* cffi:end */

cffi lays out a declared struct itself and reads no `__attribute__`: a struct declared
`__attribute__((packed))` goes in a `packed` block, which is declared to cffi with
packed=True and its attributes removed (cffi would otherwise assume the padded size and
only complain at first use). A packed attribute outside such a block is refused, as is
a header with no block or with markers unpaired.

Two readers: cext/build_ffi.py, for the headers of the C core (it loads this file by
its path, without importing the package, so this module imports the standard library
only), and `foreign`, for the ring_peer ABI (abi/ring_peer.h).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

BLOCK = re.compile(r"/\* cffi:begin( packed)? \*/(.*?)/\* cffi:end \*/", re.S)
MARKER = re.compile(r"/\* cffi:(begin|begin packed|end) \*/")
PACKED = "__attribute__((packed))"


class CdefBlock(NamedTuple):
    """One marked block: its declarations, and whether they are packed structs."""

    text: str
    packed: bool


def cdef_blocks(header: Path) -> list[CdefBlock]:
    """The marked blocks of `header`, in order; a ValueError names what is wrong."""
    text = header.read_text(encoding="utf-8")
    markers = [match.group(1) for match in MARKER.finditer(text)]
    paired = len(markers) % 2 == 0 and all((marker == "end") == (i % 2 == 1)
                                           for i, marker in enumerate(markers))
    if not markers or not paired:
        raise ValueError(f"{header}: cffi markers must come in begin/end pairs, at least one "
                         f"(got {' '.join(markers) or 'none'})")
    blocks = []
    for match in BLOCK.finditer(text):
        packed, body = match.group(1) is not None, match.group(2)
        if packed != (PACKED in body):
            raise ValueError(f"{header}: {PACKED} belongs in a /* cffi:begin packed */ block, "
                             f"and such a block declares packed structs only")
        blocks.append(CdefBlock(body.replace(f" {PACKED}", ""), packed))
    return blocks
