"""Estimate a scenario's peak memory before running it, to refuse what cannot fit.

Generation holds every encoded point name next to the hashes; the timing pass
holds every measured layout at once. Each layout's cost per entry comes from
building it at two small sizes and fitting bytes = fixed + per_entry x n, so
layouts added later are estimated without a table to maintain.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import numpy as np

from harness.algorithms import get_algorithm
from harness.errors import ScenarioError
from harness.layouts import LAYOUTS
from harness.machine import available_memory_bytes
from harness.scenario import Scenario

#: bytes per point while generating: the encoded name (~60 B object + text), hash, owner, sort
GENERATION_BYTES_PER_POINT = 110
#: bytes per key: the encoded name while hashing, its hash, owner and reference copies
BYTES_PER_KEY = 100
SMALL, LARGE = 2**12, 2**16


@cache
def layout_cost(name: str) -> tuple[float, float]:
    """(fixed bytes, bytes per entry) of a layout, from builds at two sizes."""
    cls = LAYOUTS[name]
    sizes = []
    for n in (SMALL, LARGE):
        dtype = np.dtype(np.uint32 if cls.hash_bits == 32 else np.uint64)
        positions = np.arange(n, dtype=dtype) * np.array(2**cls.hash_bits // n, dtype=dtype)
        sizes.append(cls.build(positions, np.zeros(n, np.uint16)).nbytes)
    per_entry = (sizes[1] - sizes[0]) / (LARGE - SMALL)
    return max(0.0, sizes[0] - per_entry * SMALL), per_entry


def estimate_peak_bytes(scenario: Scenario) -> int:
    """Largest estimated footprint over the sweep."""
    servers = scenario.ring_servers()
    peak = 0.0
    for recipe in scenario.recipes():
        points = get_algorithm(recipe.algorithm).estimated_entries(servers, recipe.params)
        layouts = sum(fixed + per_entry * points
                      for fixed, per_entry in map(layout_cost, scenario.measure.layouts))
        generation = GENERATION_BYTES_PER_POINT * points
        peak = max(peak, max(generation, layouts + 6 * points) + BYTES_PER_KEY
                   * scenario.keys.count)
    return int(peak)


def check_memory(scenarios: Sequence[Scenario]) -> None:
    """Refuse, before any work starts, a scenario whose estimate exceeds available memory."""
    available = available_memory_bytes()
    for scenario in scenarios:
        estimate = estimate_peak_bytes(scenario)
        if available is not None and estimate > available:
            raise ScenarioError(
                f"{scenario.path}: the scenario (servers, weights, generator and keys) must "
                f"keep the run within this machine's available memory of "
                f"{available / 2**30:.1f} GiB (got an estimated peak of "
                f"{estimate / 2**30:.1f} GiB)"
            )
