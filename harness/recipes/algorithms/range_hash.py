"""What the stateless range hashes share: jump, JumpBackHash, and BinomialHash, FlipHash
and PowerCH, jump's successors in constant expected time.

Each maps a 64-bit key hash to a bucket in [0, N) from N alone: no table, no weights, and
bucket i is `servers[i]`. `route` hashes keys with xxHash64, seed 0, as jump does.
Removing a server other than the last would renumber the later buckets, so only the last
can leave (`removal_problem`).

`StatelessRangeHash` is that shape: a subclass names its C binding (`binding`) and gives
its plain-Python definition (`reference_bucket`) and its numpy form (`vectorised_buckets`);
every run checks the C paths against both. `RangeHashAlgorithm` adds what the three of
cext/range_hashes.c have beyond jump: a C kind, a time estimate, and `without(last)`, the
same hash over N - 1 buckets, which is exactly what a deployment that loses its last
server runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Protocol, Self

import numpy as np
import numpy.typing as npt

from harness.core.native import range_hashes as c_range_hashes
from harness.core.servers import Server
from harness.recipes.algorithms.buckets import Buckets


class RangeHashBinding(Protocol):
    """The C form of a range hash over a fixed number of buckets (harness.core.native)."""

    @property
    def lookup(self) -> Callable[[int], int]: ...

    @property
    def route_one(self) -> Callable[[bytes], int] | None: ...

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]
                    ) -> npt.NDArray[np.uint16]: ...


class StatelessRangeHash(Buckets):
    """A stateless range hash over the servers, in configuration order."""

    #: a build holds its servers alone (28 to 107 ns a server on 1,000, jump, jumpback,
    #: binomial, fliphash and powerch: benchmarks/build_rates.py, 2026-12-05, best of 2)
    build_seconds_per_entry: ClassVar[float | None] = 200e-9

    def __init__(self, servers: Sequence[Server], params: dict[str, Any]) -> None:
        super().__init__(servers, params)
        self._c = self.binding(len(self._servers))
        self.lookup: Callable[[int], int] = self._c.lookup
        #: route([key])[0] for one key, hashed and looked up in one C call, where C has it
        self.route_one = self._c.route_one

    @classmethod
    def binding(cls, buckets: int) -> RangeHashBinding:
        """Its C form over `buckets` buckets."""
        raise NotImplementedError

    @staticmethod
    def reference_bucket(key_hash: int, buckets: int, /) -> int:
        """The bucket of one key hash, in plain Python."""
        raise NotImplementedError

    @staticmethod
    def vectorised_buckets(key_hashes: npt.NDArray[np.unsignedinteger],
                           buckets: int, /) -> npt.NDArray[np.uint16]:
        """The buckets of an array of key hashes, in numpy."""
        raise NotImplementedError

    @classmethod
    def removal_problem(cls, servers: Sequence[Server], name: str) -> str | None:
        """Why removing server `name` cannot be measured, or None if it can (the last one)."""
        if servers and servers[-1].name != name:
            return (f"{cls.name} can remove only the last server ({servers[-1].name!r}): "
                    f"removing {name!r} would renumber every bucket after it")
        return None

    @property
    def nbytes(self) -> int:
        return 0

    def lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.uint16]:
        return self._c.lookup_many(key_hashes)

    def reference_owners(
        self, key_hashes: npt.NDArray[np.unsignedinteger]
    ) -> npt.NDArray[np.uint16]:
        return self.vectorised_buckets(key_hashes, len(self._servers))

    def reference_lookup_many(self, key_hashes: npt.NDArray[np.unsignedinteger]) -> list[int]:
        buckets = len(self._servers)
        return [self.reference_bucket(int(h), buckets) for h in key_hashes]

class RangeHashAlgorithm(StatelessRangeHash):
    """A range hash of cext/range_hashes.c over the servers, in configuration order."""

    #: the C functions it routes with (`{kind}_bucket`, `{kind}_many`)
    kind: ClassVar[c_range_hashes.RangeHashKind]
    #: plain-Python time of one reference lookup and numpy time per key of the vectorised
    #: one, in seconds (what `estimated_seconds` charges; each subclass says where measured)
    plain_seconds: ClassVar[float]
    vectorised_seconds: ClassVar[float]

    @classmethod
    def binding(cls, buckets: int) -> c_range_hashes.CRangeHash:
        return c_range_hashes.CRangeHash(cls.kind, buckets)

    @classmethod
    def estimated_seconds(cls, servers: Sequence[Server], params: dict[str, Any], *,
                          reference_keys: int, fast_keys: int,
                          plain_keys: int) -> tuple[float, str]:
        """Constant work per key whatever N: the plain reference dominates (the C form runs
        in nanoseconds, inside what every recipe pays for hashing keys); margin 1.5."""
        seconds = 1.5 * (plain_keys * cls.plain_seconds
                         + reference_keys * cls.vectorised_seconds)
        return seconds, (f"{cls.name} looks up {reference_keys:,} keys in numpy and "
                         f"{plain_keys:,} in plain Python")

    def without(self, index: int) -> Self | None:
        """The same hash over one bucket fewer when the last server leaves (the only removal
        `removal_problem` lets through); None for any other index, which is refused."""
        if len(self._servers) < 2 or index != len(self._servers) - 1:
            return None
        return type(self)(self._servers[:-1], self._params)
