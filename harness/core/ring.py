"""The ring: sorted, de-duplicated points, and the one lookup convention.

Convention (every layout follows it): the owner of key hash `h` is the owner
of the first point whose position is >= h; past the last point it wraps to
the first point.

Collision rule: when several points share a position, the point of the lowest
server index is kept (the others are dropped and counted). nginx keeps the
first of equal hashes after a stable sort of points listed in server order,
which is the same rule. A construction that models a peer with the opposite
rule (uhashring's ketama ring keeps the last writer) asks for
`collision_winner="highest"`.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeVar

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.machine import usable_cores
from harness.core.native import lean as c_lean

MAX_SERVERS = 2**16 - 1  # owners are uint16 server indexes

CollisionWinner = Literal["lowest", "highest"]
_Element = TypeVar("_Element", bound=np.generic)


@dataclass(frozen=True, eq=False)
class Ring:
    """Sorted unique `positions` (uint32 or uint64) and their `owners` (uint16 server index)."""

    positions: npt.NDArray[np.unsignedinteger]
    owners: npt.NDArray[np.uint16]
    bits: int = 32
    #: points dropped because their position was already taken
    collisions: int = 0
    servers: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if len(self.positions) == 0:
            raise HarnessError("a ring needs at least one point")
        if len(self.positions) != len(self.owners):
            raise HarnessError(
                f"positions and owners differ in length ({len(self.positions)} "
                f"against {len(self.owners)})"
            )

    @property
    def entries(self) -> int:
        return len(self.positions)

    @classmethod
    def from_points(
        cls,
        positions: npt.ArrayLike,
        owners: npt.ArrayLike,
        bits: int = 32,
        servers: tuple[str, ...] = (),
        collision_winner: CollisionWinner = "lowest",
    ) -> Ring:
        """Sort points by position; of equal positions keep the lowest (or highest) server index."""
        dtype = np.uint32 if bits == 32 else np.uint64
        raw_positions = np.asarray(positions)
        if raw_positions.dtype.kind not in "iu":
            # numpy reads a list of Python ints above 2**63 as float64, which rounds
            # 64-bit positions; as objects they stay exact until the cast below.
            raw_positions = np.asarray(positions, dtype=object)
        raw_owners = np.asarray(owners)
        if raw_owners.size and (raw_owners.min() < 0 or raw_owners.max() > MAX_SERVERS):
            raise HarnessError(f"owners must be server indexes in 0..{MAX_SERVERS}")
        if raw_positions.size and (
            raw_positions.min() < 0 or int(raw_positions.max()) >= 2**bits
        ):
            raise HarnessError(f"positions must lie in 0..2**{bits}-1")
        own = raw_owners.astype(np.uint16, order="C")
        if bits == 32:
            words = raw_positions.astype(np.uint64, order="C")
            words <<= np.uint64(16)
            words |= own  # cast in buffered chunks, not as a whole uint64 copy
            return cls.from_owned_points(words, None, 32, servers, collision_winner)
        # Fresh copies that this ring owns: they are sorted and cut down in place.
        pos: npt.NDArray[np.unsignedinteger] = raw_positions.astype(dtype, order="C", copy=True)
        return cls.from_owned_points(pos, own, bits, servers, collision_winner)

    @classmethod
    def from_owned_points(
        cls,
        positions: npt.NDArray[np.unsignedinteger],
        owners: npt.NDArray[np.uint16] | None,
        bits: int = 32,
        servers: tuple[str, ...] = (),
        collision_winner: CollisionWinner = "lowest",
    ) -> Ring:
        """`from_points` for arrays that the caller hands over and nobody else holds:
        for 32-bit rings packed uint64 words (position << 16 | owner) and no owners, for
        64-bit rings uint64 positions and uint16 owners. They are sorted in place, so a
        32-bit ring peaks at 14 bytes per point (8 of words, 6 of result) and a 64-bit one
        at 10 (cext/lean.c)."""
        keep_highest = collision_winner == "highest"
        points = len(positions)
        if bits == 32:
            if owners is not None:
                raise HarnessError("a 32-bit ring takes packed words: owners must be None")
            positions.sort()  # in place; numpy sorts uint64 without a second buffer
            kept_positions, kept_owners, kept = c_lean.split_packed(positions, keep_highest)
            return cls(positions=shrunk(kept_positions, kept),
                       owners=shrunk(kept_owners, kept), bits=32,
                       collisions=points - kept, servers=servers)
        if owners is None or len(owners) != points:
            raise HarnessError("a 64-bit ring needs one owner per position")
        kept = c_lean.sort_dedupe64(positions, owners, keep_highest, usable_cores())
        return cls(positions=shrunk(positions, kept), owners=shrunk(owners, kept),
                   bits=bits, collisions=points - kept, servers=servers)


def shrunk(array: npt.NDArray[_Element], length: int) -> npt.NDArray[_Element]:
    """The first `length` elements as an array of that size: cut down in place (realloc,
    no copy) when the array owns its data, which the callers of `from_owned_points`
    promise nobody else holds; a view is copied."""
    if not array.flags.owndata:
        return array[:length].copy()
    array.resize(length, refcheck=False)
    return array


def sort_points_reference(
    positions: npt.NDArray[np.unsignedinteger],
    owners: npt.NDArray[np.uint16],
    collision_winner: CollisionWinner = "lowest",
) -> tuple[npt.NDArray[np.unsignedinteger], npt.NDArray[np.uint16], int]:
    """The numpy definition of sorting and de-duplication that the C sort is tested against:
    (sorted unique positions, their owners, points dropped)."""
    # lexsort: last key is primary, so this sorts by position then owner.
    order = np.lexsort((owners, positions))
    pos, own = positions[order], owners[order]
    keep = np.ones(len(pos), dtype=bool)
    if collision_winner == "lowest":
        keep[1:] = pos[1:] != pos[:-1]  # first of each run of equal positions
    else:
        keep[:-1] = pos[:-1] != pos[1:]  # last of each run
    return pos[keep], own[keep], int(len(pos) - np.count_nonzero(keep))


def reference_lookup(positions: Sequence[int], owners: Sequence[int], key_hash: int) -> int:
    """The plain-Python definition every layout is checked against."""
    i = bisect.bisect_left(positions, key_hash)
    return owners[0] if i == len(positions) else owners[i]


def reference_owners(
    ring: Ring, key_hashes: npt.NDArray[np.unsignedinteger]
) -> npt.NDArray[np.uint16]:
    """The same convention vectorised: first position >= key over the contiguous positions,
    wrapping past the last. Checked against `reference_lookup` on every run."""
    index = np.searchsorted(ring.positions, key_hashes, side="left")
    index[index == ring.entries] = 0
    return ring.owners[index]


def reference_lookup_many(ring: Ring, key_hashes: npt.ArrayLike) -> list[int]:
    # memoryviews index to plain ints without copying the ring into a list of objects
    # (a list of 200M Python ints is about 8 GB).
    positions, owners = ring.positions.data, ring.owners.data
    return [reference_lookup(positions, owners, int(h)) for h in np.asarray(key_hashes)]
