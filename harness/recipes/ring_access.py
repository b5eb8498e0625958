"""The ring behind an algorithm, for metrics that are defined on rings only."""

from __future__ import annotations

from typing import Any

from harness.core.ring import Ring


def ring_of(algorithm: Any) -> Ring | None:
    """The algorithm's sorted points, if it routes with a ring; None otherwise."""
    ring = getattr(algorithm, "ring", None)
    return ring if isinstance(ring, Ring) else None
