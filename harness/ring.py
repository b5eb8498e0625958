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
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt

from harness.errors import HarnessError

MAX_SERVERS = 2**16 - 1  # owners are uint16 server indexes

CollisionWinner = Literal["lowest", "highest"]


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
        pos = raw_positions.astype(dtype)
        own = raw_owners.astype(np.uint16)
        # lexsort: last key is primary, so this sorts by position then owner.
        order = np.lexsort((own, pos))
        pos, own = pos[order], own[order]
        keep = np.ones(len(pos), dtype=bool)
        if collision_winner == "lowest":
            keep[1:] = pos[1:] != pos[:-1]  # first of each run of equal positions
        else:
            keep[:-1] = pos[:-1] != pos[1:]  # last of each run
        return cls(
            positions=pos[keep].astype(dtype, copy=False),
            owners=own[keep],
            bits=bits,
            collisions=int(len(pos) - np.count_nonzero(keep)),
            servers=servers,
        )


def reference_lookup(positions: list[int], owners: list[int], key_hash: int) -> int:
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
    positions = ring.positions.tolist()
    owners = ring.owners.tolist()
    return [reference_lookup(positions, owners, int(h)) for h in np.asarray(key_hashes)]
