"""What every construction is: the `Construction` protocol.

A construction is a recipe for a ring's points: how points are named and
hashed, how many each server gets, which point survives a collision, and how
keys are hashed onto the ring. The generic recipe (`points`: naming scheme x
hash x points per weight) is one construction; the others reproduce how a
production system builds its ring, so that our layouts can be measured on
exactly the ring that system routes with.

A construction is built from its declared parameters (`params`), checked
before any work starts; `check_servers` refuses server lists it cannot take
(for example nginx's integer weights), also before any work.

Two members are optional, with their default in `ConstructionBase` (which
every construction of ours subclasses): `remove_server` (how a deployment
loses a server, when not by rebuilding from the shorter list) and
`rebalance` (re-placing points to even the arcs). Both return None by
default: hashed points are rebuilt, and sit where their names hash.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import numpy as np
import numpy.typing as npt

from harness.core.fleet_points import FleetPoints
from harness.core.params import Param, parse_keywords
from harness.core.ring import Ring
from harness.core.servers import Server


@dataclass(frozen=True)
class Rebalanced:
    """What `rebalance` did: the new ring, the tokens it re-placed and the share they moved."""

    ring: Ring
    #: distinct tokens given a new position
    tokens_moved: int
    #: share of the hash space whose owner changed: the extra keys moved
    moved_share: float
    cv_before: float
    cv_after: float


class Construction(Protocol):
    """A ring recipe: `build_ring` for the servers, `key_hashes` for the keys."""

    #: registry name, e.g. "nginx"
    name: ClassVar[str]
    #: the parameters it takes (none for a production recipe that fixes its own)
    params: ClassVar[tuple[Param, ...]]

    def __init__(self, **params: Any) -> None: ...

    @property
    def bits(self) -> int:
        """Width of the ring's positions and of the key hashes (32 or 64)."""
        ...

    @property
    def label(self) -> str:
        """How a run of this recipe is named in result tables, e.g. "k=160" or "nginx"."""
        ...

    def check_servers(self, servers: Sequence[Server]) -> str | None:
        """What the server list must be, if this one is refused; None if it is fine."""
        ...

    def point_counts(self, servers: Sequence[Server]) -> list[int]:
        """Points each server is given, before collisions (known before building)."""
        ...

    def build_ring(self, servers: Sequence[Server]) -> Ring:
        """The ring for `servers`, listed in configuration order."""
        ...

    def key_hashes(self, keys: Sequence[bytes]) -> npt.NDArray[np.unsignedinteger]:
        """Each key's hash, ready for the ring's lookup convention."""
        ...

    def remove_server(self, ring: Ring, index: int) -> Ring | None:
        """The ring after server `index` leaves, as a deployment of this recipe loses it; None
        when it rebuilds from the shorter list instead (default: None)."""
        ...

    def rebalance(self, ring: Ring, weights: Sequence[float],
                  cv_target: float) -> Rebalanced | None:
        """The ring with points re-placed to bring its arc CV per weight to `cv_target`; None
        when this recipe cannot move points (default: None)."""
        ...

    def fleet_points(self, servers: Sequence[Server]) -> FleetPoints | None:
        """Every point of the servers' ring, sorted, collided points kept, when each
        server's points depend on that server alone: the ring of any part of the fleet is
        then a filter of them (`FleetPoints.ring_of`), equal to `build_ring` of that part.
        None when a server's points depend on the others (default: None)."""
        ...


#: the members of `Construction` with a default in `ConstructionBase`
CONSTRUCTION_DEFAULTS: tuple[str, ...] = ("remove_server", "rebalance", "fleet_points")


class ConstructionBase:
    """The defaults of the `Construction` protocol's optional members."""

    def remove_server(self, ring: Ring, index: int) -> Ring | None:
        """None: a ring of hashed points loses a server by being rebuilt without it."""
        return None

    def rebalance(self, ring: Ring, weights: Sequence[float],
                  cv_target: float) -> Rebalanced | None:
        """None: hashed points sit where their names hash, and cannot be re-placed."""
        return None

    def fleet_points(self, servers: Sequence[Server]) -> FleetPoints | None:
        """None: each part of a fleet is built afresh (the safe default for a recipe whose
        points depend on the whole fleet, as libketama's shares do)."""
        return None


class FixedConstruction(ConstructionBase):
    """Shared by production recipes that fix their own points and hash: no parameters."""

    name: ClassVar[str]
    params: ClassVar[tuple[Param, ...]] = ()

    def __init__(self, **params: Any) -> None:
        parse_keywords(f"construction {self.name!r}", self.params, params)

    @property
    def bits(self) -> int:
        return 32

    @property
    def label(self) -> str:
        return self.name
