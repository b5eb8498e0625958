"""One recipe built for many parts of a fleet: a router process's eligibility rings.

A process holds the same recipe for dozens of server lists, each some of the
fleet's servers. Built one by one, every ring hashes its servers' points again:
at Cloudflare's size, 754M point names for 64 rings against 43M for the fleet.
A ring whose construction places each server's points by that server alone
(`Construction.fleet_points`) is instead filtered from the fleet's points,
hashed and sorted once (`RingAlgorithm.parts_of`); any other algorithm is
built afresh for each part. Either way a part's build equals `build(part)`:
tests/unit/test_fleet_points.py checks it, and the process metric checks it again on
every run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from harness.core.fleet_points import FleetPoints
from harness.core.servers import Server
from harness.recipes.algorithms import get_algorithm
from harness.recipes.algorithms.base import Algorithm, checked_keywords, require_servers_for
from harness.recipes.algorithms.ring import RingAlgorithm

#: builds the recipe for one part of the fleet (some of its servers, in its order)
PartBuilder = Callable[[Sequence[Server]], Algorithm]


def parts_builder(name: str, servers: Sequence[Server], params: dict[str, Any],
                  checked: bool = False,
                  cache: dict[str, FleetPoints | None] | None = None) -> PartBuilder:
    """A builder of algorithm `name` with `params` for parts of `servers`: the parameters
    checked once for the whole fleet (unless `checked` says a scenario's load did), each
    part's servers as `build` checks them; `cache` shares a ring recipe's fleet points
    between the builders of one fleet (`RingAlgorithm.parts_of`)."""
    algorithm = get_algorithm(name)
    settled = params if checked else checked_keywords(algorithm, servers, params)
    if algorithm is RingAlgorithm:
        filtered = RingAlgorithm.parts_of(servers, settled, cache)
        if filtered is not None:
            return filtered

    def build(part: Sequence[Server]) -> Algorithm:
        return algorithm.from_params(require_servers_for(algorithm, part, settled), settled)

    return build
