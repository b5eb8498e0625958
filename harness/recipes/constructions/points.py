"""The generic recipe: every server's points named by a template and hashed.

Server `s` of weight `w` gets `max(1, round(points_per_weight * w))` points,
named `point_name.format(server=s, j=j)` for j = 0, 1, ... and placed at the
chosen hash of that name (`harness.recipes.constructions.generator.generate_ring`); keys are hashed
with the same hash. This is the ring of "Consistent Hashing from Scratch, and
Why Cloudflare Deleted 90% of It" and of the Semicolony simulator.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from harness.core.hashing import HASHES, hash_many
from harness.core.params import Param, parse_keywords
from harness.core.ring import Ring
from harness.core.servers import Server
from harness.recipes.constructions.base import ConstructionBase
from harness.recipes.constructions.generator import DEFAULT_POINT_NAME, generate_ring, points_for

#: largest points_per_weight accepted (the estimate refuses what will not fit long before)
MAX_POINTS_PER_WEIGHT = 10**8


class PointsConstruction(ConstructionBase):
    """Points named by a template, placed by a hash, `points_per_weight` per unit weight."""

    name: ClassVar[str] = "points"
    params: ClassVar[tuple[Param, ...]] = (
        Param("hash", "choice", "blake2b-32", "hash of point names and keys",
              choices=lambda: sorted(HASHES)),
        Param("point_name", "template", DEFAULT_POINT_NAME,
              "name of point j of a server, hashed to place it", placeholders=("server", "j")),
        Param("points_per_weight", "int", 160, "points per unit of server weight",
              minimum=1, maximum=MAX_POINTS_PER_WEIGHT),
    )

    def __init__(self, **params: Any) -> None:
        values = parse_keywords(f"construction {self.name!r}", self.params, params)
        self.hash: str = values["hash"]
        self.point_name: str = values["point_name"]
        self.points_per_weight: int = values["points_per_weight"]

    @property
    def bits(self) -> int:
        return HASHES[self.hash].bits

    @property
    def label(self) -> str:
        return f"k={self.points_per_weight}"

    def check_servers(self, servers: Sequence[Server]) -> str | None:
        return None  # any positive weight rounds to at least one point

    def point_counts(self, servers: Sequence[Server]) -> list[int]:
        return [points_for(s.weight, self.points_per_weight) for s in servers]

    def build_ring(self, servers: Sequence[Server]) -> Ring:
        return generate_ring(servers, self.points_per_weight, self.hash, self.point_name)

    def key_hashes(self, keys: Sequence[bytes]) -> npt.NDArray[np.unsignedinteger]:
        return hash_many(self.hash, keys)
