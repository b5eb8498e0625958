"""Point generation throughput: the C generator against the Python path it replaced.

    .venv/bin/python benchmarks/generation_speed.py [--hash blake2b-32] [--repeats 3]

Times `harness.core.native.generate.generate_points` (names formatted and hashed in C, packed
words out, no sorting) on 1,000 servers x 10,000 points, on every usable core and on
one, and the Python path (`str.format` plus `hashlib`, `generate_ring`'s fallback) on
a 200,000-point slice of the same names, in the same process. Prints every repeat's
time per point, so a noisy shared machine shows as a range, and the speed-up as
Python's best over C's best and worst. Nothing is written to disk.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from time import perf_counter

from harness.core.native import generate as c_generate
from harness.core.servers import numbered_servers
from harness.recipes.constructions.generator import (
    DEFAULT_POINT_NAME,
    _python_points,
    generation_threads,
    parse_template,
)


def _ns_per_point(run: Callable[[], object], points: int, repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        start = perf_counter()
        run()
        times.append((perf_counter() - start) / points * 1e9)
    return times


def _show(label: str, times: list[float]) -> None:
    rates = ", ".join(f"{t:.1f}" for t in times)
    print(f"{label:<34} {min(times):8.1f} ns/point  ({1e3 / min(times):6.1f} M points/s;"
          f" repeats: {rates})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hash", default="blake2b-32", choices=sorted(c_generate.GENERATED_HASHES))
    parser.add_argument("--servers", type=int, default=1_000)
    parser.add_argument("--points", type=int, default=10_000, help="points per server")
    parser.add_argument("--python-servers", type=int, default=20,
                        help="servers of the Python path's slice (same points per server)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    servers = numbered_servers(args.servers)
    names = [s.name.encode() for s in servers]
    template = parse_template(DEFAULT_POINT_NAME)
    assert template is not None  # "{server}:{j}" is formatted in C
    literals, segments = template
    counts = [args.points] * args.servers
    total = sum(counts)
    print(f"{args.hash}, {args.servers:,} servers x {args.points:,} points = {total:,} points,"
          f" template {DEFAULT_POINT_NAME!r}")

    def c_run(threads: int) -> Callable[[], object]:
        return lambda: c_generate.generate_points(args.hash, literals, segments, names, counts,
                                                  threads)

    cores = generation_threads()
    c_all = _ns_per_point(c_run(cores), total, args.repeats)
    _show(f"C, {cores} thread(s)", c_all)
    c_one = _ns_per_point(c_run(1), total, args.repeats)
    _show("C, 1 thread", c_one)

    slice_servers = servers[: args.python_servers]
    slice_counts = counts[: args.python_servers]
    python = _ns_per_point(
        lambda: _python_points(slice_servers, slice_counts, args.hash, DEFAULT_POINT_NAME),
        sum(slice_counts), args.repeats,
    )
    _show("Python (str.format + hashlib)", python)
    best_python = min(python)
    print(f"speed-up over Python, {cores} thread(s): {best_python / max(c_all):.1f}x to"
          f" {best_python / min(c_all):.1f}x; 1 thread: {best_python / max(c_one):.1f}x to"
          f" {best_python / min(c_one):.1f}x")


if __name__ == "__main__":
    main()
