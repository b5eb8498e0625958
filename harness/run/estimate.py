"""Estimate a scenario's peak memory before running it, to refuse what cannot fit.

The estimate is an upper bound on the run's resident memory: this process as it is
when the estimate is made (measured), and on top of it one `Cost` (`harness.core.cost`)
folded once from each component's own `cost()`, with one rule: bytes held at once add,
and of their transients (the work done beside what is held) only the largest counts,
since the work is done one phase at a time; what is released before the next thing is
made (`then`: a ring's generation before the ring is held; one sweep point before the
next) counts as the larger; seconds always add. So the peak is what the run holds all
along (its imports, the keys, the foreign peers' batches), plus the largest sweep point:
the more costly of generating its ring, or holding its reference, every measured
layout (`LayoutCost.cost`) and peer (`recipes.peers.cost`) with the largest of parity's
lookup, a layout's build and each metric's work (`Metric.cost`: its working bytes, its
table's own work, and the rings it builds beside the run's).

Until this rule, a table metric's work was added on top of the largest other metric's
transient; measured against tests/property/test_estimate_bound.py (30 fuzzed examples, migration
and process tables among them) the maxed rule still bounds every peak, and lowers one
shipped estimate (process-cloudflare-6gb, 3,398 to 2,879 MiB; hostile-keys by 1.6 MiB).

Each layout's bytes come from building it at two small sizes (`harness.recipes.layouts
.costs`), so layouts added later are estimated without a table to maintain.
`tests/property/test_estimate_bound.py` runs fuzzed accepted scenarios and checks the bound
against the measured peak of the whole process tree; tests/unit/test_shipped_estimates.py
holds every shipped scenario's estimate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from harness.core.cost import NOTHING, Cost, largest, total
from harness.core.errors import ScenarioError
from harness.core.machine import available_memory_bytes, resident_bytes
from harness.core.servers import Server, servers_after
from harness.core.workload import key_bytes, key_seconds, key_seconds_why, longest_name
from harness.metrics.base import RunShape
from harness.metrics.clients.metric import clients_cost
from harness.metrics.fleet.metric import WORKER_BYTES
from harness.metrics.parity import PLAIN_REFERENCE_KEYS
from harness.metrics.registry import get_metric
from harness.recipes.algorithms.cost import (
    algorithm_cost,
    build_seconds,
    entries_of,
    generation_cost,
    ring_cost,
    routing_cost,
)
from harness.recipes.algorithms.ring import NO_LAYOUT
from harness.recipes.layouts.costs import build_cost as layout_build_cost
from harness.recipes.layouts.costs import calibration_cost, layout_cost
from harness.recipes.peers.cost import foreign_cost as peers_foreign_cost
from harness.recipes.peers.cost import foreign_routing_cost, peer_cost
from harness.run.scenario import Recipe, Scenario
from harness.run.sweep import sweep_workers, why_in_sequence

#: what a run imports and allocates beyond what loading its scenario did, whatever its
#: size (memray, the renderers, the metrics' modules): 17-22 MiB measured on the default
#: scenario when the estimate became an upper bound, with margin
RUN_IMPORT_BYTES = 40 * 2**20


@dataclass(frozen=True)
class Estimate:
    """A run's estimated peak resident memory, in two parts."""

    #: this process before the run, measured when the estimate is made
    resident_bytes: int
    #: what the run adds to it, its largest helper process included
    added_bytes: int
    #: what the added bytes are mostly made of, named as the fields that set it
    culprit: str

    @property
    def peak_bytes(self) -> int:
        return self.resident_bytes + self.added_bytes


def _ring_bits(scenario: Scenario, recipe: Recipe) -> int:
    layout = recipe.params.get("layout", NO_LAYOUT)
    if layout != NO_LAYOUT:
        return layout_cost(layout).hash_bits
    return max((layout_cost(name).hash_bits for name in scenario.measure.layouts), default=64)


def _point_cost(scenario: Scenario, recipe: Recipe, fleets: list[list[Server]],
                why: str) -> tuple[Cost, list[Cost]]:
    """One sweep point: its ring generated, then released (`then`) for the point held: the
    algorithm in every measured form, the peers, parity's lookup of every key in the costliest
    form, and each metric in turn (`+`: held at once, transients one at a time); with the
    seconds of its lookups (parity's, the timing rounds', a table metric's objects routed by
    the algorithm). Returned apart: each metric's own work here, which every point repeats."""
    measure, keys = scenario.measure, scenario.keys.count
    servers = fleets[0]
    entries = entries_of(recipe.algorithm, recipe.params, fleets)
    # The point's recipe built once (its ring generated and held in its own layout), on
    # its fleet; what a metric rebuilds is priced at the largest fleet's build.
    one_build, build_why = build_seconds(recipe.algorithm, recipe.params, fleets)
    build_why = f"{build_why}, set by {why}"
    built = Cost(seconds=one_build, why_seconds=f"building it: {build_why}")
    if "layout" in recipe.params:  # a ring: its arrays, its own layout and the measured ones
        bits = _ring_bits(scenario, recipe)
        arrays = float((bits // 8 + 2) * entries)
        generation = generation_cost(recipe.params, entries, len(servers), len(fleets))
        forms = ring_cost(recipe.params, entries, bits, measure.layouts)
        costs = tuple(layout_cost(name) for name in measure.layouts)
        form_bytes = 0.0
        reference = forms.held - sum(cost.held_bytes(entries) for cost in costs)
        # Each measured layout but the ring's own is built from the ring's arrays.
        built += layout_build_cost([name for name in measure.layouts
                                    if name != recipe.params["layout"]], entries)
    else:
        bits, arrays, costs, generation = 64, 0.0, (), Cost()
        forms = algorithm_cost(recipe.algorithm, recipe.params, fleets, len(measure.forms))
        reference = form_bytes = forms.held / (1 + len(measure.forms))
    each_peer = [peer_cost(name, fleets) for name in measure.peers]
    peers = total(each_peer)
    shape = RunShape(entries=entries, keys=keys, key_hash_bytes=bits // 8,
                     ring_array_bytes=arrays, reference_bytes=reference, layouts=costs,
                     form_bytes=form_bytes, scalar_keys=min(measure.scalar_keys, keys),
                     peer_bytes=max((peer.held for peer in each_peer), default=0.0),
                     operations=len(scenario.operations), options=measure.options,
                     longest_key_name=longest_name(scenario.keys),
                     params=recipe.params, algorithm=recipe.algorithm,
                     build_seconds=max(build_seconds(recipe.algorithm, recipe.params, [fleet])[0]
                                       for fleet in fleets),
                     build_why=build_why)
    metrics = [get_metric(name) for name in
               dict.fromkeys([*measure.metrics, *measure.options])]
    lookup = Cost(peak=shape.largest_lookup_bytes())
    # What the point holds before any metric builds rings of its own: the price of each.
    workings = [metric.working(shape) for metric in metrics]
    held = forms + peers + lookup + total([Cost(peak=working.bytes) for working in workings])
    shape = replace(shape, point_bytes=generation.then(held).peak)
    metric_costs = [metric.cost(shape, servers, working)
                    for metric, working in zip(metrics, workings, strict=True)]
    # The forms, peers and working bytes are the ring's size; a table metric's own work
    # names itself when it is the larger part.
    point = replace((forms + peers + lookup).whole(), why=why) + total(
        [cost.bytes_only() for cost in metric_costs])
    point = replace(generation, why=why).then(point.whole() if point.why == why else point)
    # Parity routes every key through the reference and each form; the throughput rounds
    # time them again; every operation repeats the lot on the changed fleet.
    rounds = 1 + len(scenario.operations)
    routed = routing_cost(recipe.algorithm, recipe.params, servers,
                          reference_keys=rounds * keys,
                          fast_keys=rounds * keys * (2 + measure.repeats),
                          plain_keys=rounds * min(PLAIN_REFERENCE_KEYS, keys))
    # Keys the table metrics route through the algorithm's reference, priced by it.
    for name, options in measure.options.items():
        lookups = get_metric(name).reference_lookups(options)
        if lookups:
            routed += routing_cost(recipe.algorithm, recipe.params, servers,
                                   reference_keys=lookups, fast_keys=0, plain_keys=0,
                                   label=f"[{name}]: {lookups:,} objects routed, ")
    return point + built.whole() + routed, [cost.seconds_only() for cost in metric_costs]


def estimate(scenario: Scenario, workers: int | None = None) -> Estimate:
    """The run's estimated peak over the sweep (operations included), and what sets it:
    what it imports, the keys and the foreign peers' batches held all run, and its sweep
    points one after another (`harness.core.cost`)."""
    return Estimate(resident_bytes(), *_added(run_cost(scenario, workers)))


def _added(cost: Cost) -> tuple[int, str]:
    return int(min(cost.peak, 2.0**62)), cost.why


def run_cost(scenario: Scenario, workers: int | None = None) -> Cost:
    """The run's bytes (beyond this process as it is) and seconds (its own work beyond
    building rings and hashing keys) as one `Cost`, folded once: its sweep points one after
    another, the work every point repeats (each table metric's own, the tuned layouts'
    calibration, the foreign peers' routes, [clients]' routes), the keys, the foreign
    peers' batches and what the run imports.

    With `workers` (an executor's; None: no executor) and sweep points that are tasks
    (`harness.run.sweep`), as many workers as run at once each hold one point
    (`worker_cost`) beside this process's imports, and the seconds are shared by them (at
    least the longest point's)."""
    parts = _sweep_parts(scenario)
    sequential = (parts.points + parts.repeated + parts.keys + foreign_cost(scenario)
                  + Cost(held=RUN_IMPORT_BYTES)).whole()
    if workers is None or why_in_sequence(scenario) is not None:
        return sequential
    at_once = sweep_workers(scenario, workers)
    worker = _worker_cost(parts)
    longest = (max(point.seconds for point in parts.each) + parts.keys.seconds
               + parts.repeated.seconds / len(parts.each))
    return Cost(held=RUN_IMPORT_BYTES + at_once * worker.peak, why=worker.why,
                seconds=max(sequential.seconds / at_once, longest),
                why_seconds=(f"{sequential.why_seconds}, shared by {at_once} workers"
                             if sequential.why_seconds else ""))


@dataclass(frozen=True)
class _SweepParts:
    #: the largest sweep point, and each one
    points: Cost
    each: list[Cost]
    #: the work every point repeats, over the whole sweep
    repeated: Cost
    #: the keys, named and hashed (a worker does it again for its point)
    keys: Cost


def _sweep_parts(scenario: Scenario) -> _SweepParts:
    servers = scenario.ring_servers()
    fleets = [servers, *(servers_after(servers, op) for op in scenario.operations)]
    ring_why = ("the ring's size (servers' weights, generator.points_per_weight, operations' "
                "weights, measure.layouts)" if scenario.algorithm is None else
                "the algorithm's size (servers, [algorithm]'s parameters)")
    recipes = scenario.recipes()
    found = [_point_cost(scenario, recipe, fleets, ring_why) for recipe in recipes]
    points = largest([point for point, _ in found])
    measure, keys = scenario.measure, scenario.keys.count
    # Per foreign peer and sweep point: the claim check, the timing rounds with our route
    # beside each, the peer's own TIME repeats, the memory probe's routes, and for each
    # operation a route before and after it with the claim checked on the new fleet.
    batches = (2 + 2 * (measure.repeats + 1) + measure.repeats + 2
               + 3 * len(scenario.operations))
    # A table metric measures every sweep point (its figures are per point): its own work,
    # like the calibration, the foreign peers' and the clients', repeats at each.
    repeated = (total([largest(list(work)).whole() for work in zip(*(w for _, w in found),
                                                                   strict=True)])
                + (calibration_cost(measure.layouts) if "throughput" in measure.metrics
                   else NOTHING).repeated(len(recipes))
                + foreign_routing_cost(measure.foreign_peers, keys, batches, fleets
                                       ).repeated(len(recipes))
                + clients_cost(measure.options.get("clients"), measure.peers,
                               measure.foreign_peers, keys, measure.repeats
                               ).repeated(len(recipes)))
    keys_held = Cost(held=key_bytes(scenario.keys),
                     why="keys (count, name, distribution, universe)",
                     seconds=key_seconds(scenario.keys),
                     why_seconds=key_seconds_why(scenario.keys))
    return _SweepParts(points, [point for point, _ in found], repeated, keys_held)


def _worker_cost(parts: _SweepParts) -> Cost:
    """What one worker holds running one sweep point: its interpreter and imports, the keys
    it names, the largest point and the work the point repeats."""
    return (parts.points + parts.repeated.bytes_only() + parts.keys
            + Cost(held=WORKER_BYTES)).whole()


def worker_cost(scenario: Scenario) -> Cost:
    """One worker's share of a run whose sweep points are tasks."""
    return _worker_cost(_sweep_parts(scenario))




def foreign_cost(scenario: Scenario) -> Cost:
    """The foreign peers' share (`recipes.peers.cost.foreign_cost`), at the recipe whose
    structure is largest."""
    peers = scenario.measure.foreign_peers
    if not peers:
        return Cost()
    keys = scenario.keys.count
    points = max(entries_of(recipe.algorithm, recipe.params, [scenario.ring_servers()])
                 for recipe in scenario.recipes())
    return peers_foreign_cost(
        peers, keys, longest_name(scenario.keys), points,
        "measure.peers (its foreign peers' batches, as many as keys.count)")


def estimate_peak_bytes(scenario: Scenario) -> int:
    """Largest estimated footprint over the sweep, operations included."""
    return estimate(scenario).peak_bytes


def estimated_seconds(scenario: Scenario) -> tuple[float, str]:
    """The work the run adds beyond building rings and hashing keys (which the memory
    estimate bounds), over the sweep and its operations, and what sets it (`run_cost`):
    the time bombs (a rendezvous of 65,535 servers, a Maglev table of 10**8 slots)."""
    cost = run_cost(scenario)
    return cost.seconds, cost.why_seconds


def _gib(value: float) -> str:
    return f"{value / 2**30:,.1f} GiB" if value < 2**60 else f"{value / 2**30:.3g} GiB"


def check_memory(scenarios: Sequence[Scenario], command: Cost = NOTHING,
                 workers: int | None = None) -> None:
    """Refuse, before any work starts, a scenario whose estimate exceeds available memory,
    with what the command does beside the run on top (`command`: `run`'s rewrite of the
    history's index, `harness.report.history_figures.index_cost`). With sweep points as
    tasks on `workers`, a point larger than a worker's share is refused, as a fleet's data
    centre is."""
    available = available_memory_bytes()
    for scenario in scenarios:
        at_once = sweep_workers(scenario, workers or 1)
        if available is not None and workers is not None and at_once > 1:
            point = worker_cost(scenario)
            share = available / at_once
            if point.peak > share:
                raise ScenarioError(
                    f"{scenario.path}: a sweep point needs about {point.peak / 2**20:,.0f} "
                    "MiB per task, more than a worker's share of this machine "
                    f"({share / 2**20:,.0f} MiB of {available / 2**20:,.0f} MiB over "
                    f"{at_once} workers): {point.why} must be smaller, or --workers fewer")
        # What this process holds already is not available memory's to give again.
        found = run_cost(scenario, workers) + command
        added = min(found.peak, 2.0**62 + command.peak)
        if available is not None and added > available:
            raise ScenarioError(
                f"{scenario.path}: {found.why} must keep the run within this machine's "
                f"available memory of {_gib(available)} (got an estimated peak of "
                f"{_gib(added)} beyond what this process holds)"
            )


def _minutes(seconds: float) -> str:
    """Minutes as the refusal names them: whole above ten, two figures below (a budget of
    0.05 refused for 0.11 minutes, not for "0")."""
    minutes = seconds / 60
    return f"{minutes:,.0f}" if minutes >= 10 else f"{minutes:.2g}"


#: the time budget of a run when none is given (`--max-minutes`)
DEFAULT_MAX_MINUTES = 10.0


def check_time(scenarios: Sequence[Scenario], max_minutes: float,
               command: Cost = NOTHING, workers: int | None = None) -> None:
    """Refuse, before any work starts, a scenario whose own work (and what the command does
    beside it, `command`) would outlast the budget."""
    for scenario in scenarios:
        found = run_cost(scenario, workers) + command
        if found.seconds > 60 * max_minutes:
            raise ScenarioError(
                f"{scenario.path}: the run must fit the time budget of --max-minutes "
                f"{max_minutes:g} (got an estimated {_minutes(found.seconds)} minutes: "
                f"{found.why_seconds}); expected fewer servers, keys or slots, or a larger "
                "--max-minutes")
