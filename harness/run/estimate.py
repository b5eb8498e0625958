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

from harness.core.errors import ScenarioError
from harness.core.machine import available_memory_bytes
from harness.core.servers import servers_after
from harness.core.workload import KeysSpec
from harness.metrics.parity import PLAIN_REFERENCE_KEYS
from harness.metrics.registry import get_metric
from harness.recipes.algorithms import get_algorithm
from harness.recipes.constructions.generator import (
    GENERATION_BYTES_PER_POINT,
    PYTHON_GENERATION_BYTES_PER_POINT,
    parse_template,
)
from harness.recipes.layouts import LAYOUTS
from harness.run.scenario import Scenario

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


def key_bytes(keys: KeysSpec) -> float:
    """The workload's names and hashes: every key name (the longest one's length, so a
    template such as "{i:>100000}" counts), and for zipf every distinct name plus the
    popularity, draw and permutation arrays over the universe."""
    longest = max(len(keys.name.format(i=keys.count - 1)), len(keys.name.format(i=0)))
    # The name as a str and again encoded to bytes while hashing: twice its length.
    per_name = BYTES_PER_KEY + 2 * longest
    total = per_name * keys.count
    if keys.distribution == "zipf":
        total += keys.universe * (per_name + 3 * 8)
    return float(total)


def estimate(scenario: Scenario) -> tuple[int, str]:
    """Largest estimated footprint over the sweep (operations included), and what it is
    mostly made of, named as the fields that set it."""
    servers = scenario.ring_servers()
    fleets = [servers, *(servers_after(servers, op) for op in scenario.operations)]
    keys = key_bytes(scenario.keys)
    ring = 0.0
    most_points = 0
    for recipe in scenario.recipes():
        algorithm = get_algorithm(recipe.algorithm)
        points = max(algorithm.estimated_entries(fleet, recipe.params) for fleet in fleets)
        most_points = max(most_points, points)
        layouts = sum(fixed + per_entry * points
                      for fixed, per_entry in map(layout_cost, scenario.measure.layouts))
        template = recipe.params.get("point_name")
        per_point = (PYTHON_GENERATION_BYTES_PER_POINT
                     if template is not None and parse_template(template) is None
                     else GENERATION_BYTES_PER_POINT)
        ring = max(ring, per_point * points, layouts + 6 * points)
    culprit = ("keys (count, name, distribution, universe)" if keys > ring else
               "the ring's size (servers' weights, generator.points_per_weight, operations' "
               "weights)")
    # A table metric runs with the ring and the keys resident; the largest one sets the peak.
    tables = [(get_metric(name).estimated_bytes(options, servers)
               + get_metric(name).bytes_per_entry(options) * most_points, name)
              for name, options in scenario.measure.options.items()]
    table, table_name = max(tables, default=(0.0, ""))
    if table > max(keys, ring):
        culprit = f"[{table_name}] ({get_metric(table_name).cost_fields})"
    return int(ring + keys + table), culprit


def estimate_peak_bytes(scenario: Scenario) -> int:
    """Largest estimated footprint over the sweep, operations included."""
    return estimate(scenario)[0]


def _gib(value: float) -> str:
    return f"{value / 2**30:,.1f} GiB" if value < 2**60 else f"{value / 2**30:.3g} GiB"


def check_memory(scenarios: Sequence[Scenario]) -> None:
    """Refuse, before any work starts, a scenario whose estimate exceeds available memory."""
    available = available_memory_bytes()
    for scenario in scenarios:
        peak, culprit = estimate(scenario)
        if available is not None and peak > available:
            raise ScenarioError(
                f"{scenario.path}: {culprit} must keep the run within this machine's "
                f"available memory of {_gib(available)} (got an estimated peak of "
                f"{_gib(peak)})"
            )


#: the time budget of a run when none is given (`--max-minutes`)
DEFAULT_MAX_MINUTES = 10.0


def estimated_seconds(scenario: Scenario) -> tuple[float, str]:
    """The work an algorithm or table metric adds beyond building rings and hashing keys
    (which the memory estimate bounds), over the sweep and its operations, and what sets it:
    the time bombs (a rendezvous of 65,535 servers, a Maglev table of 10**8 slots)."""
    servers = scenario.ring_servers()
    rounds = 1 + len(scenario.operations)
    parts: list[tuple[float, str]] = [(0.0, "")]
    # Keys the table metrics route through the algorithm's reference, priced by it.
    extra = {name: get_metric(name).reference_lookups(options)
             for name, options in scenario.measure.options.items()}
    for recipe in scenario.recipes():
        algorithm = get_algorithm(recipe.algorithm)
        # Parity routes every key through the reference and each form; the throughput
        # rounds time them again; every operation repeats the lot on the changed fleet.
        keys = rounds * scenario.keys.count
        parts.append(algorithm.estimated_seconds(
            servers, recipe.params, reference_keys=keys,
            fast_keys=keys * (2 + scenario.measure.repeats),
            plain_keys=rounds * min(PLAIN_REFERENCE_KEYS, scenario.keys.count)))
        for name, lookups in extra.items():
            if lookups:
                seconds, why = algorithm.estimated_seconds(
                    servers, recipe.params, reference_keys=lookups, fast_keys=0,
                    plain_keys=0)
                parts.append((seconds, f"[{name}]: {lookups:,} objects routed, {why}"
                              if why else ""))
    for name, options in scenario.measure.options.items():
        seconds, why = get_metric(name).estimated_seconds(options, servers)
        parts.append((seconds, f"[{name}]: {why}" if why else ""))
    total = sum(seconds for seconds, _ in parts)
    culprit = max(parts)[1]
    return total, culprit


def check_time(scenarios: Sequence[Scenario], max_minutes: float) -> None:
    """Refuse, before any work starts, a scenario whose own work would outlast the budget."""
    for scenario in scenarios:
        seconds, culprit = estimated_seconds(scenario)
        if seconds > 60 * max_minutes:
            raise ScenarioError(
                f"{scenario.path}: the run must fit the time budget of --max-minutes "
                f"{max_minutes:g} (got an estimated {seconds / 60:,.0f} minutes: {culprit}); "
                "expected fewer servers, keys or slots, or a larger --max-minutes")
