"""Run rates: what a run's lookups, [migration]'s replay, a callgrind probe and a memory
probe cost in time on this machine, for the cost model's prices.

    .venv/bin/python benchmarks/run_rates.py [--repeats 3] [--only lookups,migration,...]

Each part is timed as a run does it, `--repeats` times; the best is printed beside every
repeat, so a busy moment shows as a range:

- lookups: each layout built from a ring of random sorted points (65,536 and 16,777,216
  entries) looks up 200,000 random keys in one batch and 5,000 in a Python loop (as
  throughput's rounds do), ns per key;
- migration: the replay of `[migration]` (a zipf stream, each request's owner before and
  after, three LRU replays through the C cache model) per request, and each object's name,
  hash and route by a ring's reference, per object;
- callgrind: one `counts` probe (valgrind, a fresh interpreter, the layout built and
  looked up) at three ring sizes and two key counts: its fixed seconds, per entry, per
  key (the scalar keys' price was measured by hand, 2,000 against 20,000 of them);
- memory: one `memory` probe (a fresh process building one layout) at two ring sizes;
- algorithms: each algorithm without a ring at 50 servers, 200,000 keys in a batch and
  5,000 one call at a time (parity's sample and throughput's scalar rounds), ns per key.

The prices in `harness/recipes/layouts/costs.py` (lookups), `harness/run/estimate.py`
(algorithms' scalar calls), `harness/metrics/migration/metric.py`,
`harness/metrics/counts.py` and `harness/metrics/memory.py` come from these bests, with
the margins they state. Nothing is written outside a temporary directory.
"""

from __future__ import annotations

import argparse
import functools
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt
from build_rates import times

from harness.core.cache_model import lru_misses
from harness.core.hashing import hash_many
from harness.core.servers import Server
from harness.metrics.callgrind import count_layout
from harness.metrics.memory import measure_in_subprocess, save_ring_for_probe
from harness.metrics.migration.metric import zipf_stream
from harness.recipes.algorithms import ALGORITHMS
from harness.recipes.layouts import LAYOUTS, get_layout


def _show(label: str, unit: str, per: float, times: list[float]) -> None:
    each = ", ".join(f"{t / per:,.1f}" for t in times)
    print(f"{label:<44} best {min(times) / per:>12,.1f} {unit}  ({each})", flush=True)


def _scalar(lookup: Callable[[int], int], hashes: list[int]) -> None:
    for key_hash in hashes:
        lookup(key_hash)


def _ring(bits: int, entries: int) -> tuple[npt.NDArray[np.unsignedinteger],
                                           npt.NDArray[np.uint16]]:
    rng = np.random.default_rng(entries)
    dtype = np.uint32 if bits == 32 else np.uint64
    # unique points, as a ring holds (a few fewer than asked for where two collide)
    positions = np.unique(rng.integers(0, 2**bits, entries, dtype=np.uint64).astype(dtype))
    return positions, (np.arange(len(positions)) % 100).astype(np.uint16)


def lookups(repeats: int) -> None:
    keys, scalar_keys = 200_000, 5_000
    for entries in (2**11, 2**16, 2**24):
        for name, cls in LAYOUTS.items():
            positions, owners = _ring(cls.hash_bits, entries)
            layout = cls.build(positions, owners)
            hashes = np.random.default_rng(1).integers(
                0, 2**cls.hash_bits, keys, dtype=np.uint64).astype(positions.dtype)
            _show(f"{name} batch, {entries:,} entries", "ns/key", keys * 1e-9,
                  times(functools.partial(layout.lookup_many, hashes), repeats))
            _show(f"{name} scalar, {entries:,} entries", "ns/key", scalar_keys * 1e-9,
                  times(functools.partial(_scalar, layout.lookup,
                                           hashes[:scalar_keys].tolist()), repeats))


def migration(repeats: int) -> None:
    universe, requests, servers, capacity = 1_000_000, 4_000_000, 100, 5_000
    owner_old = (np.arange(universe) % servers).astype(np.uint16)
    owner_new = np.roll(owner_old, 7)

    def replay() -> None:
        stream = zipf_stream(universe, 1.0, requests, 1)
        steady = owner_old[stream]
        moved = steady.copy()
        moved[requests // 2:] = owner_new[stream[requests // 2:]]
        for owners in (steady, moved, moved):
            lru_misses(owners, stream, servers, capacity)

    _show(f"replay, {requests:,} requests", "ns/request", requests * 1e-9,
          times(replay, repeats))
    positions, owners = _ring(32, 45_120)
    layout = get_layout("numpy-aligned").build(positions, owners)

    def objects() -> None:
        names = [f"object-{i}".encode() for i in range(universe)]
        hash_many("fnv1a-fmix32", [b"rollout:" + n for n in names])
        for _ in range(2):  # each side: its hashes, sorted, routed by its reference
            hashes = hash_many("blake2b-32", names)
            order = np.argsort(hashes, kind="stable")
            layout.lookup_many(hashes[order])

    _show(f"objects, {universe:,}", "ns/object", universe * 1e-9, times(objects, repeats))


def callgrind(repeats: int) -> None:
    with tempfile.TemporaryDirectory() as workdir:
        for entries, keys in ((100_000, 20_000), (1_000_000, 20_000), (10_000_000, 20_000),
                              (100_000, 200_000)):
            positions, owners = _ring(32, entries)
            ring_file = Path(workdir) / "ring.npz"
            hashes = np.random.default_rng(1).integers(0, 2**32, keys, dtype=np.uint64)
            np.savez(ring_file, positions=positions, owners=owners,
                     keys=hashes.astype(np.uint32))
            for name in ("numpy-packed", "cffi-packed"):
                functions = LAYOUTS[name].c_functions
                _show(f"callgrind {name}, {entries:,} entries, {keys:,} keys", "s", 1.0,
                      times(functools.partial(count_layout, name, ring_file,
                                               ("batch", "scalar"), 2_000, functions),
                             repeats))


def memory(repeats: int) -> None:
    with tempfile.TemporaryDirectory() as workdir:
        for entries in (100_000, 10_000_000):
            positions, owners = _ring(32, entries)
            ring_file = Path(workdir) / "ring.npz"
            save_ring_for_probe(ring_file, positions, owners,
                                np.random.default_rng(1).integers(
                                    0, 2**32, 200_000, dtype=np.uint64).astype(np.uint32))
            for name in ("numpy-aligned", "cffi-packed", "bucketed"):
                _show(f"memory probe {name}, {entries:,} entries", "s", 1.0,
                      times(functools.partial(measure_in_subprocess, "layout", name,
                                               ring_file), repeats))


def algorithms(repeats: int) -> None:
    """Each algorithm without a ring, in the form a run measures (its only one), at 50
    equal servers and its default parameters: a batch of 200,000 keys, and 5,000 keys
    one call at a time, as parity's sample and throughput's scalar rounds call it."""
    servers = [Server(f"server-{i}") for i in range(50)]
    names = [f"key-{i}".encode() for i in range(200_000)]
    for name, cls in sorted(ALGORITHMS.items()):
        if name == "ring":
            continue
        built = cls.build(servers)
        hashes = built.hash_keys(names)
        _show(f"{name} batch", "ns/key", len(names) * 1e-9,
              times(functools.partial(built.lookup_many, hashes), repeats))
        built.reset()
        _show(f"{name} scalar", "ns/call", 5_000 * 1e-9,
              times(functools.partial(_scalar, built.lookup, hashes[:5_000].tolist()),
                     repeats))


PARTS = {"lookups": lookups, "migration": migration, "callgrind": callgrind,
         "memory": memory, "algorithms": algorithms}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", default=",".join(PARTS))
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}", flush=True)
    for part in args.only.split(","):
        PARTS[part](args.repeats)
    print(f"load average {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
