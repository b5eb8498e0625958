"""Every point of a fleet, sorted once: the ring of any part of the fleet in one pass.

A router process holds a ring per eligibility set, each of some of the same
servers. When a server's points depend on that server alone (its name, its
weight, the recipe), the ring of a sub-fleet is the fleet's points of those
servers, sorted and de-duplicated. So the fleet's points are hashed and sorted
once, as packed words (position << 16 | owner) with collided points kept, and
each sub-fleet's ring is one filtering pass over them (cext/lean.c): no hashing
and no sorting per ring. For the 64 rings of scenarios/process-cloudflare-6gb.toml
that is 43M names hashed once instead of 754M, one per entry of every ring.

The collision rule carries over: words of equal position are in owner order,
and a sub-fleet lists its servers in the fleet's order, so its lowest (or
highest) owner at a position is the one its own generation would keep.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.native import lean as c_lean
from harness.core.ring import MAX_SERVERS, CollisionWinner, Ring, shrunk

#: `sub_split_packed`'s mark of a server that is not in the sub-fleet
_ABSENT = 0xFFFF


@dataclass(frozen=True, eq=False)
class FleetPoints:
    """A 32-bit ring's points for a whole fleet, sorted, collisions not yet dropped."""

    #: packed words position << 16 | owner, sorted (so equal positions in owner order)
    words: npt.NDArray[np.uint64]
    #: the fleet's server names, in owner order
    servers: tuple[str, ...]
    #: points each server has among the words
    counts: tuple[int, ...]
    collision_winner: CollisionWinner = "lowest"

    @classmethod
    def from_words(cls, words: npt.NDArray[np.uint64], servers: tuple[str, ...],
                   counts: Sequence[int],
                   collision_winner: CollisionWinner = "lowest") -> FleetPoints:
        """Take over unsorted packed words (nobody else may hold them) and sort them in place."""
        if len(counts) != len(servers) or sum(counts) != len(words):
            raise HarnessError(f"fleet points: {len(words)} words for {len(servers)} servers "
                               f"of {sum(counts)} points")
        words.sort()
        return cls(words, servers, tuple(int(c) for c in counts), collision_winner)

    @property
    def nbytes(self) -> int:
        return int(self.words.nbytes)

    def ring_of(self, members: Sequence[int]) -> Ring:
        """The ring of the servers at these fleet indexes (rising), numbered 0.. in that order,
        as generating their ring afresh would build it."""
        if not members:
            raise HarnessError("a ring needs at least one server")
        chosen = np.asarray(members, dtype=np.int64)
        if (chosen[0] < 0 or chosen[-1] >= len(self.servers)
                or bool(np.any(np.diff(chosen) <= 0))):
            raise HarnessError(f"fleet points: members must be rising indexes below "
                               f"{len(self.servers)}")
        if len(chosen) > MAX_SERVERS:
            raise HarnessError(f"a ring holds at most {MAX_SERVERS} servers")
        sub_index = np.full(2**16, _ABSENT, dtype=np.uint16)
        sub_index[chosen] = np.arange(len(chosen), dtype=np.uint16)
        points = sum(self.counts[int(i)] for i in chosen)
        positions, owners, kept = c_lean.sub_split_packed(
            self.words, sub_index, self.collision_winner == "highest", points)
        return Ring(positions=shrunk(positions, kept), owners=shrunk(owners, kept), bits=32,
                    collisions=points - kept,
                    servers=tuple(self.servers[int(i)] for i in chosen))
