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

from harness.core.cost import Cost, largest, total
from harness.core.errors import ScenarioError
from harness.core.machine import available_memory_bytes, resident_bytes
from harness.core.servers import Server, servers_after
from harness.core.workload import KeysSpec
from harness.metrics.base import RunShape
from harness.metrics.clients.metric import CLIENT_NS_PER_KEY, CLIENT_START_S
from harness.metrics.clients.options import ClientsOptions
from harness.metrics.parity import PLAIN_REFERENCE_KEYS
from harness.metrics.registry import get_metric
from harness.recipes.algorithms import get_algorithm
from harness.recipes.algorithms.cost import (
    algorithm_cost,
    entries_of,
    generation_cost,
    ring_cost,
)
from harness.recipes.algorithms.ring import NO_LAYOUT
from harness.recipes.layouts import LAYOUTS
from harness.recipes.layouts.bucketed_tuning import CALIBRATION_SECONDS
from harness.recipes.layouts.costs import layout_cost
from harness.recipes.peers.cost import foreign_cost as peers_foreign_cost
from harness.recipes.peers.cost import peer_cost
from harness.run.scenario import Recipe, Scenario

#: bytes per key beyond its name's characters: the name as a str (49 bytes of header)
#: and as bytes (33), with a list's pointer to each; its hash, owners and reference
#: copies; a hash computed in Python (libketama's MD5: a digest and an int a key, about
#: 130 bytes with their lists); and a list of Python ints (40 bytes an item) that any
#: Python-level lookup makes, whose arenas the allocator keeps. About 240 counted; a
#: fuzzed run of 600,000 keys through libketama and the tuples layout peaked at 252 MiB
BYTES_PER_KEY = 256
#: what a run imports and allocates beyond what loading its scenario did, whatever its
#: size (memray, the renderers, the metrics' modules): 17-22 MiB measured, with margin
RUN_IMPORT_BYTES = 40 * 2**20
#: seconds to start a foreign peer's process or load its library, and build it
FOREIGN_START_S = 2.0


def key_bytes(keys: KeysSpec) -> float:
    """The workload's names and hashes: every key name (the longest one's length, so a
    template such as "{i:>100000}" counts), and for zipf every distinct name plus the
    popularity, draw and permutation arrays over the universe."""
    longest = max(len(keys.name.format(i=keys.count - 1)), len(keys.name.format(i=0)))
    # The name as a str and again encoded to bytes while hashing: twice its length.
    per_name = BYTES_PER_KEY + 2 * longest
    total = per_name * keys.count
    if keys.distribution == "zipf":
        total += keys.universe * (per_name + 3 * 8)
    return float(total)


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
        return LAYOUTS[layout].hash_bits
    return max((LAYOUTS[name].hash_bits for name in scenario.measure.layouts), default=64)


def _point_cost(scenario: Scenario, recipe: Recipe, fleets: list[list[Server]],
                why: str) -> Cost:
    """One sweep point: its ring generated, then released (`then`) for the point held: the
    algorithm in every measured form, the peers, parity's lookup of every key in the costliest
    form, and each metric in turn (`+`: held at once, transients one at a time)."""
    measure, keys = scenario.measure, scenario.keys.count
    entries = entries_of(recipe.algorithm, recipe.params, fleets)
    if "layout" in recipe.params:  # a ring: its arrays, its own layout and the measured ones
        bits = _ring_bits(scenario, recipe)
        arrays = float((bits // 8 + 2) * entries)
        generation = generation_cost(recipe.params, entries)
        forms = ring_cost(recipe.params, entries, bits, measure.layouts)
        costs = tuple(layout_cost(name) for name in measure.layouts)
        form_bytes = 0.0
        reference = forms.held - sum(cost.held_bytes(entries) for cost in costs)
    else:
        bits, arrays, costs, generation = 64, 0.0, (), Cost()
        forms = algorithm_cost(recipe.algorithm, recipe.params, fleets, len(measure.forms))
        reference = form_bytes = forms.held / (1 + len(measure.forms))
    peers = total([peer_cost(name, fleets) for name in measure.peers])
    shape = RunShape(entries=entries, keys=keys, key_hash_bytes=bits // 8,
                     ring_array_bytes=arrays, reference_bytes=reference, layouts=costs,
                     form_bytes=form_bytes, scalar_keys=min(measure.scalar_keys, keys),
                     peer_bytes=max((peer_cost(name, fleets).held for name in measure.peers),
                                    default=0.0),
                     operations=len(scenario.operations), options=measure.options,
                     params=recipe.params)
    metrics = [get_metric(name) for name in
               dict.fromkeys([*measure.metrics, *measure.options])]
    lookup = Cost(peak=shape.largest_lookup_bytes())
    # What the point holds before any metric builds rings of its own: the price of each.
    held = forms + peers + lookup + total([Cost(peak=metric.working(shape).bytes)
                                           for metric in metrics])
    shape = replace(shape, point_bytes=generation.then(held).peak)
    # The forms, peers and working bytes are the ring's size; a table metric's own work
    # names itself when it is the larger part.
    point = replace((forms + peers + lookup).whole(), why=why) + total(
        [metric.cost(shape, scenario.ring_servers()) for metric in metrics])
    return replace(generation, why=why).then(point.whole() if point.why == why else point)


def estimate(scenario: Scenario) -> Estimate:
    """The run's estimated peak over the sweep (operations included), and what sets it:
    what it imports, the keys and the foreign peers' batches held all run, and its sweep
    points one after another (`harness.core.cost`)."""
    return Estimate(resident_bytes(), *_added(run_cost(scenario)))


def _added(cost: Cost) -> tuple[int, str]:
    return int(min(cost.peak, 2.0**62)), cost.why


def run_cost(scenario: Scenario) -> Cost:
    """The run's bytes (beyond this process as it is) as one `Cost`, folded once."""
    servers = scenario.ring_servers()
    fleets = [servers, *(servers_after(servers, op) for op in scenario.operations)]
    ring_why = ("the ring's size (servers' weights, generator.points_per_weight, operations' "
                "weights, measure.layouts)" if scenario.algorithm is None else
                "the algorithm's size (servers, [algorithm]'s parameters)")
    points = largest([_point_cost(scenario, recipe, fleets, ring_why)
                      for recipe in scenario.recipes()])
    keys = Cost(held=key_bytes(scenario.keys), why="keys (count, name, distribution, universe)")
    return (points + keys + foreign_cost(scenario)
            + Cost(held=RUN_IMPORT_BYTES)).whole()


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
        peers, keys, len(scenario.keys.name.format(i=keys - 1)), points,
        "measure.peers (its foreign peers' batches, as many as keys.count)")


def foreign_bytes(scenario: Scenario) -> float:
    """The foreign peers' bytes (`foreign_cost`)."""
    return foreign_cost(scenario).held


def estimate_peak_bytes(scenario: Scenario) -> int:
    """Largest estimated footprint over the sweep, operations included."""
    return estimate(scenario).peak_bytes


def _gib(value: float) -> str:
    return f"{value / 2**30:,.1f} GiB" if value < 2**60 else f"{value / 2**30:.3g} GiB"


@dataclass(frozen=True)
class Afterwards:
    """Work a command does after each run, with the run's result still held: `run`'s
    rewrite of the history's index (`harness.report.history_figures.index_cost`)."""

    bytes: float
    seconds: float
    #: what sets it, as an error names it
    what: str


def check_memory(scenarios: Sequence[Scenario], afterwards: Afterwards | None = None) -> None:
    """Refuse, before any work starts, a scenario whose estimate exceeds available memory
    (with what the command does after the run, `afterwards`, on top)."""
    available = available_memory_bytes()
    for scenario in scenarios:
        # What this process holds already is not available memory's to give again.
        found = estimate(scenario)
        added, culprit = float(found.added_bytes), found.culprit
        if afterwards is not None:
            added += afterwards.bytes
            if afterwards.bytes > found.added_bytes:
                culprit = afterwards.what
        if available is not None and added > available:
            raise ScenarioError(
                f"{scenario.path}: {culprit} must keep the run within this machine's "
                f"available memory of {_gib(available)} (got an estimated peak of "
                f"{_gib(added)} beyond what this process holds)"
            )


#: the time budget of a run when none is given (`--max-minutes`)
DEFAULT_MAX_MINUTES = 10.0


def estimated_seconds(scenario: Scenario) -> tuple[float, str]:
    """The work an algorithm or table metric adds beyond building rings and hashing keys
    (which the memory estimate bounds), over the sweep and its operations, and what sets it:
    the time bombs (a rendezvous of 65,535 servers, a Maglev table of 10**8 slots)."""
    servers = scenario.ring_servers()
    rounds = 1 + len(scenario.operations)
    parts: list[tuple[float, str]] = [(0.0, "")]
    # Keys the table metrics route through the algorithm's reference, priced by it.
    extra = {name: get_metric(name).reference_lookups(options)
             for name, options in scenario.measure.options.items()}
    for recipe in scenario.recipes():
        algorithm = get_algorithm(recipe.algorithm)
        # Parity routes every key through the reference and each form; the throughput
        # rounds time them again; every operation repeats the lot on the changed fleet.
        keys = rounds * scenario.keys.count
        parts.append(algorithm.estimated_seconds(
            servers, recipe.params, reference_keys=keys,
            fast_keys=keys * (2 + scenario.measure.repeats),
            plain_keys=rounds * min(PLAIN_REFERENCE_KEYS, scenario.keys.count)))
        for name, lookups in extra.items():
            if lookups:
                seconds, why = algorithm.estimated_seconds(
                    servers, recipe.params, reference_keys=lookups, fast_keys=0,
                    plain_keys=0)
                parts.append((seconds, f"[{name}]: {lookups:,} objects routed, {why}"
                              if why else ""))
    if "throughput" in scenario.measure.metrics:
        # A tuned layout's calibration before its timing (a cache hit costs nothing).
        tuned = [name for name in scenario.measure.layouts
                 if callable(getattr(LAYOUTS.get(name), "calibrate", None))]
        if tuned:
            parts.append((len(scenario.recipes()) * len(tuned) * CALIBRATION_SECONDS,
                          f"measure.layouts: {', '.join(tuned)} tuned by measurement "
                          "before timing"))
    # A table metric measures every sweep point (its figures are per point), so its own
    # work repeats once per recipe of the sweep.
    points = len(scenario.recipes())
    for name, options in scenario.measure.options.items():
        seconds, why = get_metric(name).estimated_seconds(options, servers)
        parts.append((points * seconds, f"[{name}]: {why}" if why else ""))
    peers = scenario.measure.foreign_peers
    if peers:
        # Per peer and sweep point: the claim check, the timing rounds with our route beside
        # each, the peer's own TIME repeats, the memory probe's routes, and for each
        # operation a route before and after it with the claim checked on the new fleet.
        batches = (2 + 2 * (scenario.measure.repeats + 1) + scenario.measure.repeats + 2
                   + 3 * len(scenario.operations))
        # Each batch costs the peer's declared ns per key (its route, and our reference's
        # beside it in the timing rounds).
        seconds = len(scenario.recipes()) * sum(
            FOREIGN_START_S + batches * scenario.keys.count * peer.ns_per_key * 1e-9
            for peer in peers)
        parts.append((seconds, "measure.peers: its foreign peers, each routing every key of "
                               "keys.count in several batches"))
    parts.append(clients_seconds(scenario))
    total = sum(seconds for seconds, _ in parts)
    culprit = max(parts)[1]
    return total, culprit


def clients_seconds(scenario: Scenario) -> tuple[float, str]:
    """[clients]' share: in each state of each fleet, every client started, built and
    routing every key (a foreign peer at the ns per key it declares) with our recipe's
    route beside it; then each peer's speed rounds on the first fleet; at each sweep point."""
    options = scenario.measure.options.get("clients")
    if not isinstance(options, ClientsOptions):
        return 0.0, ""
    own = {name: float(CLIENT_NS_PER_KEY) for name in scenario.measure.peers}
    own |= {spec.name: spec.ns_per_key for spec in scenario.measure.foreign_peers}
    recipes = {recipe.name: 0.0 for recipe in options.recipes}
    keys = scenario.keys.count

    def route(name: str) -> float:
        # The client's route, and our recipe's beside it (priced as a Python peer's, at most).
        return CLIENT_START_S + keys * ((own | recipes)[name] + CLIENT_NS_PER_KEY) * 1e-9

    seconds = sum(len(fleet.states()) * route(name) for fleet in options.fleets
                  for name in (fleet.clients or [*own, *recipes]))
    # The speed rounds: the client, our route and our lookup, after one warm-up round.
    seconds += sum((scenario.measure.repeats + 1) * route(name) for name in own)
    # Like every table metric, measured again at each sweep point.
    return (len(scenario.recipes()) * seconds,
            "[clients]: every client routing every key in each state of each fleet")


def check_time(scenarios: Sequence[Scenario], max_minutes: float,
               afterwards: Afterwards | None = None) -> None:
    """Refuse, before any work starts, a scenario whose own work (and what the command does
    after it, `afterwards`) would outlast the budget."""
    for scenario in scenarios:
        seconds, culprit = estimated_seconds(scenario)
        if afterwards is not None:
            if afterwards.seconds > seconds:
                culprit = afterwards.what
            seconds += afterwards.seconds
        if seconds > 60 * max_minutes:
            raise ScenarioError(
                f"{scenario.path}: the run must fit the time budget of --max-minutes "
                f"{max_minutes:g} (got an estimated {seconds / 60:,.0f} minutes: {culprit}); "
                "expected fewer servers, keys or slots, or a larger --max-minutes")
