"""A scenario's ring recipe: how it builds rings and hashes keys.

`points` builds with `generate_ring` (naming scheme x hash x points per
weight) and hashes keys with the same hash; a construction (nginx, libketama)
builds the ring its system builds and hashes keys its own way.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from harness.constructions import get_construction
from harness.generator import Server, generate_ring, points_for
from harness.hashing import hash_many
from harness.ring import Ring
from harness.scenario import POINTS, GeneratorSpec


def build_ring(gen: GeneratorSpec, servers: Sequence[Server], points_per_weight: int) -> Ring:
    if gen.construction == POINTS:
        return generate_ring(servers, points_per_weight, gen.hash, gen.point_name)
    return get_construction(gen.construction).build_ring(servers)


def hash_keys(gen: GeneratorSpec, names: Sequence[str]) -> npt.NDArray[np.unsignedinteger]:
    encoded = [name.encode() for name in names]
    if gen.construction == POINTS:
        return hash_many(gen.hash, encoded)
    return get_construction(gen.construction).key_hashes(encoded)


def points_per_server(
    gen: GeneratorSpec, servers: Sequence[Server], points_per_weight: int, ring: Ring
) -> list[int]:
    """Points each server was given, before collisions."""
    if gen.construction == POINTS:
        return [points_for(s.weight, points_per_weight) for s in servers]
    # A construction's own counts: what it kept, plus nothing known of what it dropped
    # (collisions are rare at production sizes; the collision count is reported beside).
    return [int(count) for count in np.bincount(ring.owners, minlength=len(servers))]


def sweep(gen: GeneratorSpec) -> tuple[int, ...]:
    """The points_per_weight values to run; a construction fixes its own (one run)."""
    return gen.points_per_weight if gen.construction == POINTS else (0,)


def run_label(gen: GeneratorSpec, points_per_weight: int) -> str:
    return f"k={points_per_weight}" if gen.construction == POINTS else gen.construction
