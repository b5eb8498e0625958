"""`python -m harness plan`: the inverse question. For a fleet and a balance target, the
smallest number of points per server, then what that ring costs.

Points per unit weight k comes from the formula first: N servers of k random
points each own Beta shares with CV `sqrt((N-1)/(N k + 1))` (docs/design.md),
so the smallest k with CV <= target is `ceil(((N-1)/target**2 - 1) / N)`;
N = 100 at 1% gives 9,900. A peak-to-mean target is turned into a CV
target with the expected largest of N standard normal deviates (Blom's
approximation): peak-to-mean ~ 1 + CV z_N. Then the ring is built and
measured: its exact `cv_arcs` and peak-to-mean (a single random ring
scatters round the formula), its collisions against the birthday
expectation, its bytes in each layout, and its batch lookup time.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from harness.errors import ScenarioError
from harness.generator import Server, generate_ring, points_for
from harness.hashing import HASHES
from harness.layouts import LAYOUTS
from harness.metrics.balance import arc_shares, cv, theory_cv
from harness.metrics.collisions import expected_collisions
from harness.tables import Report, Section, Table, count, kib, number, pct, text

#: below this the whole ring fits a core's L2 cache and memory does not matter
SMALL_RING_BYTES = 1 << 20
PLAN_LAYOUTS = ("numpy-aligned", "numpy-packed", "cffi-packed", "bucketed")
LOOKUP_KEYS = 200_000


@dataclass(frozen=True)
class Plan:
    servers: tuple[Server, ...]
    target: str
    target_cv: float
    points_per_weight: int
    formula_cv: float


def _expected_max_normal(n: int) -> float:
    """Expected largest of n standard normal deviates (Blom's approximation)."""
    if n < 2:
        return 0.0
    return statistics.NormalDist().inv_cdf((n - 0.375) / (n + 0.25))


def points_for_target(servers: Sequence[Server], target_cv: float) -> int:
    """Smallest points per unit weight whose predicted CV is at most `target_cv`."""
    n = len(servers)
    if n == 1:
        return 1
    # Equal weights: closed form; weighted: the same form as a start, then step up.
    k = max(1, math.ceil(((n - 1) / target_cv**2 - 1) / n))
    while k > 1 and theory_cv([points_for(s.weight, k - 1) for s in servers]) <= target_cv:
        k -= 1
    while theory_cv([points_for(s.weight, k) for s in servers]) > target_cv:
        k += 1
    return k


def make_plan(servers: Sequence[Server], target_cv: float | None = None,
              target_peak_to_mean: float | None = None) -> Plan:
    if (target_cv is None) == (target_peak_to_mean is None):
        raise ScenarioError("plan: give exactly one of --target-cv or --target-peak-to-mean")
    if not servers:
        raise ScenarioError("plan: --servers must be at least 1 (got 0)")
    if target_cv is not None:
        if not 0 < target_cv < 1:
            raise ScenarioError(f"plan: --target-cv must be a fraction between 0 and 1, "
                                f"such as 0.01 for 1% (got {target_cv})")
        label, cv_target = f"CV <= {100 * target_cv:g}%", target_cv
    else:
        assert target_peak_to_mean is not None
        if not 1 < target_peak_to_mean < 2:
            raise ScenarioError(f"plan: --target-peak-to-mean must be between 1 and 2, such "
                                f"as 1.05 (got {target_peak_to_mean})")
        z = _expected_max_normal(len(servers))
        cv_target = (target_peak_to_mean - 1) / z if z else 1.0
        label = f"peak-to-mean <= {target_peak_to_mean:g} (CV <= {100 * cv_target:.3g}%)"
    k = points_for_target(servers, cv_target)
    return Plan(tuple(servers), label, cv_target, k,
                theory_cv([points_for(s.weight, k) for s in servers]))


def plan_report(plan: Plan, hash_name: str = "blake2b-32",
                layouts: Sequence[str] = PLAN_LAYOUTS) -> Report:
    """Build the planned ring and measure it."""
    servers = plan.servers
    ring = generate_ring(servers, plan.points_per_weight, hash_name)
    weights = np.array([s.weight for s in servers])
    shares = arc_shares(ring, len(servers)) / weights
    measured_cv = cv(shares) if len(servers) > 1 else 0.0
    points = sum(points_for(s.weight, plan.points_per_weight) for s in servers)
    keys = np.random.default_rng(1).integers(0, 2**ring.bits, LOOKUP_KEYS, dtype=np.uint64)
    keys = keys.astype(np.uint32 if ring.bits == 32 else np.uint64)
    rows = []
    smallest = None
    for name in layouts:
        layout = LAYOUTS[name].build(ring.positions, ring.owners)
        layout.lookup_many(keys)  # warm up
        samples = []
        for _ in range(5):
            start = time.perf_counter_ns()
            layout.lookup_many(keys)
            samples.append((time.perf_counter_ns() - start) / len(keys))
        smallest = layout.nbytes if smallest is None else min(smallest, layout.nbytes)
        rows.append([text(name), count(layout.entry_size), count(layout.nbytes),
                     kib(layout.nbytes), kib(layout.nbytes / len(servers)),
                     number(statistics.median(samples), 1)])
    verdict = (f"The ring is {kib(smallest or 0).text} in its smallest layout: it fits a "
               "core's cache, so memory does not matter at this size (16,000 entries are "
               "96 KB at 6 bytes)." if (smallest or 0) < SMALL_RING_BYTES else
               f"The ring is {kib(smallest or 0).text} in its smallest layout.")
    summary = Table.of(["figure", "value"], [
        [text("servers"), count(len(servers))],
        [text("target"), text(plan.target)],
        [text("points per unit weight k (formula)"), count(plan.points_per_weight)],
        [text("cv_theory at k"), pct(plan.formula_cv, 3)],
        [text("cv_arcs measured on the built ring"), pct(measured_cv, 3)],
        [text("peak-to-mean measured"), number(float(shares.max() / shares.mean()), 4)],
        [text("points"), count(points)], [text("entries"), count(ring.entries)],
        [text("collisions"), count(ring.collisions)],
        [text("collisions expected"), number(expected_collisions(points, ring.bits), 1)],
    ])
    confirm = ("The measured cv_arcs is within the target."
               if measured_cv <= plan.target_cv else
               "The measured cv_arcs is above the target: a single random ring scatters "
               "round the formula (by about 1/sqrt(2N) of it); take a few more points or "
               "accept the spread.")
    return Report(f"Plan: {len(servers):,} servers, {plan.target}", [
        f"Hash `{hash_name}`, points named `{{server}}:{{j}}`. {confirm} {verdict}"],
        [Section("The ring", tables=[summary]),
         Section("Memory and lookup time per layout", tables=[Table.of(
             ["layout", "entry_size", "bytes", "size", "per server", "batch ns/key"],
             rows, notes=[f"Bytes as the layout accounts for them; batch lookups of "
                          f"{LOOKUP_KEYS:,} random key hashes, median of 5."])])])


def check_hash(name: str) -> str:
    if name not in HASHES:
        raise ScenarioError(f"plan: --hash must be one of {', '.join(sorted(HASHES))} "
                            f"(got {name!r})")
    return name


def check_layouts(names: Sequence[str], bits: int) -> list[str]:
    for name in names:
        if name not in LAYOUTS or LAYOUTS[name].hash_bits != bits:
            fitting = [n for n, cls in LAYOUTS.items() if cls.hash_bits == bits]
            raise ScenarioError(f"plan: --layouts must name layouts that store {bits}-bit "
                                f"hashes ({', '.join(fitting)}) (got {name!r})")
    return list(names)


def process_section(plan: Plan, rings: Sequence[tuple[tuple[str, ...], Sequence[Server]]],
                    layouts: Sequence[str]) -> Section:
    """A process's rings at the planned points per unit weight: entries (from the point
    counts, before collisions), the CV each ring's formula gives, and bytes per layout
    (each layout's fixed and per-entry bytes, fitted from builds at two sizes, plus 2 bytes
    per server for the owner map)."""
    from harness.estimate import layout_cost

    costs_of = {name: layout_cost(name) for name in layouts}
    rows = []
    totals = dict.fromkeys(layouts, 0)
    for requires, fleet in rings:
        entries = sum(points_for(s.weight, plan.points_per_weight) for s in fleet)
        costs = {name: round(costs_of[name][0] + costs_of[name][1] * entries) + 2 * len(fleet)
                 for name in layouts}
        for name in layouts:
            totals[name] += costs[name]
        rows.append([text(" + ".join(requires) or "(all servers)"), count(len(fleet)),
                     count(entries),
                     pct(theory_cv([points_for(s.weight, plan.points_per_weight)
                                    for s in fleet]), 3),
                     *(kib(costs[name]) for name in layouts)])
    rows.append([text("process"), text(""), text(""), text(""),
                 *(kib(totals[name]) for name in layouts)])
    return Section(f"The process: {len(rings)} rings at k = {plan.points_per_weight:,}",
                   tables=[Table.of(["ring (requires)", "servers", "entries", "cv_theory",
                                     *layouts], rows,
                                    notes=["k is set by the ring that needs the most points "
                                           "for the target; bytes are each layout's fixed "
                                           "and per-entry bytes (fitted from builds at two "
                                           "sizes) at these entries, before collisions, "
                                           "plus the owner map."])])
