"""What building a construction's ring takes in time: its share of the one cost model.

A run builds each sweep point's ring once with `build_ring` (its points named, hashed,
sorted and split into positions and owners), and again for every fleet a metric rebuilds
it for (the movement after each operation). No run builds a construction's plain-Python
reference (`build_ring_reference`, the tests' check); where the construction's own build
goes through Python (a template C does not format, a keyed hash, libmemcached's ketama
mode, HAProxy's and Envoy's point loops) that is what is priced.

The rates are seconds per point, measured with `benchmarks/build_rates.py` on 2 shared
cores (2026-12-05, load average 3.9 to 4.9 while measuring): the best of two or three
builds at 20,000 and 200,000 points (1,000,000 for the Envoy ring), the larger of the
two sizes' bests, then a margin of 1.5, as the lookup rates of the algorithms are priced.
`tests/unit/test_build_prices.py` fails for a registered construction without a rate.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.core.hashing import is_keyed
from harness.recipes.constructions.generator import parse_template
from harness.recipes.constructions.points import uses_traits

#: seconds a point, by construction, where the rate is one per point: the C generators
#: (nginx 42 to 167 ns measured, libketama 128, libmemcached 152, twemproxy 110, pingora
#: 194, cassandra 136), Envoy's Python loop of names hashed 65,536 at a time (166 ns with
#: xxHash64, 270 with MurmurHash2 in numpy) and HAProxy's per-point Python (3.1 us)
SECONDS_PER_POINT: dict[str, float] = {
    "points": 150e-9,
    "nginx": 300e-9,
    "libketama": 300e-9,
    "libmemcached": 300e-9,
    "twemproxy": 300e-9,
    "pingora": 300e-9,
    "cassandra": 300e-9,
    "envoy_ring_hash": 400e-9,
    "haproxy": 4.7e-6,
    # priced by its joins below (`ALLOCATED_SECONDS_PER_JOIN`)
    "allocated": 0.0,
}
#: a `points` ring whose names Python formats (a template C does not format, 1.95 us a
#: point measured) or whose keyed hash Python calls (1.6 us), and libmemcached's ketama
#: mode (hashlib, one name a point)
PYTHON_NAMED_SECONDS_PER_POINT = 3e-6
#: a client's traits ring (`points` with traits): 742 ns a point measured at 800,000
TRAITS_SECONDS_PER_POINT = 1.1e-6
#: the allocated construction places a server's tokens when it joins, each cutting an arc
#: of a donor among the most loaded (as many donors as it has tokens, at most the servers
#: before it): a join takes a fixed part and a part per token and donor. Measured per join
#: (benchmarks/build_rates.py and the committed results' wall times, 2026-12-05): 0.24 to
#: 0.68 ms for 10 to 16 tokens on 100 to 2,048 servers, 7.9 ms for 100 tokens on 200,
#: 9.3 ms for 64 on 2,048, 9.5 ms for 1,000 on 20; priced as 0.2 ms plus 2.5 us a token
#: and donor, with a margin of 1.5
ALLOCATED_SECONDS_PER_JOIN = 0.3e-3
ALLOCATED_SECONDS_PER_TOKEN_AND_DONOR = 3.75e-6


def build_seconds(params: dict[str, Any], counts: Sequence[int]) -> tuple[float, str]:
    """Seconds one `build_ring` takes for a ring recipe's parameters, its servers having
    `counts` points each (in configuration order), and what sets them (Cassandra's
    allocator is priced apart, by `harness.recipes.algorithms.cost.generation_cost`)."""
    name = params.get("construction", "points")
    points = sum(counts)
    if name == "allocated":
        seconds = sum(ALLOCATED_SECONDS_PER_JOIN
                      + ALLOCATED_SECONDS_PER_TOKEN_AND_DONOR * tokens * min(joined, tokens)
                      for joined, tokens in enumerate(counts))
        return seconds, (f"allocated tokens placed one server at a time ({len(counts):,} "
                         f"servers, {points:,} tokens)")
    if name == "points" and uses_traits(params):
        return TRAITS_SECONDS_PER_POINT * points, f"{points:,} client-traits points"
    template = params.get("point_name")
    python_named = (
        (name == "points" and template is not None
         and (parse_template(template) is None or is_keyed(params.get("hash", ""))))
        or (name == "libmemcached" and params.get("mode") == "ketama"))
    if python_named:
        return (PYTHON_NAMED_SECONDS_PER_POINT * points,
                f"{points:,} points named and hashed in Python")
    rate = SECONDS_PER_POINT.get(name, PYTHON_NAMED_SECONDS_PER_POINT)
    return rate * points, f"{points:,} points of {name} built"
