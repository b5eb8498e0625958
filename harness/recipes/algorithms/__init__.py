"""The algorithm registry: one module per consistent-hashing algorithm, one typed map.

`ALGORITHMS[name].build(servers, **params)` builds that algorithm for the
servers (see `harness.recipes.algorithms.base` for the whole contract). The ring is
one of them; `jump`, `maglev`, `rendezvous`, `rendezvous-weighted` and `multi-probe`
route exactly like the libraries their modules name, and `bounded-load` applies
HAProxy's hash-balance-factor rule to a ring. Installed packages add theirs through the
entry-point group `ring_harness.algorithms` (`harness.recipes.plugins`).
"""

from __future__ import annotations

from harness.core.errors import UnknownNameError
from harness.recipes.algorithms.base import Algorithm
from harness.recipes.algorithms.bounded_load import BoundedLoadAlgorithm
from harness.recipes.algorithms.jump import JumpAlgorithm
from harness.recipes.algorithms.maglev import MaglevAlgorithm
from harness.recipes.algorithms.multi_probe import MultiProbeAlgorithm
from harness.recipes.algorithms.rendezvous import RendezvousAlgorithm
from harness.recipes.algorithms.rendezvous_weighted import WeightedRendezvousAlgorithm
from harness.recipes.algorithms.ring import RingAlgorithm
from harness.recipes.plugins import Registry

BUILT_IN: tuple[type[Algorithm], ...] = (
    RingAlgorithm, JumpAlgorithm, MaglevAlgorithm, RendezvousAlgorithm, MultiProbeAlgorithm,
    BoundedLoadAlgorithm, WeightedRendezvousAlgorithm)

ALGORITHMS: dict[str, type[Algorithm]] = Registry(
    "ring_harness.algorithms", {cls.name: cls for cls in BUILT_IN})


def get_algorithm(name: str) -> type[Algorithm]:
    """The algorithm class called `name`, or an error that lists the valid names."""
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise UnknownNameError("algorithm", name, list(ALGORITHMS)) from None


__all__ = ["ALGORITHMS", "Algorithm", "get_algorithm"]
