"""Deterministic figures: memory per layout, collisions and cv_arcs per ring, routing parity.

These do not vary between runs, so the gate compares them with the baseline
exactly. Each test records its figures under a stable id (see conftest).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping

import numpy as np
from conftest import SkipByPlan, Workload

from harness.apps.benchgate.plan import RingSize
from harness.core.ring import reference_owners
from harness.core.stats import arc_shares, cv
from harness.recipes.layouts import Layout

WorkloadFor = Callable[[int, RingSize], Workload]
FitsBudget = Callable[[str, RingSize], bool]


def test_layout_memory(
    registry: Mapping[str, type[Layout]],
    layout_name: str,
    ring_size: RingSize,
    workload_for: WorkloadFor,
    fits_budget: FitsBudget,
    skip_by_plan: SkipByPlan,
    figures: dict[str, object],
) -> None:
    """Record entries, entry_size, nbytes and bytes_per_entry; entries must match the ring."""
    if not fits_budget(layout_name, ring_size):
        skip_by_plan(layout_name, ring_size, "over the memory budget")
    cls = registry[layout_name]
    ring = workload_for(cls.hash_bits, ring_size).ring
    layout = cls.build(ring.positions, ring.owners)
    assert layout.entries == ring.entries
    prefix = f"{layout_name}/{ring_size.label}"
    figures[f"{prefix}/entries"] = layout.entries
    figures[f"{prefix}/entry_size"] = layout.entry_size
    figures[f"{prefix}/nbytes"] = layout.nbytes
    figures[f"{prefix}/bytes_per_entry"] = layout.nbytes / layout.entries


def test_ring_figures(
    bits: int, ring_size: RingSize, workload_for: WorkloadFor, figures: dict[str, object]
) -> None:
    """Record the ring's entries, collisions and cv_arcs (every server owns a share)."""
    ring = workload_for(bits, ring_size).ring
    shares = arc_shares(ring, ring_size.servers)
    assert shares.min() > 0
    prefix = f"ring{bits}/{ring_size.label}"
    figures[f"{prefix}/entries"] = ring.entries
    figures[f"{prefix}/collisions"] = ring.collisions
    figures[f"{prefix}/cv_arcs"] = cv(shares)


def test_routing_parity(
    registry: Mapping[str, type[Layout]],
    bits: int,
    ring_size: RingSize,
    workload_for: WorkloadFor,
    fits_budget: FitsBudget,
    figures: dict[str, object],
) -> None:
    """Every layout of this width routes the workload like searchsorted; record its digest."""
    work = workload_for(bits, ring_size)
    ring, keys = work.ring, work.keys
    expected = reference_owners(ring, keys)
    checked = []
    for name, cls in registry.items():
        if cls.hash_bits != bits or not fits_budget(name, ring_size):
            continue
        layout = cls.build(ring.positions, ring.owners)
        assert np.array_equal(layout.lookup_many(keys), expected), name
        scalar = [layout.lookup(key) for key in work.scalar_keys]
        assert scalar == expected[: len(scalar)].tolist(), name
        checked.append(name)
    assert checked, f"no layout of {bits} bits fits the {ring_size.label} ring"
    prefix = f"ring{bits}/{ring_size.label}"
    figures[f"{prefix}/routing_sha256"] = hashlib.sha256(expected.tobytes()).hexdigest()[:16]
    figures[f"{prefix}/parity_layouts"] = ",".join(sorted(checked))
