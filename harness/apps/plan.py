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

Beside it, the other option: allocated tokens (`construction = "allocated"`),
whose positions are chosen, so their CV falls about as 1/k rather than
1/sqrt(k). The smallest k that meets the same target is found by building
(doubling k, then bisecting), within a budget of tokens (the allocator is
Python), with what the tokens cost in coordination between routers.
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from harness.core.cost import Cost
from harness.core.errors import ScenarioError
from harness.core.hashing import HASHES
from harness.core.machine import available_memory_bytes, data_cache_sizes
from harness.core.ring import MAX_SERVERS
from harness.core.servers import Server, eligibility_sets, servers_with
from harness.core.stats import arc_shares, cv, expected_collisions, theory_cv
from harness.core.tables import Report, Section, Table, code, count, kib, literal, number, pct, text
from harness.metrics.process import ProcessOptions
from harness.recipes.algorithms.cost import generation_cost
from harness.recipes.constructions.allocated import allocate
from harness.recipes.constructions.generator import (
    generate_ring,
    points_for,
)
from harness.recipes.layouts import LAYOUTS
from harness.recipes.layouts.costs import layout_cost
from harness.run.scenario import Scenario

PLAN_LAYOUTS = ("numpy-aligned", "numpy-packed", "cffi-packed", "bucketed")
LOOKUP_KEYS = 200_000
#: the most allocated tokens plan builds: 2,048 servers x 64 tokens take about a minute
ALLOCATED_TOKEN_BUDGET = 140_000


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


#: the most points per unit weight a plan considers (a scenario's own limit)
MAX_PLANNED_POINTS = 10**8
#: steps of one point tried above the closed form before the search doubles instead: weighted
#: fleets land within a few steps; a fleet whose lightest server gets one point until k is
#: huge would otherwise take k steps
LINEAR_STEPS = 10_000


def points_for_target(servers: Sequence[Server], target_cv: float) -> int:
    """Smallest points per unit weight whose predicted CV is at most `target_cv`."""
    n = len(servers)
    if n == 1:
        return 1

    def meets(k: int) -> bool:
        return theory_cv([points_for(s.weight, k) for s in servers]) <= target_cv

    # Equal weights: closed form; weighted: the same form as a start, then step up.
    # (in floats, clamped before rounding: a target like 1e-300 squares to 0.0)
    # The form gives points per server; a server of weight w holds about w * k of them.
    mean_weight = statistics.fmean(s.weight for s in servers)
    estimate = ((n - 1) / max(target_cv**2, sys.float_info.min) - 1) / n / mean_weight
    k = max(1, math.ceil(min(float(MAX_PLANNED_POINTS), estimate)))
    # Below a start that already meets the target, gallop down to one that does not, then
    # bisect: stepping down one point at a time took 400,000 steps (12 s) for three
    # servers of weight 2.5 at a CV of 0.1%.
    step = 1
    while k > 1 and meets(k - 1):
        failing = max(0, k - 2 * step)
        if failing == 0 or not meets(failing):
            while k - failing > 1:
                middle = (failing + k) // 2
                failing, k = (failing, middle) if meets(middle) else (middle, k)
            break
        k, step = failing, 2 * step
    for _ in range(LINEAR_STEPS):
        if meets(k):
            return k
        k += 1
    # Far from the closed form: double to a k that meets the target, then bisect.
    low, high = k, k
    while not meets(high):
        if high >= MAX_PLANNED_POINTS:
            lightest = min(servers, key=lambda s: s.weight)
            raise ScenarioError(
                f"plan: no points per unit weight up to {MAX_PLANNED_POINTS:,} gives a CV of "
                f"{100 * target_cv:g}% (the lightest server, weight {lightest.weight:g}, "
                f"holds {points_for(lightest.weight, MAX_PLANNED_POINTS):,} points even "
                "then); expected a looser target or closer weights")
        low, high = high, min(2 * high, MAX_PLANNED_POINTS)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if meets(middle) else (middle, high)
    return high


def planned_ring_bytes(servers: Sequence[Server], points_per_weight: int, bits: int,
                       layouts: Sequence[str]) -> float:
    """The most memory planning the ring holds at once, from the same cost model as a run's
    estimate: generating its points, or holding its arrays and arc shares beside one
    layout at a time, built and looked up with the plan's keys."""
    points = sum(points_for(s.weight, points_per_weight) for s in servers)
    costs = [layout_cost(name) for name in layouts]
    one_layout = max((cost.built_and_looked_up_bytes(points, LOOKUP_KEYS) for cost in costs),
                     default=0.0)
    holding = Cost(held=(bits // 8 + 2 + 8) * points + (bits // 8) * LOOKUP_KEYS,
                   peak=(bits // 8 + 2 + 8) * points + one_layout + (bits // 8) * LOOKUP_KEYS)
    return generation_cost({}, points).then(holding).peak


def _check_ring_fits(servers: Sequence[Server], points_per_weight: int, bits: int,
                     layouts: Sequence[str]) -> None:
    """Refuse, before it is built, a planned ring larger than this machine's memory."""
    needed = planned_ring_bytes(servers, points_per_weight, bits, layouts)
    available = available_memory_bytes()
    if available is not None and needed > available:
        points = sum(points_for(s.weight, points_per_weight) for s in servers)
        raise ScenarioError(
            f"plan: the target needs {points_per_weight:,} points per unit weight, "
            f"{points:,} points in all, about {needed / 2**30:,.1f} GiB "
            f"to build and measure; this machine has {available / 2**30:,.1f} GiB available "
            "(expected a looser target or fewer servers)")


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


def cache_verdict(nbytes: int, layout: str, entries: int, caches: dict[int, int]) -> str:
    """What the planned ring's size means on this machine: the smallest cache level it fits,
    or that it is larger than the last level (read from the kernel, not assumed)."""
    size = f"The ring is {kib(nbytes).text} in its smallest layout ({layout}, {entries:,} entries)"
    if not caches:
        return f"{size}; this machine does not report its cache sizes."
    for level in sorted(caches):
        if nbytes <= caches[level]:
            return (f"{size}: it fits this machine's L{level} data cache "
                    f"({kib(caches[level]).text}), so a lookup rarely waits on memory.")
    last = max(caches)
    return (f"{size}: larger than this machine's last-level cache (L{last}, "
            f"{kib(caches[last]).text}), so a lookup of a cold key waits on memory; bytes "
            "per entry matter here.")


def plan_report(plan: Plan, hash_name: str = "blake2b-32",
                layouts: Sequence[str] = PLAN_LAYOUTS) -> Report:
    """Build the planned ring and measure it."""
    servers = plan.servers
    _check_ring_fits(servers, plan.points_per_weight, HASHES[hash_name].bits, layouts)
    ring = generate_ring(servers, plan.points_per_weight, hash_name)
    weights = np.array([s.weight for s in servers])
    shares = arc_shares(ring, len(servers)) / weights
    measured_cv = cv(shares) if len(servers) > 1 else 0.0
    points = sum(points_for(s.weight, plan.points_per_weight) for s in servers)
    keys = np.random.default_rng(1).integers(0, 2**ring.bits, LOOKUP_KEYS, dtype=np.uint64)
    keys = keys.astype(np.uint32 if ring.bits == 32 else np.uint64)
    rows = []
    smallest: int | None = None
    smallest_name = ""
    for name in layouts:
        layout = LAYOUTS[name].build(ring.positions, ring.owners)
        layout.lookup_many(keys)  # warm up
        samples = []
        for _ in range(5):
            start = time.perf_counter_ns()
            layout.lookup_many(keys)
            samples.append((time.perf_counter_ns() - start) / len(keys))
        if smallest is None or layout.nbytes < smallest:
            smallest, smallest_name = layout.nbytes, name
        rows.append([text(name), count(layout.entry_size), count(layout.nbytes),
                     kib(layout.nbytes), kib(layout.nbytes / len(servers)),
                     number(statistics.median(samples), 1)])
    verdict = cache_verdict(smallest or 0, smallest_name, ring.entries, data_cache_sizes())
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
        f"Hash {code(hash_name)}, points named `{{server}}:{{j}}`. {confirm} {verdict}"],
        [Section("The ring", tables=[summary]),
         Section("Memory and lookup time per layout", tables=[Table.of(
             ["layout", "entry_size", "bytes", "size", "per server", "batch ns/key"],
             rows, notes=[f"Bytes as the layout accounts for them; batch lookups of "
                          f"{LOOKUP_KEYS:,} random key hashes, median of 5."])]),
         allocated_section(plan, points)])


@dataclass(frozen=True)
class AllocatedTry:
    points_per_weight: int
    tokens: int
    cv_arcs: float
    peak_to_mean: float
    build_s: float


def allocated_tries(servers: Sequence[Server], target_cv: float,
                    budget: int = ALLOCATED_TOKEN_BUDGET) -> list[AllocatedTry]:
    """Allocated rings built for the target: k doubled from 1 until cv_arcs <= target, then
    bisected down to the smallest k that meets it; none over `budget` tokens."""
    weights = np.array([s.weight for s in servers])
    tried: dict[int, AllocatedTry] = {}

    def build(k: int) -> AllocatedTry | None:
        tokens = sum(points_for(s.weight, k) for s in servers)
        if tokens > budget:
            return None
        if k not in tried:
            started = time.perf_counter()
            ring = allocate(servers, k)
            elapsed = time.perf_counter() - started
            shares = arc_shares(ring, len(servers)) / weights
            tried[k] = AllocatedTry(k, ring.entries, cv(shares) if len(servers) > 1 else 0.0,
                                    float(shares.max() / shares.mean()), elapsed)
        return tried[k]

    k = 1
    while (found := build(k)) is not None and found.cv_arcs > target_cv:
        k *= 2
    if found is not None and k > 1:
        low, high = k // 2, k  # low misses the target, high meets it
        while high - low > 1:
            middle = (low + high) // 2
            attempt = build(middle)
            assert attempt is not None  # fewer tokens than `high`, which was built
            low, high = (low, middle) if attempt.cv_arcs <= target_cv else (middle, high)
    return sorted(tried.values(), key=lambda t: t.points_per_weight)


def allocated_section(plan: Plan, random_points: int) -> Section:
    """Allocated tokens as the other option: the smallest k that meets the target, its
    entries against the random ring's, and what routers must then share."""
    tries = allocated_tries(plan.servers, plan.target_cv)
    meets = [t for t in tries if t.cv_arcs <= plan.target_cv]
    rows = [[count(t.points_per_weight), count(t.tokens), pct(t.cv_arcs, 3),
             number(t.peak_to_mean, 4), number(t.build_s, 2),
             text("yes" if t.cv_arcs <= plan.target_cv else "no")] for t in tries]
    if meets:
        best = meets[0]
        verdict = (f"Allocated tokens meet the target at k = {best.points_per_weight:,}: "
                   f"{best.tokens:,} entries against {random_points:,} random points, "
                   f"{random_points / best.tokens:,.1f}x fewer.")
    else:
        verdict = (f"Allocated tokens did not meet the target within "
                   f"{ALLOCATED_TOKEN_BUDGET:,} tokens (the allocator is Python); random "
                   "points it is, or run the allocator offline.")
    coordination = (
        "What they cost in coordination. Hashed points need only the set of servers and "
        "weights: every router builds the same ring in any order. Allocated tokens depend on "
        "history: every router must share the ordered list of servers and weights as they "
        "joined, plus the seed, and run the allocator (integer arithmetic, the same ring on "
        "every machine), or share the tokens themselves (k positions and an owner per "
        "server). A removal falls to the successors of the removed server's tokens, and "
        "must be shared as 'drop these tokens': rebuilding from the shorter list re-places "
        "every server that joined after it. Its CV then rises; bringing it back needs a "
        "rebalance that re-places a few tokens and moves extra keys between neighbours "
        "(the built-in scenario allocated-100 measures both), after which only the tokens "
        "can be shared.")
    return Section("The other option: allocated tokens", paragraphs=[verdict], tables=[
        Table.of(["allocated k", "entries", "cv_arcs", "peak-to-mean", "build s",
                  "meets the target"], rows,
                 notes=["Built by `construction = \"allocated\"` (seed 0), k doubled from 1 "
                        "until cv_arcs meets the target, then bisected."])],
        footer=[coordination])


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

    costs_of = {name: layout_cost(name) for name in layouts}
    rows = []
    totals = dict.fromkeys(layouts, 0)
    for requires, fleet in rings:
        entries = sum(points_for(s.weight, plan.points_per_weight) for s in fleet)
        costs = {name: round(costs_of[name].held_bytes(entries)) + 2 * len(fleet)
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
                                     *map(literal, layouts)], rows,
                                    notes=["k is set by the ring that needs the most points "
                                           "for the target; bytes are each layout's fixed "
                                           "and per-entry bytes (fitted from builds at two "
                                           "sizes) at these entries, before collisions, "
                                           "plus the owner map."])])


#: a planned process: each eligibility set and the servers on its ring
Rings = list[tuple[tuple[str, ...], list[Server]]]


def numbered_fleet(count: int) -> list[Server]:
    """`--servers N`: N servers of weight 1."""
    if not 1 <= count <= MAX_SERVERS:
        raise ScenarioError(f"plan: --servers must be from 1 to {MAX_SERVERS:,} (got {count})")
    return [Server(f"server-{i}") for i in range(count)]


def weighted_fleet(weights_text: str) -> list[Server]:
    """`--weights 1,2,5`: one server per weight, in order."""
    try:
        weights = [float(w) for w in weights_text.split(",")]
    except ValueError:
        raise ScenarioError(f"plan: --weights must be positive numbers separated by "
                            f"commas (got {weights_text!r})") from None
    if not weights or not all(0 < w < 1e6 for w in weights) or len(weights) > MAX_SERVERS:
        raise ScenarioError(f"plan: --weights must be 1 to {MAX_SERVERS:,} positive numbers "
                            f"below 1,000,000 (got {weights_text!r})")
    return [Server(f"server-{i}", w) for i, w in enumerate(weights)]


def scenario_fleet(scenario: Scenario) -> tuple[list[Server], Rings]:
    """A scenario's ring servers and, when it describes a `[process]`, the servers of each
    of the process's rings (one per eligibility set that leaves a server on it)."""
    servers = scenario.ring_servers()
    process = scenario.measure.options.get("process")
    if not isinstance(process, ProcessOptions):
        return servers, []
    capabilities = scenario.ring_capabilities()
    rings = [(s, fleet) for s in eligibility_sets(capabilities, process.eligibility)
             if (fleet := servers_with(servers, capabilities, s))]
    return servers, rings


def default_layouts(hash_name: str) -> tuple[str, ...]:
    """The layouts a plan prices when none are named: the smallest and fastest of the width."""
    return PLAN_LAYOUTS if HASHES[hash_name].bits == 32 else ("numpy-packed-64",
                                                               "cffi-packed-64")


def plan_document(servers: Sequence[Server], rings: Rings, target_cv: float | None,
                  target_peak_to_mean: float | None, hash_name: str,
                  layouts: Sequence[str]) -> Report:
    """The plan for the fleet, as a report; for a process, the points that its most
    demanding ring needs, and what every ring then costs."""
    plan = make_plan(servers, target_cv, target_peak_to_mean)
    if rings:
        needed = max(make_plan(fleet, target_cv, target_peak_to_mean).points_per_weight
                     for _, fleet in rings)
        plan = replace(plan, points_per_weight=needed)
    report = plan_report(plan, hash_name, layouts)
    if rings:
        report.sections.append(process_section(plan, rings, layouts))
    return report
