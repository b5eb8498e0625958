"""Collisions: points that land on a position already taken (the birthday problem).

For n points hashed uniformly into S = 2**bits slots, the expected number of
occupied slots is S (1 - (1 - 1/S)**n), so the expected number of dropped
points is n - S (1 - (1 - 1/S)**n), about n**2 / (2 S).
"""

from __future__ import annotations

import math


def expected_collisions(points: int, bits: int) -> float:
    """Expected points dropped when `points` uniform hashes share 2**bits slots."""
    slots = float(2**bits)
    # expm1/log1p keep precision where 1/S is far below float epsilon of 1.
    occupied = -slots * math.expm1(points * math.log1p(-1.0 / slots))
    return points - occupied
