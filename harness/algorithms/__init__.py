"""The algorithm registry: one module per consistent-hashing algorithm, one typed map.

`ALGORITHMS[name].build(servers, **params)` builds that algorithm for the
servers (see `harness.algorithms.base` for the whole contract). The ring is
the first algorithm; installed packages add theirs through the entry-point
group `ring_harness.algorithms` (`harness.plugins`).
"""

from __future__ import annotations

from harness.algorithms.base import Algorithm
from harness.algorithms.ring import RingAlgorithm
from harness.errors import UnknownNameError
from harness.plugins import Registry

ALGORITHMS: dict[str, type[Algorithm]] = Registry(
    "ring_harness.algorithms", {cls.name: cls for cls in (RingAlgorithm,)})


def get_algorithm(name: str) -> type[Algorithm]:
    """The algorithm class called `name`, or an error that lists the valid names."""
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise UnknownNameError("algorithm", name, list(ALGORITHMS)) from None


__all__ = ["ALGORITHMS", "Algorithm", "get_algorithm"]
