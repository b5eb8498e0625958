"""Counts: each layout's build, batch lookup and scalar lookup under callgrind (counts plans).

One fresh process per layout and ring (harness.metrics.callgrind) counts the same
operations the timing tests time, on the same rings and keys: instructions
and simulated L1 and last-level data misses, per key for lookups and per
entry for builds (builds and scalar lookups: instructions only, see below). They repeat
exactly, so the gate compares them with a 2% tolerance
(harness.apps.benchgate.decide) instead of a statistical test.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import pytest
from conftest import SkipByPlan, Workload

from harness.apps.benchgate.plan import BenchPlan, RingSize
from harness.metrics.callgrind import count_layout
from harness.recipes.layouts import Layout
from harness.recipes.layouts.base import CFunctions

WorkloadFor = Callable[[int, RingSize], Workload]
FitsBudget = Callable[[str, RingSize], bool]


def test_counts(
    pytestconfig: pytest.Config,
    plan: BenchPlan,
    registry: Mapping[str, type[Layout]],
    layout_name: str,
    ring_size: RingSize,
    workload_for: WorkloadFor,
    fits_budget: FitsBudget,
    skip_by_plan: SkipByPlan,
    figures: dict[str, object],
    tmp_path: Path,
) -> None:
    """Record instructions and D1/LL misses of the layout's build (per entry) and of its
    batch and scalar lookups (per key)."""
    if not fits_budget(layout_name, ring_size):
        skip_by_plan(layout_name, ring_size, "over the memory budget")
    cls = registry[layout_name]
    functions: CFunctions | None = getattr(cls, "c_functions", None)
    if functions is None:
        # A whole Python call's misses depend on where the interpreter's heap lands, which
        # moves with the checkout's path and environment (15% seen between two clones): the
        # counts metric reports them, the gate judges only searches counted in C.
        skip_by_plan(layout_name, ring_size, "counted over a whole Python call: not gated")
    work = workload_for(cls.hash_bits, ring_size)
    ring_file = tmp_path / "ring.npz"
    np.savez(ring_file, positions=work.ring.positions, owners=work.ring.owners,
             keys=work.batch_keys)
    events = count_layout(layout_name, ring_file, ("build", "batch", "scalar"),
                          len(work.scalar_keys), functions,
                          registry=pytestconfig.getoption("bench_layouts"))
    per = {"build": (work.ring.entries, "entry"), "batch": (len(work.batch_keys), "key"),
           "scalar": (len(work.scalar_keys), "key")}
    for phase, (count, unit) in per.items():
        for figure, value in events[phase].per(count).items():
            if phase in ("build", "scalar") and "misses" in figure:
                # A build's misses are those of writing freshly allocated memory: whether
                # malloc hands back cache-warm heap or new pages depends on the heap's state,
                # which moves with the checkout's path (bucketed's 16k build: LL misses
                # +9% between two clones of one commit). A scalar lookup's misses depend on
                # which of the ring's lines the interpreter evicted between two calls, which
                # moves with the same heap (cffi-packed's 16k scalar: L1 misses +2.8% after
                # a change to Python code only, batch figures within 0.5%). Their
                # instructions are judged.
                continue
            name = figure.replace("_per_key", f"_per_{unit}")
            figures[f"counts/{phase}/{layout_name}/{ring_size.label}/{name}"] = value
