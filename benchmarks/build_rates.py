"""Build rates: what building each ring and algorithm costs, per entry, on this machine.

    .venv/bin/python benchmarks/build_rates.py [--size 1000000] [--repeats 3]

What a run builds, timed the way a run builds it: each construction's `build_ring`
(points named, hashed, sorted; the points construction through C and through Python's
`str.format`), each layout's `build` from a ring's arrays, and each algorithm's
`from_params` with its forms and the first use of its reference (which parity always
makes, and which builds a plain-Python table where an algorithm keeps one). Each is
timed at `--size` entries and at a tenth of it, `--repeats` times; the best time per
entry is printed beside every repeat, so a busy moment shows as a range. The rates in
`harness/recipes/constructions/build_time.py`, `harness/recipes/layouts/costs.py` and
each algorithm's `build_seconds_per_entry` come from these bests, with the margins they
state. Nothing is written to disk.
"""

from __future__ import annotations

import argparse
import functools
import os
from collections.abc import Callable
from time import perf_counter
from typing import Any

import numpy as np

from harness.core.params import keyword_fields
from harness.core.servers import Server
from harness.recipes.algorithms import ALGORITHMS, Algorithm
from harness.recipes.algorithms.ring import RingAlgorithm
from harness.recipes.constructions import CONSTRUCTIONS
from harness.recipes.layouts import LAYOUTS

#: a ring recipe per construction (its parameters) and the points each server of weight
#: 1 gets under it, so that a fleet of the wanted size can be drawn
RING_RECIPES: dict[str, tuple[dict[str, Any], int]] = {
    "points (C names)": ({"construction": "points", "points_per_weight": 1000}, 1000),
    "points (Python names)": ({"construction": "points", "points_per_weight": 1000,
                               "point_name": "{server}-{j:04d}"}, 1000),
    "points (keyed hash)": ({"construction": "points", "points_per_weight": 1000,
                             "hash": "siphash24-64", "hash_key": "00" * 16}, 1000),
    "points (client traits)": ({"construction": "points", "points_per_weight": 1000,
                                "points_per_digest": 4}, 1000),
    "nginx": ({"construction": "nginx"}, 160),
    "libketama": ({"construction": "libketama"}, 160),
    "libmemcached": ({"construction": "libmemcached"}, 160),
    "twemproxy": ({"construction": "twemproxy"}, 160),
    "haproxy": ({"construction": "haproxy"}, 16),
    "pingora": ({"construction": "pingora"}, 160),
    "allocated": ({"construction": "allocated", "points_per_weight": 1000}, 1000),
    "cassandra": ({"construction": "cassandra", "points_per_weight": 1000}, 1000),
    "envoy_ring_hash": ({"construction": "envoy_ring_hash"}, 0),
    "envoy_ring_hash (murmur)": ({"construction": "envoy_ring_hash",
                                  "hash_function": "murmur_hash_2"}, 0),
}

#: an algorithm's parameters sized by `n` entries, and its servers for them
ALGORITHM_RECIPES: dict[str, Callable[[int], tuple[dict[str, Any], int]]] = {
    "jump": lambda n: ({}, 1000),
    "maglev": lambda n: ({"table_size": _prime_above(n)}, 1000),
    "rendezvous": lambda n: ({}, 1000),
    "multi-probe": lambda n: ({}, 1000),
    "bounded-load": lambda n: ({"points_per_weight": n // 1000}, 1000),
    "rendezvous-weighted": lambda n: ({}, 1000),
    "binomial": lambda n: ({}, 1000),
    "fliphash": lambda n: ({}, 1000),
    "powerch": lambda n: ({}, 1000),
    "anchor": lambda n: ({"capacity": n}, 1000),
    "memento": lambda n: ({}, 1000),
    "jumpback": lambda n: ({}, 1000),
    "dx": lambda n: ({"capacity": n}, 1000),
    "kafka-murmur2": lambda n: ({}, 1000),
    "redis-slots": lambda n: ({}, 1000),
    "riak": lambda n: ({"ring_creation_size": 1024}, 64),
    "range": lambda n: ({"sample_count": n // 10}, 1000),
    "modulo": lambda n: ({}, 1000),
    "rendezvous-score": lambda n: ({}, 1000),
}


def _prime_above(n: int) -> int:
    candidate = n | 1
    while any(candidate % d == 0 for d in range(3, int(candidate**0.5) + 1, 2)):
        candidate += 2
    return candidate


def _fleet(count: int) -> list[Server]:
    return [Server(f"10.{i // 250}.{i % 250}.1:80", 1.0) for i in range(count)]


def times(run: Callable[[], object], repeats: int) -> list[float]:
    """Seconds of each of `repeats` calls of `run` (benchmarks/run_rates.py uses it too)."""
    found = []
    for _ in range(repeats):
        start = perf_counter()
        run()
        found.append(perf_counter() - start)
    return found


def _show(label: str, entries: int, times: list[float]) -> None:
    each = ", ".join(f"{t / entries * 1e9:.0f}" for t in times)
    print(f"{label:<34} {entries:>10,} entries {min(times) / entries * 1e9:9.1f} ns/entry"
          f"  (repeats: {each})", flush=True)


def _ring_params(recipe: dict[str, Any]) -> dict[str, Any]:
    return RingAlgorithm.parse_params(keyword_fields("ring", {**recipe, "layout": "none"}))


def _build_algorithm(algorithm: type[Algorithm], servers: list[Server],
                     params: dict[str, Any]) -> None:
    """What a run builds of it: the algorithm, its forms and its reference's first use."""
    built = algorithm.from_params(servers, params)
    built.forms([built.form])
    built.reference_owners(built.hash_keys([b"probe"]))


def _rings(sizes: list[int], repeats: int) -> None:
    for label, (recipe, per_server) in RING_RECIPES.items():
        for size in sizes:
            params = _ring_params(recipe)
            if recipe["construction"] == "envoy_ring_hash":
                params["minimum_ring_size"] = size
                servers = _fleet(10)
            else:
                servers = _fleet(max(1, size // per_server))
            entries = RingAlgorithm.estimated_entries(servers, params)
            _show(label, entries, times(
                functools.partial(RingAlgorithm.from_params, servers, params), repeats))
    print(f"constructions registered: {', '.join(CONSTRUCTIONS)}")


def _layouts(sizes: list[int], repeats: int) -> None:
    rng = np.random.default_rng(1)
    for size in sizes:
        for bits in (32, 64):
            dtype = np.uint32 if bits == 32 else np.uint64
            positions = np.unique(rng.integers(0, 2**bits - 1, size, dtype=dtype))
            owners = rng.integers(0, 1000, len(positions), dtype=np.uint16)
            for name, layout in LAYOUTS.items():
                if layout.hash_bits == bits:
                    _show(f"layout {name}", len(positions), times(
                        functools.partial(layout.build, positions, owners), repeats))


def _algorithms(sizes: list[int], repeats: int) -> None:
    for name, sized in ALGORITHM_RECIPES.items():
        for size in sizes:
            table, count = sized(size)
            algorithm = ALGORITHMS[name]
            params = algorithm.parse_params(keyword_fields(name, table))
            servers = _fleet(count)
            entries = algorithm.estimated_entries(servers, params)
            _show(f"algorithm {name}", max(1, entries), times(
                functools.partial(_build_algorithm, algorithm, servers, params), repeats))
    print(f"algorithms registered: {', '.join(ALGORITHMS)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", default="", choices=["", "rings", "layouts", "algorithms"])
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}, best of {args.repeats}", flush=True)
    sizes = [args.size // 10, args.size]
    for part, run in (("rings", _rings), ("layouts", _layouts), ("algorithms", _algorithms)):
        if args.only in ("", part):
            run(sizes, args.repeats)


if __name__ == "__main__":
    main()
