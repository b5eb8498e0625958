"""Lookup throughput: nanoseconds per key, scalar and batch, over repeated rounds.

- `scalar_ns`: a Python loop calling `lookup(h)` over precomputed hashes (what
  a request path that routes one key at a time pays).
- `batch_ns`: one `lookup_many(hashes)` over the workload's key array.

Rounds of all layouts are interleaved (round 1 of every layout, then round 2,
...) so that a burst of noise on this shared machine hits them all alike; one
warm-up round comes first. Each figure is the median of its rounds, with the
spread (min, max) beside it. Compare layouts as ratios of one run.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass

import numpy as np
import numpy.typing as npt

from harness.layouts.base import Layout


@dataclass(frozen=True)
class Timing:
    """ns per key over rounds: median, and min and max as the spread."""

    median: float
    min: float
    max: float
    rounds: int

    @classmethod
    def of(cls, samples: list[float]) -> Timing:
        return cls(statistics.median(samples), min(samples), max(samples), len(samples))

    def as_record(self) -> dict[str, float]:
        return asdict(self)


def _per_key_ns(run: Callable[[], object], keys: int) -> float:
    start = time.perf_counter_ns()
    run()
    return (time.perf_counter_ns() - start) / keys


def _scalar_loop(layout: Layout, hashes: list[int]) -> Callable[[], object]:
    lookup = layout.lookup

    def loop() -> None:
        for h in hashes:
            lookup(h)

    return loop


def measure_throughput(
    layouts: Mapping[str, Layout],
    key_hashes: npt.NDArray[np.unsignedinteger],
    repeats: int,
    scalar_keys: int,
    progress: Callable[[], None] = lambda: None,
) -> dict[str, dict[str, Timing]]:
    """{layout: {"scalar_ns": Timing, "batch_ns": Timing}} for interleaved rounds."""
    scalar_hashes = key_hashes[:scalar_keys].tolist()
    batch: dict[str, list[float]] = {name: [] for name in layouts}
    scalar: dict[str, list[float]] = {name: [] for name in layouts}
    for round_number in range(repeats + 1):
        for name, layout in layouts.items():
            b = _per_key_ns(lambda layout=layout: layout.lookup_many(key_hashes), len(key_hashes))
            s = _per_key_ns(_scalar_loop(layout, scalar_hashes), len(scalar_hashes))
            if round_number:  # round 0 warms caches and branch predictors
                batch[name].append(b)
                scalar[name].append(s)
        progress()
    return {
        name: {"scalar_ns": Timing.of(scalar[name]), "batch_ns": Timing.of(batch[name])}
        for name in layouts
    }
