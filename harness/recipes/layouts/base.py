"""What every layout is: the `Layout` protocol, and the checks shared by all of them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Protocol, Self

import numpy as np
import numpy.typing as npt


class Layout(Protocol):
    """One physical representation of a ring.

    `build` takes the ring's sorted unique positions and their owners; lookups
    follow the ring convention (first position >= key hash, wrapping).

    A layout whose work is done in C names its C functions as the class
    attribute `c_functions` (a `CFunctions`): the counts metric then counts only
    those; None (the default, in `LayoutBase`) counts the whole Python call.
    """

    #: registry name, e.g. "numpy-packed"
    name: ClassVar[str]
    #: hash width the layout stores (32 or 64)
    hash_bits: ClassVar[int]
    #: the C functions its calls spend their time in; None: count the whole Python call
    c_functions: ClassVar[CFunctions | None]
    #: how many top bits of the hash index a table the build fills beside the entries
    #: (bucketed: 16, a start offset per bucket); 0, the default: no such table
    index_bits: ClassVar[int]
    #: whether each entry is a Python object the interpreter allocates (tuples), not a
    #: slot of a flat array
    object_entries: ClassVar[bool]

    @classmethod
    def build(
        cls, positions: npt.NDArray[np.unsignedinteger], owners: npt.NDArray[np.uint16]
    ) -> Self: ...

    @property
    def entries(self) -> int:
        """Number of ring entries held."""
        ...

    @property
    def entry_size(self) -> int:
        """Bytes per entry of the representation (its stride, padding included)."""
        ...

    @property
    def nbytes(self) -> int:
        """Bytes of the structure itself, as the layout accounts for it."""
        ...

    def lookup(self, key_hash: int) -> int:
        """Owner (server index) of one key hash."""
        ...

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        """Owner of each key hash in a uint32 (or uint64) array."""
        ...


#: the members of `Layout` with a default in `LayoutBase`
LAYOUT_DEFAULTS: tuple[str, ...] = ("c_functions", "index_bits", "object_entries")


class LayoutBase:
    """The defaults of the `Layout` protocol's optional members, for ours and plugins'."""

    #: no C functions named: the counts metric counts the whole Python call
    c_functions: ClassVar[CFunctions | None] = None
    #: no index table: the build writes the entries only
    index_bits: ClassVar[int] = 0
    #: entries in a flat array
    object_entries: ClassVar[bool] = False


@dataclass(frozen=True)
class CFunctions:
    """The C functions a layout's calls spend their time in, by symbol name: what the
    counts metric (harness.metrics.callgrind) counts instead of the whole Python call."""

    build: str
    scalar: str
    batch: str

    def of(self, phase: str) -> str:
        return str(getattr(self, phase))
