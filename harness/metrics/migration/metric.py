"""Migration: changing the recipe (fewer points, another hash, another layout) changes
owners; a staged rollout spreads the cache misses that causes.

Moved keys. Over the object universe, the fraction whose owner differs
between the old and the new recipe (`moved_fraction`), and the fraction of
requests in a zipf stream (`moved_requests_fraction`, popular objects
weigh more). With points named `server:j`, a ring of k' < k points per
server is a subset of the k ring, so a key keeps its server only when its
successor point survives, or by chance: (1 - k'/k)(1 - 1/N) move, given
beside the measured figure when the recipes are so related.

Staged rollout. Each request picks the old or the new ring stably by its
object's own hash (FNV-1a + fmix32 of "rollout:" and the name, a hash no
ring uses): below the stage's share of the hash space it goes to the new
ring. Every server is an LRU cache of `cache_objects` objects
(`harness.core.cache_model`, in C), whichever ring sent the request; a miss is
a fetch from the origin. One zipf stream is replayed three ways after the
same warm-up on the old ring: with no migration (the steady state), with
the new ring at once, and through the stages. Origin load is the miss rate
per window of requests; the figures are each stage's extra misses against
the steady state, and the peak window of the staged and the all-at-once
switch. Both rings are resident during the rollout, so its memory is their sum.

Switching clients. Either side may be a peer the scenario measures (`from = { peer =
NAME }`, `to = { peer = NAME }`; `harness.metrics.migration.sides`): a client library
routes the same universe (through ROUTE, batched, for a foreign peer) and the same code
takes its owners, so moving a service from one client to another is measured as a change
of recipe is. With `from` a peer and `to` left out, the service moves to the scenario's
own recipe.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from harness.core import charts
from harness.core.cache_model import lru_misses
from harness.core.cost import Cost
from harness.core.errors import ScenarioError
from harness.core.fields import Fields
from harness.core.hashing import hash_many
from harness.core.native.lru import lru_workspace_bytes
from harness.core.servers import Server, eligibility_sets, servers_with
from harness.core.stats import per_weight
from harness.core.tables import (
    Answer,
    Cell,
    Section,
    Table,
    count,
    kib,
    literal,
    number,
    pct,
    text,
)
from harness.metrics.base import (
    NOTHING_MORE,
    MetricBase,
    Reference,
    RunShape,
    ScenarioView,
    Working,
    answered_runs,
)
from harness.metrics.migration.sides import (
    Side,
    SortedKeys,
    parse_sides,
    peer_side,
    recipe_label,
    recipe_side,
    target_params,
)
from harness.metrics.process import FLEET_BYTES_PER_POINT, ProcessOptions
from harness.recipes.algorithms import ALGORITHMS, get_algorithm
from harness.recipes.algorithms.cost import recipe_cost
from harness.recipes.changes import changed_params
from harness.recipes.constructions.points import public_params
from harness.recipes.peers import PEERS
from harness.recipes.peers.owners import BATCH_KEYS

if TYPE_CHECKING:
    from harness.core.model import Result, Run
    from harness.metrics.context import RunContext, RunPlan, Scope
    from harness.recipes.algorithms.base import Algorithm

#: windows per stage when looking for the peak origin rate
WINDOWS_PER_STAGE = 10


@dataclass(frozen=True)
class MigrationOptions:
    #: the new recipe: ring parameters replacing the old recipe's; or {"peer": name}, a
    #: peer of the run; or {} (with `from_peer`): the scenario's own recipe
    to: dict[str, Any]
    #: the new recipe's share of the request-hash space at each stage (rising to 1)
    stages: tuple[float, ...] = (0.01, 0.05, 0.25, 0.5, 1.0)
    #: objects each server's LRU cache holds
    cache_objects: int = 10_000
    #: distinct objects requests are drawn from, and the zipf exponent of their popularity
    universe: int = 1_000_000
    zipf_exponent: float = 1.0
    requests_per_stage: int = 1_000_000
    warmup_requests: int = 2_000_000
    seed: int = 1
    #: the peer the migration starts from (None: the scenario's recipe)
    from_peer: str | None = None

    @property
    def to_peer(self) -> str | None:
        """The peer the migration goes to (None: a recipe)."""
        peer = self.to.get("peer")
        return peer if isinstance(peer, str) else None

    @property
    def peer_sides(self) -> int:
        return (self.from_peer is not None) + (self.to_peer is not None)


@dataclass
class Stage:
    share: float
    requests: int
    misses: int
    steady_misses: int
    extra_misses: int
    #: misses per request in this stage's busiest window
    peak_window_rate: float
    #: the same requests' extra misses when the new ring took all of them at once (None in
    #: results written before it was recorded)
    all_at_once_extra_misses: int | None = None


@dataclass
class RingMigration:
    """One ring of a process, migrated: what moves and what it costs."""
    requires: list[str]
    servers: int
    moved_fraction: float
    moved_requests_fraction: float
    bytes_before: int
    bytes_after: int


@dataclass
class Migration:
    to: dict[str, Any]
    to_label: str
    servers: int
    objects: int
    moved_fraction: float
    moved_requests_fraction: float
    #: (1 - k'/k)(1 - 1/N) when the new ring's points are a subset of the old's
    formula_moved_fraction: float | None
    #: None: a peer that does not say (then bytes_during is the sum of those known)
    bytes_before: int | None
    bytes_after: int | None
    bytes_during: int
    cache_objects: int
    window: int
    steady_miss_rate: float
    all_at_once_peak_rate: float
    staged_peak_rate: float
    stages: list[Stage]
    #: (series, window index, miss rate) for the origin-load chart
    timeline: list[tuple[str, int, float]]
    #: with [process]: every ring of the process migrated (the rollout above is replayed
    #: on the ring of all servers)
    rings: list[RingMigration] | None = None
    #: the physical form (the ring's layout, or the algorithm) each byte figure counts
    #: (None in results written before it was recorded)
    form_before: str | None = None
    form_after: str | None = None
    #: each ring's balance from its exact shares per unit weight: CV and peak-to-mean
    #: (None where the algorithm gives no exact shares, or in older results)
    cv_arcs_before: float | None = None
    cv_arcs_after: float | None = None
    peak_to_mean_before: float | None = None
    peak_to_mean_after: float | None = None
    #: the side it starts from, where that is not the run's recipe: "peer NAME" (None: the
    #: run's recipe, and in results written before peers could be a side)
    from_label: str | None = None
    #: seconds the migration took, wall and CPU over every thread, its process's rings
    #: included (None in results written before they were recorded)
    wall_s: float | None = None
    cpu_s: float | None = None


def _subset_formula(old: dict[str, Any], new: dict[str, Any], servers: int) -> float | None:
    same = all(old.get(k) == new.get(k) for k in ("construction", "hash", "point_name"))
    if not same or old.get("construction") != "points":
        return None
    k, k2 = old["points_per_weight"], new["points_per_weight"]
    if k2 > k:
        return None
    return float((1 - k2 / k) * (1 - 1 / servers))


def exact_balance(algorithm: Algorithm | None) -> tuple[float | None, float | None]:
    """(cv_arcs, peak-to-mean) of the algorithm's exact shares per unit weight (none for a
    peer, which gives no shares)."""
    if algorithm is None:
        return None, None
    shares = algorithm.exact_shares()
    if shares is None:
        return None, None
    spread = per_weight(shares, [s.weight for s in algorithm.servers])
    return spread.cv, spread.peak_to_mean


def zipf_stream(universe: int, exponent: float, size: int, seed: int) -> npt.NDArray[np.uint32]:
    """Object ids of `size` requests, popularity rank**-exponent, ranks shuffled over ids."""
    rng = np.random.default_rng(seed)
    popularity = np.arange(1, universe + 1, dtype=np.float64) ** -exponent
    cumulative = np.cumsum(popularity)
    ranks = np.searchsorted(cumulative, rng.random(size) * cumulative[-1], side="right")
    ranks = np.minimum(ranks, universe - 1)
    ids: npt.NDArray[np.uint32] = rng.permutation(universe).astype(np.uint32)[ranks]
    return ids


def same_key_hash(old: Algorithm, new: Algorithm) -> bool:
    """Whether both recipes hash keys alike: rings of one construction, hash and key."""
    if old.construction is None or new.construction is None:
        return False
    return all(old.params.get(k) == new.params.get(k)
               for k in ("construction", "hash", "hash_key"))


def _window_rates(misses: npt.NDArray[np.bool_], window: int) -> npt.NDArray[np.float64]:
    usable = len(misses) // window * window
    rates: npt.NDArray[np.float64] = misses[:usable].reshape(-1, window).mean(axis=1)
    return rates


#: bytes per object of the universe: its name as a str and as bytes with a list's pointer
#: to each (about 120), three hashes or shares (24), two owners (4), what numpy's fancy
#: indexing copies on the way (about 40), and the Python ints and lists of hashing that
#: the allocator's arenas keep: a fuzzed run over a universe of 2,000,000 peaked 42 MiB
#: above an estimate made with 150
MIGRATION_BYTES_PER_OBJECT = 250
#: bytes per request: the drawn object (8), three owner streams (6), three miss flags (3),
#: and one int64 temporary of the staged selection (8), rounded up
MIGRATION_BYTES_PER_REQUEST = 32
#: a peer side, per object: a registry peer's int64 answers and their uint16 copy (10), a
#: foreign peer's owners (2) and their copy mapped by server name (2), rounded up
PEER_SIDE_BYTES_PER_OBJECT = 16
#: a peer side, per key of one batch: the name packed (15 to 30 bytes) with its offset (8),
#: the encoded request (as much again), the reply and its owners (4), a peer given hashes
#: its recipe's hash (8) and the Python temporaries of hashing them (about 130)
PEER_SIDE_BYTES_PER_BATCH_KEY = 256
#: ns per object a peer side takes to route the universe, the slowest shipped peer with
#: margin: npm hashring through the pipe took about 15,000 on a busy 2-core machine (the
#: plain Python example peer about 3,000, uhashring asked key by key as much, the C
#: library under 1,000)
PEER_SIDE_NS_PER_OBJECT = 20_000
#: ns the replay takes a request (the zipf stream drawn, each request's owner before and
#: after, three replays through the C LRU model) and an object (its name formatted, hashed
#: for the rollout and by each side's recipe, sorted and routed by a ring's reference):
#: 130 and 625 measured by benchmarks/run_rates.py (4,000,000 requests over 100 servers of
#: 5,000 objects, 1,000,000 objects; 2026-12-05, load average 0.7 to 2.6, best of 2), in
#: line with the 4.4 to 4.8 CPU seconds the committed migration-120, tutorial-migration
#: and migration-100k-to-10k record for 20,000,000 requests; priced with a margin of 1.5
REPLAY_NS_PER_REQUEST = 200
REPLAY_NS_PER_OBJECT = 1_000


def _check_migration_peers(scenario: ScenarioView, options: MigrationOptions,
                           top: Fields) -> None:
    """A side that is a peer names one the run builds (listed in measure.peers, where its
    servers were checked), on the scenario's servers only (not a process's rings)."""
    listed = [*scenario.measure.peers, *(spec.name for spec in scenario.measure.foreign_peers)]
    for side, name in (("from", options.from_peer), ("to", options.to_peer)):
        if name is None:
            continue
        where = f"migration.{side}.peer"
        if name not in listed:
            shown = ", ".join(repr(n) for n in listed) or "none listed"
            what = ("a registry peer not listed there: add it to measure.peers"
                    if name in PEERS else "which names no peer of the run")
            raise ScenarioError(f"{top.file}: {where} must be the name of a peer listed in "
                                f"measure.peers ({shown}) (got {name!r}, {what})")
        if "process" in scenario.measure.options:
            raise ScenarioError(f"{top.file}: {where} must be left out with [process]: a "
                                "peer is built for the scenario's servers, not for each ring "
                                f"of the process (got {name!r})")


def _check_new_recipe(scenario: ScenarioView, options: MigrationOptions, top: Fields) -> None:
    """`to` is a recipe each sweep point can change to: an algorithm this metric can
    measure, its parameters valid, on the scenario's servers."""
    target = options.to.get("algorithm", None)
    if target is not None and (not isinstance(target, str) or target not in ALGORITHMS):
        raise ScenarioError(f"{top.file}: migration.to.algorithm must be one of "
                            f"{', '.join(repr(n) for n in ALGORITHMS)} (got {target!r})")
    for recipe in scenario.recipes():
        other = target is not None and target != recipe.algorithm
        name, merged = changed_params(recipe.algorithm, recipe.params, options.to)
        fields = Fields(top.file, "migration.to", merged)
        algorithm = get_algorithm(name)
        reason = algorithm.metric_problem("migration") if other else None
        if reason:
            raise ScenarioError(f"{top.file}: migration.to.algorithm must be an algorithm "
                                f"the migration metric can measure (got {algorithm.name!r}: "
                                f"{reason})")
        checked = algorithm.parse_params(fields)
        fields.finish()
        problem = algorithm.check_servers(scenario.ring_servers(), checked)
        if problem:
            raise ScenarioError(f"{top.file}: migration.to needs servers that are "
                                f"{problem}")


def new_recipe(shape: RunShape, options: MigrationOptions) -> tuple[str, dict[str, Any]] | None:
    """The recipe `to` builds beside the run's, as (algorithm, parameters), where the
    estimate cannot scale it from the run's ring: another algorithm, one without a ring,
    or a ring changed in more than its points per unit weight. None: no recipe (a peer, or
    the scenario's own), or the run's ring with other points per unit weight."""
    if options.to_peer is not None or not options.to or not shape.algorithm:
        return None
    name, params = changed_params(shape.algorithm, shape.params, options.to)
    rescaled = set(options.to) <= {"points_per_weight"} and "layout" in shape.params
    return None if name == shape.algorithm and rescaled else (name, params)


class MigrationMetric(MetricBase):
    """Keys and requests moved by a change of recipe, and the origin load of rolling it out."""

    cost_fields: ClassVar[str] = ("universe, requests_per_stage, warmup_requests, stages, "
                                  "cache_objects, from, to")

    def estimated_bytes(self, options: Any, servers: Sequence[Server]) -> float:
        """Each object of the universe is named, hashed and owned twice (old and new ring)
        with its rollout selector; each request is a drawn object, three owner streams and
        three miss flags; the LRU replay adds its caches for every server. A peer side
        holds its answers over the universe and one batch of its requests."""
        assert isinstance(options, MigrationOptions)
        requests = options.warmup_requests + len(options.stages) * options.requests_per_stage
        peers = options.peer_sides * (PEER_SIDE_BYTES_PER_OBJECT * options.universe
                                      + PEER_SIDE_BYTES_PER_BATCH_KEY
                                      * min(BATCH_KEYS, options.universe))
        return (MIGRATION_BYTES_PER_OBJECT * options.universe
                + MIGRATION_BYTES_PER_REQUEST * requests
                + lru_workspace_bytes(len(servers), options.cache_objects) + peers)

    def estimated_seconds(self, options: Any, servers: Sequence[Server]) -> tuple[float, str]:
        """A peer side routes every object of the universe through the peer (its library's
        call, or batches through the pipe); a recipe side is priced with the run's keys; and
        the replay of every request and the objects' names and routes."""
        assert isinstance(options, MigrationOptions)
        requests = options.warmup_requests + len(options.stages) * options.requests_per_stage
        replay = (requests * REPLAY_NS_PER_REQUEST
                  + options.universe * REPLAY_NS_PER_OBJECT) * 1e-9
        peers = options.peer_sides * options.universe * PEER_SIDE_NS_PER_OBJECT * 1e-9
        if peers > replay:
            return replay + peers, (f"the peer side routes each of universe = "
                                    f"{options.universe:,} objects")
        return replay + peers, (f"{requests:,} requests replayed three ways over universe = "
                                f"{options.universe:,} objects (warmup_requests, stages, "
                                "requests_per_stage)")

    def working(self, shape: RunShape) -> Working:
        """The new recipe's ring of all servers, held throughout; with [process], each ring
        of the process in both recipes at once, and both fleets' points they are filtered
        from (packed words). The new ring is sized from the old as their points per unit
        weight go (the same where `to` leaves them, or names another algorithm)."""
        options = shape.options.get(self.name)
        if not isinstance(options, MigrationOptions):
            return NOTHING_MORE
        if new_recipe(shape, options) is not None:  # priced by its own figures (`cost`)
            return NOTHING_MORE
        scale = _scale(shape, options)
        new_ring = scale * shape.reference_bytes
        if not isinstance(shape.options.get("process"), ProcessOptions):
            return Working(new_ring)
        fleets = FLEET_BYTES_PER_POINT * shape.entries * (1 + scale)
        return Working(float(fleets + shape.reference_bytes + 2 * new_ring))

    def cost(self, shape: RunShape, servers: Sequence[Server],
             working: Working | None = None) -> Cost:
        """The metric's own work, the run's ring re-pointed built once (its build's seconds
        scaled as its points per weight go), or a new recipe that is not the run's ring
        (`new_recipe`), priced by its algorithm on its own parameters (`recipe_cost`: a
        Maglev table of 400,000,009 slots, a DxHash of 2e8), held while the metric works,
        with the seconds of routing the universe through it."""
        own = super().cost(shape, servers, working)
        options = shape.options.get(self.name)
        recipe = (new_recipe(shape, options) if isinstance(options, MigrationOptions)
                  and servers else None)
        if not isinstance(options, MigrationOptions):
            return own
        if recipe is None:  # the run's ring re-pointed (or a peer): built once, as it grows
            rebuilt = 0.0 if "peer" in options.to else _scale(shape, options) * shape.build_seconds
            return own + Cost(seconds=rebuilt, why_seconds=(
                f"[{self.name}]: migration.to's ring built, {shape.build_why}"
                if rebuilt else ""))
        name, params = recipe
        # routed by its reference (`sides.SortedKeys.owners`), which it holds too
        built = recipe_cost(name, params, [servers], keys=options.universe, builds=1,
                            why=f"migration.to ({name} and its parameters)",
                            references=True)
        return (replace(built, held=built.peak) + own).passing()

    @staticmethod
    def parse_options(table: Fields) -> MigrationOptions:
        """`[migration]`: `from` and `to` (`parse_sides`: the new recipe's parameters, checked
        by the scenario against the algorithm, or a peer), stages, cache_objects, universe,
        zipf_exponent, requests_per_stage, warmup_requests, seed."""
        from_peer, to = parse_sides(table)
        expected = "rising shares in (0, 1] ending at 1, such as [0.01, 0.1, 0.5, 1]"
        stages = table.take_raw("stages", list(MigrationOptions.stages), expected=expected)
        if (not isinstance(stages, list) or not stages
                or not all(isinstance(s, int | float) and not isinstance(s, bool)
                           and 0 < s <= 1 for s in stages)
                or any(b <= a for a, b in itertools.pairwise(stages)) or stages[-1] != 1):
            raise table.error("stages", expected, stages)
        options = MigrationOptions(
            to=dict(to), stages=tuple(float(s) for s in stages),
            cache_objects=table.take_int("cache_objects", 10_000, minimum=1, maximum=10**8),
            universe=table.take_int("universe", 1_000_000, minimum=1, maximum=10**8),
            zipf_exponent=table.take_number("zipf_exponent", 1.0),
            requests_per_stage=table.take_int("requests_per_stage", 1_000_000,
                                              minimum=WINDOWS_PER_STAGE, maximum=10**8),
            warmup_requests=table.take_int("warmup_requests", 2_000_000, minimum=0,
                                           maximum=10**9),
            seed=table.take_int("seed", 1, minimum=0), from_peer=from_peer,
        )
        table.finish()
        return options

    name: ClassVar[str] = "migration"
    table: ClassVar[str] = "migration"
    reference: ClassVar[Reference] = Reference(
        tables={
            "migration": "A change of recipe, rolled out in stages through LRU caches.",
            "migration.from": "The side a migration starts from when it is a peer (switching "
                              "clients); left out, the scenario's recipe.",
        },
        free_form={
            "migration.to": "the new recipe's parameters: any key of `[generator]` (or of "
                            "`[algorithm]`, with `algorithm` naming another one); or `peer` "
                            "alone, naming a peer of `measure.peers` (switching clients)",
        },
        # Switching from one client to another, both registry peers.
        specimens=("""
            [servers]
            count = 3
            name = "10.0.{i}.1:11211"
            [generator]
            construction = "libketama"
            [measure]
            metrics = ["balance"]
            peers = ["uhashring-ketama", "hashring"]
            [migration]
            from = { peer = "uhashring-ketama" }
            to = { peer = "hashring" }
            """,))
    scope: ClassVar[Scope] = "run"
    needs: ClassVar[frozenset[str]] = frozenset()
    record_type: ClassVar[Any] = Migration

    def check_scenario(self, scenario: ScenarioView, options: Any, top: Fields) -> None:
        """Each side is a peer the run builds, or a recipe the sweep can change to."""
        _check_migration_peers(scenario, options, top)
        if options.to_peer is None and options.to:
            _check_new_recipe(scenario, options, top)

    def steps(self, plan: RunPlan) -> int:
        return 1

    def measure(self, context: RunContext) -> Migration | None:
        options = context.options.get(self.name)
        if not isinstance(options, MigrationOptions):
            return None
        started, cpu_started = time.perf_counter(), time.process_time()
        if (options.from_peer is None and options.to_peer is None and options.to
                and target_params(context.algorithm, options.to) == context.algorithm.params):
            return None  # a sweep point already at the new recipe has nothing to migrate
        names = [f"object-{i}".encode() for i in range(options.universe)]
        old_side, new_side, new_params = self._sides(context, options, names)
        owner_old, owner_new = old_side.owners, new_side.owners
        moved = owner_old != owner_new
        selector = hash_many("fnv1a-fmix32", [b"rollout:" + n for n in names]) / 2.0**32
        stages = options.stages
        total = options.warmup_requests + len(stages) * options.requests_per_stage
        context.stage(f"{context.label}: migration, replaying {total:,} requests three ways")
        stream = zipf_stream(options.universe, options.zipf_exponent, total, options.seed)
        warm, per = options.warmup_requests, options.requests_per_stage
        steady_servers = owner_old[stream]
        at_once = steady_servers.copy()
        at_once[warm:] = owner_new[stream[warm:]]
        staged = steady_servers.copy()
        for i, share in enumerate(stages):
            span = slice(warm + i * per, warm + (i + 1) * per)
            keys = stream[span]
            staged[span] = np.where(selector[keys] < share, owner_new[keys], owner_old[keys])
        n = len(context.servers)
        steady_miss = lru_misses(steady_servers, stream, n, options.cache_objects)
        once_miss = lru_misses(at_once, stream, n, options.cache_objects)
        staged_miss = lru_misses(staged, stream, n, options.cache_objects)
        window = max(1, per // WINDOWS_PER_STAGE)
        after = slice(warm, total)
        records = []
        for i, share in enumerate(stages):
            span = slice(warm + i * per, warm + (i + 1) * per)
            misses, steady = int(staged_miss[span].sum()), int(steady_miss[span].sum())
            records.append(Stage(share, per, misses, steady, misses - steady,
                                 float(_window_rates(staged_miss[span], window).max()),
                                 int(once_miss[span].sum()) - steady))
        rates = {series: _window_rates(misses[after], window) for series, misses in
                 (("no migration", steady_miss), ("all at once", once_miss),
                  ("staged", staged_miss))}
        rings = (self._process_rings(context, new_params, stream, names)
                 if new_params is not None and old_side.algorithm is not None else None)
        del names
        cv_before, peak_before = exact_balance(old_side.algorithm)
        cv_after, peak_after = exact_balance(new_side.algorithm)
        context.advance(1)
        return Migration(
            to=public_params(dict(options.to)), to_label=new_side.label,
            servers=n, objects=options.universe,
            moved_fraction=float(moved.mean()),
            moved_requests_fraction=float(moved[stream].mean()),
            formula_moved_fraction=(
                _subset_formula(old_side.algorithm.params, new_side.algorithm.params, n)
                if old_side.algorithm is not None and new_side.algorithm is not None else None),
            bytes_before=old_side.nbytes, bytes_after=new_side.nbytes,
            bytes_during=(old_side.nbytes or 0) + (new_side.nbytes or 0),
            cache_objects=options.cache_objects,
            window=window, steady_miss_rate=float(steady_miss[after].mean()),
            all_at_once_peak_rate=float(rates["all at once"].max()),
            staged_peak_rate=float(rates["staged"].max()), stages=records,
            timeline=[(series, i, float(rate)) for series, values in rates.items()
                      for i, rate in enumerate(values)],
            rings=rings, form_before=old_side.form, form_after=new_side.form,
            cv_arcs_before=cv_before, cv_arcs_after=cv_after,
            peak_to_mean_before=peak_before, peak_to_mean_after=peak_after,
            from_label=old_side.label if old_side.peer is not None else None,
            wall_s=round(time.perf_counter() - started, 2),
            cpu_s=round(time.process_time() - cpu_started, 2),
        )

    @staticmethod
    def _sides(context: RunContext, options: MigrationOptions,
               names: Sequence[bytes]) -> tuple[Side, Side, dict[str, Any] | None]:
        """Both sides with their owners of the universe, and the new recipe's parameters
        when the new side is a recipe built for the migration."""
        scenario: Algorithm = context.algorithm
        if options.from_peer is not None:
            before = peer_side(context, options.from_peer, names)
        else:
            before = recipe_side(scenario, context.label, names)
        if options.to_peer is not None:
            return before, peer_side(context, options.to_peer, names), None
        if not options.to:  # from a peer to the scenario's own recipe
            return before, recipe_side(scenario, context.label, names), None
        context.stage(f"{context.label}: migration, building the new recipe")
        params = target_params(scenario, options.to)
        new = context.build(context.servers, params)
        return before, recipe_side(new, recipe_label(scenario, new), names), params

    @staticmethod
    def _process_rings(context: RunContext, new_params: dict[str, Any],
                       stream: npt.NDArray[np.uint32],
                       names: list[bytes]) -> list[RingMigration] | None:
        """Each ring of the process ([process]) migrated, one at a time: each recipe's rings
        filtered from the fleet's points hashed once (`RunContext.parts`), and the objects
        hashed once for a ring's recipe (its keys' hash is the recipe's, whatever the ring)."""
        options = context.options.get("process")
        if not isinstance(options, ProcessOptions):
            return None
        build_old, build_new = context.parts(None), context.parts(new_params)
        old_keys = SortedKeys.of(context.algorithm, names)
        new_keys: SortedKeys | None = None
        # requests per object: a ring's moved requests without indexing the stream again
        requests = np.bincount(stream, minlength=len(names))
        records = []
        for requires in eligibility_sets(context.capabilities, options.eligibility):
            fleet = servers_with(context.servers, context.capabilities, requires)
            if not fleet:
                continue
            context.stage(f"{context.label}: migration of ring {' + '.join(requires) or 'all'}")
            old, new = build_old(fleet), build_new(fleet)
            if new_keys is None or new.construction is None:  # an algorithm's own hash
                new_keys = old_keys if same_key_hash(old, new) else SortedKeys.of(new, names)
            moved = old_keys.owners(old) != new_keys.owners(new)
            records.append(RingMigration(list(requires), len(fleet), float(moved.mean()),
                                         int(requests[moved].sum()) / len(stream),
                                         int(old.nbytes), int(new.nbytes)))
            del old, new
        return records

    @staticmethod
    def _forms(m: Migration, lead: str = " ") -> str:
        """Which form each byte figure counts: "(cffi-packed)" or "(cffi-packed / jump)"."""
        if m.form_before is None or m.form_after is None:
            return ""
        forms = (m.form_before if m.form_before == m.form_after
                 else f"{m.form_before} / {m.form_after}")
        shown = literal(forms)
        return f"{lead}{shown}" if lead == ", " else f" ({shown})"

    @staticmethod
    def _balance_rows(m: Migration) -> list[list[Cell]]:
        """The old and the new ring's exact balance, where recorded."""
        rows = []
        if m.cv_arcs_before is not None and m.cv_arcs_after is not None:
            rows.append([text("cv_arcs before / after (exact shares per unit weight)"),
                         text(f"{pct(m.cv_arcs_before).text} / {pct(m.cv_arcs_after).text}")])
        if m.peak_to_mean_before is not None and m.peak_to_mean_after is not None:
            rows.append([text("peak-to-mean before / after (exact shares per unit weight)"),
                         text(f"{number(m.peak_to_mean_before).text} / "
                              f"{number(m.peak_to_mean_after).text}")])
        return rows

    @staticmethod
    def _title(run: Run, m: Migration) -> str:
        return f"Migration ({literal(m.from_label or run.label)} to {literal(m.to_label)})"

    def answers(self, result: Result) -> list[Answer]:
        """Per sweep point: keys moved against the formula; the peak origin rate staged and
        all at once; the extra origin fetches of each in total."""
        lines = []
        for run in answered_runs([r for r in result.runs if r.figure(self.name)]):
            m: Migration = run.figure(self.name)
            title, label = self._title(run, m), literal(m.from_label or run.label)
            moved = pct(m.moved_fraction).text
            formula = (f" (the formula: {pct(m.formula_moved_fraction).text})"
                       if m.formula_moved_fraction is not None else "")
            lines.append(Answer(title, f"{label} to {literal(m.to_label)}: {moved} of keys "
                                f"move{formula}.", (moved,) + (
                                    (pct(m.formula_moved_fraction).text,)
                                    if m.formula_moved_fraction is not None else ())))
            if m.bytes_before is not None and m.bytes_after is not None:
                before, after = kib(m.bytes_before).text, kib(m.bytes_after).text
                during = kib(m.bytes_during).text
                lines.append(Answer(title, f"Entries' own bytes{self._forms(m)}: {before} "
                                    f"before, {after} after, {during} during the rollout "
                                    "(both resident).", (before, after, during)))
            staged, once = (number(m.staged_peak_rate, 4).text,
                            number(m.all_at_once_peak_rate, 4).text)
            steady = number(m.steady_miss_rate, 4).text
            lines.append(Answer(title, f"Peak origin rate: {staged} staged, {once} all at "
                                f"once (steady {steady} misses per request).",
                                (staged, once, steady)))
            total, total_once = extra_totals(m)
            spike = biggest_spike(m)
            once_text = count(total_once).text if total_once is not None else "unknown"
            spike_text = (f"; the biggest spike is stage {spike + 1} "
                          f"({_spike_ratio(m.stages[spike])} steady)"
                          if spike is not None else "")
            lines.append(Answer(title, f"Extra origin fetches: {count(total).text} staged, "
                                f"{once_text} all at once{spike_text}.",
                                (count(total).text,) + (
                                    (once_text,) if total_once is not None else ())
                                + ((_spike_ratio(m.stages[spike]),)
                                   if spike is not None else ())))
        return lines

    def sections(self, result: Result) -> list[Section]:
        sections = []
        for run in result.runs:
            m: Migration | None = run.figure(self.name)
            if m is None:
                continue
            source = m.from_label or run.label
            peers = m.from_label is not None or "peer" in m.to
            total, total_once = extra_totals(m)
            spike = biggest_spike(m)
            summary = Table.of(["figure", "value"], [
                [text("from"), text(source)], [text("to"), text(m.to_label)],
                [text("what changes"), text(changes(run.algorithm, run.params, m))],
                [text("keys moved (of the object universe)"), pct(m.moved_fraction)],
                [text("requests moved (zipf traffic)"), pct(m.moved_requests_fraction)],
                [text("formula (1 - k'/k)(1 - 1/N)"),
                 pct(m.formula_moved_fraction) if m.formula_moved_fraction is not None
                 else text("n/a (a peer is one side)" if peers
                           else "n/a (the recipes are not nested)")],
                *self._balance_rows(m),
                [text(f"entries' own bytes before / after{self._forms(m)}"),
                 text(f"{_bytes(m.bytes_before)} / {_bytes(m.bytes_after)}")],
                [text(f"entries' own bytes during (both resident{self._forms(m, ', ')})"),
                 text(f"at least {kib(m.bytes_during).text}")
                 if m.bytes_before is None or m.bytes_after is None else kib(m.bytes_during)],
                [text("steady origin rate (misses per request)"), number(m.steady_miss_rate, 4)],
                [text("peak origin rate, all at once"), number(m.all_at_once_peak_rate, 4)],
                [text("peak origin rate, staged"), number(m.staged_peak_rate, 4)],
                [text("extra origin fetches in total, staged"), count(total)],
                [text("extra origin fetches in total, all at once"),
                 count(total_once) if total_once is not None else text("unknown")],
                *([[text("biggest spike (staged)"),
                    text(f"stage {spike + 1}, {_stage_step(m, spike)}: "
                         f"{_spike_ratio(m.stages[spike])} steady")]]
                  if spike is not None else []),
                *([[text("measured in, s of wall time / of CPU time"),
                    text(f"{m.wall_s:,.1f} / {m.cpu_s:,.1f}")]]
                  if m.wall_s is not None and m.cpu_s is not None else []),
            ], notes=[ENTRY_BYTES_NOTE])
            stages = Table.of(
                ["stage", "new ring's share", "requests", "origin fetches", "steady state",
                 "extra fetches, staged", "extra fetches, all at once", "peak window rate",
                 "peak vs steady"],
                [[count(i + 1), pct(s.share, 1), count(s.requests), count(s.misses),
                  count(s.steady_misses), count(s.extra_misses),
                  count(s.all_at_once_extra_misses)
                  if s.all_at_once_extra_misses is not None else text("unknown"),
                  number(s.peak_window_rate, 4), text(_spike_ratio(s))]
                 for i, s in enumerate(m.stages)],
                notes=[f"{m.servers} servers, each an LRU cache of {m.cache_objects:,} objects; "
                       f"zipf requests over {m.objects:,} objects; windows of "
                       f"{m.window:,} requests. Extra fetches are origin fetches beyond the "
                       "steady state's over the same requests; all at once, the new ring "
                       "takes every request from the first stage on."])
            per_stage = max(1, m.stages[0].requests // m.window) if m.stages else 1
            chart = charts.curves(
                "Origin load per window: staged rollout against switching at once",
                [{"window": w, "series": s, "rate": r} for s, w, r in m.timeline],
                x="window", y="rate", series="series",
                x_title="window of requests (stages marked)",
                y_title="origin fetches per request", log=False,
                marks=[(i * per_stage, f"stage {i + 1}: {100 * s.share:g}%")
                       for i, s in enumerate(m.stages)])
            tables = [summary, stages]
            if m.rings:
                before = sum(r.bytes_before for r in m.rings)
                after = sum(r.bytes_after for r in m.rings)
                tables.append(Table.of(
                    ["ring (requires)", "servers", "keys moved", "requests moved",
                     "entries' own bytes before", "after", "during"],
                    [[text(" + ".join(r.requires) or "(all servers)"), count(r.servers),
                      pct(r.moved_fraction), pct(r.moved_requests_fraction),
                      kib(r.bytes_before), kib(r.bytes_after),
                      kib(r.bytes_before + r.bytes_after)] for r in m.rings]
                    + [[text("process"), text(""), text(""), text(""), kib(before),
                        kib(after), kib(before + after)]],
                    notes=["Every ring of the process migrated to the new recipe; the "
                           "rollout above is replayed on the ring of all servers."
                           + (f" Bytes are of each ring as held{self._forms(m)}."
                              if m.form_before is not None else "")]))
            sections.append(Section(self._title(run, m), tables=tables, charts=[chart]))
        return sections


#: what the Migration table's byte figures are, against the Memory table's
ENTRY_BYTES_NOTE = ("Entries' own bytes: entries x entry size of each side's form, without "
                    "the object's overhead; a Memory table's structure bytes are measured "
                    "from the allocator and are larger by that overhead.")


def extra_totals(m: Migration) -> tuple[int, int | None]:
    """Extra origin fetches over the whole rollout: staged (the sum of its stages) and all
    at once (None where not recorded)."""
    staged = sum(s.extra_misses for s in m.stages)
    once = [s.all_at_once_extra_misses for s in m.stages]
    return staged, (None if any(v is None for v in once)
                    else sum(v for v in once if v is not None))


def biggest_spike(m: Migration) -> int | None:
    """The index of the stage whose busiest window stands highest over the steady state."""
    spikes = [(s.peak_window_rate * s.requests / s.steady_misses, i)
              for i, s in enumerate(m.stages) if s.steady_misses]
    return max(spikes)[1] if spikes else None


def _spike_ratio(s: Stage) -> str:
    return (f"{s.peak_window_rate * s.requests / s.steady_misses:.2f}x"
            if s.steady_misses else "n/a")


def _stage_step(m: Migration, i: int) -> str:
    before = m.stages[i - 1].share if i else 0.0
    return f"{100 * before:g}% -> {100 * m.stages[i].share:g}%"


def changes(algorithm: str, params: dict[str, Any], m: Migration) -> str:
    """Everything the migration changes, old -> new: each parameter `to` sets that differs
    (points, layout, construction, hash, algorithm), and the form holding it."""
    if m.from_label is not None or "peer" in m.to:
        return f"the client: {m.from_label or 'our recipe'} -> {m.to_label}"
    shown = [f"{key} {params.get(key, 'default')} -> {value}" for key, value in m.to.items()
             if key != "algorithm" and params.get(key) != value]
    target = m.to.get("algorithm")
    if isinstance(target, str) and target != algorithm:
        shown.insert(0, f"algorithm {algorithm} -> {target}")
    if m.form_before is not None and m.form_after is not None and (
            m.form_before != m.form_after) and "layout" not in m.to:
        shown.append(f"form {m.form_before} -> {m.form_after}")
    return "; ".join(shown) or "nothing (the same recipe)"


def _bytes(value: int | None) -> str:
    """A side's bytes, or that a peer does not say them (it answers no MEMORY)."""
    return "unknown (the peer does not say)" if value is None else kib(value).text


def _scale(shape: RunShape, options: MigrationOptions) -> float:
    """The new ring's size over the run's: as their points per unit weight go (1 where `to`
    leaves them, or names another algorithm)."""
    old_points, new_points = shape.params.get("points_per_weight"), options.to.get(
        "points_per_weight")
    return (new_points / old_points if isinstance(old_points, int)
            and isinstance(new_points, int) and old_points > 0 else 1.0)
