"""Comparison: every algorithm side by side on the same fleets, with the peers beside them.

Configured by a `[comparison]` scenario table (`harness.metrics.comparison.options`).
For each fleet (a server count and a weight pattern repeated over it) and each
algorithm recipe, through the `Algorithm` protocol only, so that any
registered algorithm takes part:

- bytes: allocator bytes held after the build, by memray in a fresh process
  (`harness.metrics.memory`, as the memory metric measures); a ring is
  measured as its layout, from its points, as the memory metric does;
- init time (the build) and resize time (the build for the fleet with one server added,
  the last removed or one in the middle removed, as the movement figures build it),
  the median of `repeats` builds each; scalar and batch ns per key
  (`harness.metrics.throughput`, all recipes and peers of a fleet in the same
  interleaved rounds), and where the algorithm has `route_one` (hash and look
  up one key in one call), that whole route per key;
- load under uniform keys and zipf requests: CV and peak-to-mean
  (`harness.metrics.load`), and the weight-share error, the largest
  |share - weight share| / weight share over servers, from exact shares where
  the algorithm gives them, else from the uniform keys;
- keys moved when a server is added, the last removed, or one in the middle
  removed (`harness.metrics.movement`), against the minimum (the changed
  server's weight share); a removal is measured as the algorithm loses the
  server in place where it says how (`without`: anchor, memento, dx, an
  allocated ring), else by rebuilding from the shorter list.

What an algorithm cannot do is recorded as "not supported" with its reason:
servers it refuses (`check_servers`: weights for jump), a removal it cannot
make (`removal_problem`: jump removes only the last bucket), or a path it
lacks (NotImplementedError). Each recipe's fast paths are checked against
its plain-Python reference on `parity_keys` keys first (a disagreement fails
the run, as everywhere). Peers are built for the same fleet, asked the same
keys, and compared with the recipe they say they route like (`agrees_with`).

Run-wide: measured once per sweep point, independently of the sweep's own recipe.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from harness.core.fields import Fields
from harness.core.servers import Server, fleet_servers
from harness.core.stats import theory_cv
from harness.core.workload import KeysSpec, key_names
from harness.metrics.base import MetricBase, Reference
from harness.metrics.comparison.options import (
    ComparisonOptions,
    FleetSpec,
    RecipeSpec,
    parse_comparison,
    recipe_label,
)
from harness.metrics.comparison.records import (
    Comparison,
    FleetFigures,
    MoveFigure,
    PeerFigures,
    RecipeFigures,
)
from harness.metrics.comparison.tables import comparison_answers, comparison_sections
from harness.metrics.instruments.timing import Timing, measure_throughput
from harness.metrics.load import load_of
from harness.metrics.memory import (
    Memory,
    measure_in_subprocess,
    save_peer_spec,
    save_ring_for_probe,
)
from harness.metrics.movement import measure_movement
from harness.metrics.parity import KeyHashes, check_parity
from harness.recipes.algorithms import get_algorithm
from harness.recipes.peers import PEERS
from harness.recipes.peers.base import Peer, PrehashedPeer

if TYPE_CHECKING:
    from harness.core.model import Result
    from harness.core.tables import Answer, Section
    from harness.metrics.context import RunContext, RunPlan, Scope
    from harness.recipes.algorithms.base import Algorithm

#: keys a memory probe looks up (its lookup peak); a peer loops over fewer, one by one
MEMORY_KEYS = 10_000
PEER_MEMORY_KEYS = 100
#: multinomial draws for the key-noise figures of a perfectly even split
NOISE_DRAWS = 200


def weight_shares(servers: Sequence[Server]) -> npt.NDArray[np.float64]:
    """Each server's fair share: its weight over the fleet's total."""
    weights = np.array([s.weight for s in servers], dtype=np.float64)
    fair: npt.NDArray[np.float64] = weights / weights.sum()
    return fair


def weight_share_error(shares: npt.NDArray[np.float64], servers: Sequence[Server]) -> float:
    """The largest |share - weight share| / weight share over servers."""
    fair = weight_shares(servers)
    return float(np.max(np.abs(shares - fair) / fair))


def noise_figures(servers: Sequence[Server], keys: int, seed: int) -> tuple[float, float]:
    """Median CV and peak-to-mean of load per weight over multinomial draws of `keys` keys
    on exact weight shares: the figures a perfectly even algorithm shows with these keys."""
    weights = np.array([s.weight for s in servers], dtype=np.float64)
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(keys, weight_shares(servers), size=NOISE_DRAWS) / weights
    means = counts.mean(axis=1)
    return (float(np.median(counts.std(axis=1) / means)),
            float(np.median(counts.max(axis=1) / means)))


class _Hashes:
    """The fleet's keys and zipf requests, each hashed once per way of hashing."""

    def __init__(self, keys: list[bytes], requests: list[bytes],
                 first: tuple[int, int] | None = None) -> None:
        self._keys, self._requests = KeyHashes(keys), KeyHashes(requests)
        self._first = first or (len(keys), len(requests))

    def first(self, keys: int, requests: int) -> _Hashes:
        """The same hashes, cut to the first `keys` keys and `requests` requests."""
        cut = _Hashes([], [], (keys, requests))
        cut._keys, cut._requests = self._keys, self._requests
        return cut

    def of(self, algorithm: Algorithm) -> tuple[npt.NDArray[np.unsignedinteger],
                                                npt.NDArray[np.unsignedinteger]]:
        keys, requests = self._first
        return self._keys.of(algorithm)[:keys], self._requests.of(algorithm)[:requests]


def _changes(servers: list[Server], pattern: Sequence[float],
             template: str) -> list[tuple[str, str, list[Server], float]]:
    """(operation, server, servers after, minimal fraction) for the three changes."""
    total = sum(s.weight for s in servers)
    n = len(servers)
    added = Server(template.format(i=n), pattern[n % len(pattern)])
    middle = servers[(n - 1) // 2]
    return [
        ("add", added.name, [*servers, added], added.weight / (total + added.weight)),
        ("remove last", servers[-1].name, servers[:-1], servers[-1].weight / total),
        ("remove middle", middle.name, [s for s in servers if s is not middle],
         middle.weight / total),
    ]


#: bytes per point of a fleet's ring: generation (16), the fastest and the smallest layout
#: (6 + 4), the reference arrays (6) and the arc shares (8), rounded up
COMPARISON_BYTES_PER_POINT = 48
#: bytes per key or request: its encoded name (about 60) and hashes for every key hash (24)
COMPARISON_BYTES_PER_KEY = 100


class ComparisonMetric(MetricBase):
    """Every algorithm recipe and peer, side by side on each fleet."""

    cost_fields: ClassVar[str] = "servers, weights, keys, zipf_requests, zipf_universe, algorithms"

    def estimated_seconds(self, options: Any, servers: Sequence[Server]) -> tuple[float, str]:
        """Each recipe's own work on each fleet (its keys, its parity keys in plain Python),
        and its three moves; and its four builds there, the fleet's and each move's
        (`Algorithm.estimated_build_seconds`)."""
        assert isinstance(options, ComparisonOptions)
        parts: list[tuple[float, str]] = [(0.0, "")]
        for spec in options.fleets:
            fleet = fleet_servers(spec.servers, spec.weights, options.name)
            for recipe in options.recipes:
                # Parity on a sample; the keys, the requests and three moves through
                # the fast path, and the timed batches.
                seconds, why = get_algorithm(recipe.algorithm).estimated_seconds(
                    fleet, recipe.params, reference_keys=spec.parity_keys,
                    fast_keys=4 * spec.keys + spec.zipf_requests
                    + (options.repeats + 1) * min(options.batch_keys, spec.keys),
                    plain_keys=spec.parity_keys)
                built, built_why = get_algorithm(recipe.algorithm).estimated_build_seconds(
                    fleet, recipe.params)
                if 4 * built > seconds:
                    why = f"4 builds, each {built_why}"
                parts.append((seconds + 4 * built, f"{why} (fleet of {spec.servers:,})"))
        return sum(s for s, _ in parts), max(parts)[1]

    def estimated_bytes(self, options: Any, servers: Sequence[Server]) -> float:
        """The largest fleet's ring at 160 points per unit weight, in generation and in its
        two layouts, and every key, request and universe name with their hashes; recipes
        are measured one after the other, so the largest recipe's own structure (twice:
        held, and moved) is added."""
        assert isinstance(options, ComparisonOptions)
        heaviest = max(f.servers * max(f.weights) for f in options.fleets)
        points = 160 * heaviest
        names = options.keys + options.zipf_requests + options.zipf_universe
        # A recipe's own structure, held with the copy a move makes of it: what an anchor
        # of 2,000,000 slots takes (483 MB measured, against 129 MB for the ring alone).
        recipes = max((get_algorithm(recipe.algorithm).estimated_bytes(
            fleet_servers(spec.servers, spec.weights, options.name), recipe.params)
            for spec in options.fleets for recipe in options.recipes), default=0.0)
        return float(COMPARISON_BYTES_PER_POINT * points + COMPARISON_BYTES_PER_KEY * names
                     + 2 * recipes)
    name: ClassVar[str] = "comparison"
    table: ClassVar[str] = "comparison"
    reference: ClassVar[Reference] = Reference(
        tables={
            "comparison": "Every algorithm and peer side by side over generated fleets.",
            "comparison.algorithms[]": "One entry of `comparison.algorithms` given as a table: "
                                       "`name` and that algorithm's parameters.",
            "comparison.fleets[]": "A fleet measured after `servers` x `weights`, with its own "
                                   "keys (at most the table's, whose first ones they are) and "
                                   "peers.",
        },
        # A default recipe is checked as a table of its own.
        aliases={"comparison.algorithms": "comparison.algorithms[]"})
    scope: ClassVar[Scope] = "run"
    needs: ClassVar[frozenset[str]] = frozenset()
    record_type: ClassVar[Any] = Comparison
    #: progress steps: per recipe (build and loads, movement, memory), per peer
    #: (agreement, memory), and per fleet the timing rounds
    RECIPE_STEPS: ClassVar[int] = 3
    PEER_STEPS: ClassVar[int] = 2

    @staticmethod
    def parse_options(table: Fields) -> ComparisonOptions:
        return parse_comparison(table)

    def steps(self, plan: RunPlan) -> int:
        options = plan.options.get(self.name)
        if not isinstance(options, ComparisonOptions):
            return 0
        return sum(len(options.recipes) * self.RECIPE_STEPS + len(f.peers) * self.PEER_STEPS
                   + options.repeats + 1 for f in options.fleets)

    def measure(self, context: RunContext) -> Comparison | None:
        options = context.options.get(self.name)
        if not isinstance(options, ComparisonOptions):
            return None
        context.stage(f"{context.label}: comparison, naming keys")
        keys = [f"key-{i}" for i in range(options.keys)]
        requests = key_names(KeysSpec(
            count=options.zipf_requests, name="key-{i}", distribution="zipf",
            zipf_exponent=options.zipf_exponent, universe=options.zipf_universe,
            seed=options.seed))
        hashes = _Hashes([k.encode() for k in keys], [r.encode() for r in requests])
        return Comparison([self._fleet(context, options, spec, keys, hashes)
                           for spec in options.fleets])

    def _fleet(self, context: RunContext, options: ComparisonOptions, spec: FleetSpec,
               keys: list[str], hashes: _Hashes) -> FleetFigures:
        pattern = spec.weights
        servers = fleet_servers(spec.servers, pattern, options.name)
        noise_cv, noise_peak = noise_figures(servers, spec.keys, options.seed)
        fleet = FleetFigures(spec.servers, list(pattern), spec.keys, spec.zipf_requests,
                             options.zipf_exponent, noise_cv, noise_peak, [], [])
        hashes = hashes.first(spec.keys, spec.zipf_requests)
        keys = keys[:spec.keys]
        where = f"{context.label}: comparison {fleet.label}"
        built: dict[str, Algorithm] = {}
        for recipe in options.recipes:
            context.stage(f"{where}: {recipe.label}")
            figures, algorithm = self._recipe(context, options, recipe, servers, pattern,
                                              hashes, spec.parity_keys)
            fleet.algorithms.append(figures)
            if algorithm is not None:
                built[recipe.label] = algorithm
        peers: dict[str, Peer] = {}
        for name in spec.peers:
            context.stage(f"{where}: peer {name}")
            peer_figures, peer = self._peer(options, name, servers, keys)
            fleet.peers.append(peer_figures)
            if peer is not None:
                peers[name] = peer
            context.advance(1)
        context.stage(f"{where}: timing lookups")
        self._time(context, options, fleet, built, peers, keys, hashes)
        if options.memory:
            self._memory(context, options, fleet, built, servers, keys, hashes)
        else:
            context.advance(len(options.recipes) + len(spec.peers))
        return fleet

    def _recipe(self, context: RunContext, options: ComparisonOptions, recipe: RecipeSpec,
                servers: list[Server], pattern: tuple[float, ...], hashes: _Hashes,
                parity_keys: int) -> tuple[RecipeFigures, Algorithm | None]:

        cls = get_algorithm(recipe.algorithm)
        figures = RecipeFigures(recipe.label, recipe.algorithm, dict(recipe.params))
        problem = cls.check_servers(servers, recipe.params)
        if problem:
            figures.unsupported = f"servers must be {problem}"
            context.advance(self.RECIPE_STEPS)
            return figures, None
        builds = []
        for _ in range(options.repeats):
            started = time.perf_counter()
            algorithm = cls.build(servers, **recipe.params)
            builds.append((time.perf_counter() - started) * 1e3)
        figures.build_ms = Timing.of(builds)
        figures.entries, figures.nbytes = int(algorithm.entries), int(algorithm.nbytes)
        key_hashes, request_hashes = hashes.of(algorithm)
        sample = key_hashes[:parity_keys]
        check_parity(algorithm, sample, {recipe.label: algorithm})
        figures.parity_keys = len(sample)
        owners = algorithm.lookup_many(key_hashes)
        figures.uniform = load_of(owners, servers, "uniform")
        figures.zipf = load_of(algorithm.lookup_many(request_hashes), servers, "zipf")
        exact = algorithm.exact_shares()
        shares = (exact if exact is not None
                  else np.bincount(owners, minlength=len(servers)) / len(owners))
        figures.shares_from = "exact" if exact is not None else "keys"
        figures.weight_share_error = weight_share_error(shares, servers)
        if exact is not None:
            figures.exact_peak_to_mean = float(np.max(exact / weight_shares(servers)))
        construction = algorithm.construction
        if construction is not None:
            figures.cv_theory = theory_cv(construction.point_counts(servers))
        slots = algorithm.slot_counts()
        if slots is not None:
            figures.slot_spread = int(slots.max() - slots.min())
        context.advance(1)
        figures.moves = [self._move(cls, algorithm, recipe, servers, change, key_hashes,
                                    owners, options.repeats)
                         for change in _changes(servers, pattern, options.name)]
        context.advance(1)
        return figures, algorithm

    @staticmethod
    def _move(cls: type[Algorithm], algorithm: Algorithm, recipe: RecipeSpec,
              servers: list[Server], change: tuple[str, str, list[Server], float],
              key_hashes: npt.NDArray[np.unsignedinteger],
              owners: npt.NDArray[np.uint16], repeats: int) -> MoveFigure:
        operation, server, after, minimal = change
        figure = MoveFigure(operation, server, minimal)
        if operation != "add":
            figure.unsupported = cls.removal_problem(servers, server)
        if figure.unsupported is None and (problem := cls.check_servers(after, recipe.params)):
            figure.unsupported = f"servers after it must be {problem}"
        if figure.unsupported is not None:
            return figure
        # An algorithm that says how it loses a server (anchor, memento, dx, an allocated
        # ring) is measured that way, as the movement metric measures it; any other is
        # rebuilt from the list without it.
        names = [s.name for s in servers]
        fallen = algorithm.without(names.index(server)) if operation != "add" else None
        try:
            moved_to = (fallen if fallen is not None
                        else cls.from_params(after, recipe.params)).lookup_many(key_hashes)
        except NotImplementedError as exc:
            figure.unsupported = str(exc) or "the algorithm cannot be rebuilt"
            return figure
        # Resize time: the same path, a removal in place where there is one.
        builds = []
        for _ in range(repeats):
            started = time.perf_counter()
            if fallen is not None:
                algorithm.without(names.index(server))
            else:
                cls.from_params(after, recipe.params)
            builds.append((time.perf_counter() - started) * 1e3)
        figure.resize_ms = Timing.of(builds)
        before_names = tuple(s.name for s in servers)
        after_names = tuple(s.name for s in after)
        figure.movement = measure_movement(
            "add" if operation == "add" else "remove", server, key_hashes,
            owners, moved_to,
            before_names, after_names, None)
        return figure

    @staticmethod
    def _peer(options: ComparisonOptions, name: str, servers: list[Server],
              keys: list[str]) -> tuple[PeerFigures, Peer | None]:
        cls = PEERS[name]
        ours: Algorithm | None = None
        label = None
        if cls.agrees_with is not None:
            params = dict(cls.agrees_with)
            algorithm = get_algorithm(params.pop("algorithm"))
            checked = algorithm.parse_params(Fields(f"peer {name}", "agrees_with", params))
            # The layout does not change owners: the peer matches the recipe in any layout.
            label = recipe_label(algorithm.name, {k: v for k, v in checked.items()
                                                  if k != "layout"})
            if not algorithm.check_servers(servers, checked):
                ours = algorithm.from_params(servers, checked)
        figures = PeerFigures(name, label, cls.exact, cls.agreement_note)
        problem = cls.check_servers(servers)
        if problem:
            figures.unsupported = f"servers must be {problem}"
            return figures, None
        peer = cls.build(servers)
        figures.entries, figures.nbytes = int(peer.entries), int(peer.nbytes)
        if ours is not None:
            asked = keys[:options.peer_keys]
            expected = ours.route([k.encode() for k in asked])
            agree = sum(peer.lookup_key(k) == int(o) for k, o in zip(asked, expected,
                                                                     strict=True))
            figures.agreement, figures.agreement_keys = agree / len(asked), len(asked)
        return figures, peer

    def _time(self, context: RunContext, options: ComparisonOptions, fleet: FleetFigures,
              built: dict[str, Algorithm], peers: dict[str, Peer], keys: list[str],
              hashes: _Hashes) -> None:
        """Every recipe and peer of the fleet in the same interleaved rounds."""
        scalar_names = keys[:options.scalar_keys]
        timed: dict[str, Algorithm] = {}
        loops: dict[str, tuple[Callable[[Any], int], Sequence[Any]]] = {}
        for label, algorithm in built.items():
            key_hashes = hashes.of(algorithm)[0]
            try:
                algorithm.lookup(int(key_hashes[0]))
            except NotImplementedError:
                continue  # no scalar path: its timings stay "not supported"
            timed[label] = algorithm
            route_one = algorithm.route_one
            if route_one is not None:
                loops[f"{label} (route)"] = (route_one, [k.encode() for k in scalar_names])
        peer_names = keys[:options.peer_timing_keys]
        for name, peer in peers.items():
            loops[f"peer {name}"] = (peer.lookup_key, peer_names)
            if isinstance(peer, PrehashedPeer):
                loops[f"peer {name} (call)"] = (peer.lookup_hash,
                                                [peer.hash_key(k) for k in peer_names])
        if not timed and not loops:
            context.advance(options.repeats + 1)
            return
        own = {label: hashes.of(algorithm)[0][:options.batch_keys]
               for label, algorithm in timed.items()}
        first = next(iter(own.values()), np.zeros(1, dtype=np.uint64))
        timings = measure_throughput(
            timed, first, options.repeats, options.scalar_keys, lambda: context.advance(1),
            hashes_by_name=own, loops=loops)
        for figures in fleet.algorithms:
            if figures.label in timings:
                figures.scalar_ns = timings[figures.label]["scalar_ns"]
                figures.batch_ns = timings[figures.label]["batch_ns"]
            route = timings.get(f"{figures.label} (route)")
            figures.route_ns = route["scalar_ns"] if route else None
        for peer_figures in fleet.peers:
            if (own_timing := timings.get(f"peer {peer_figures.name}")) is not None:
                peer_figures.scalar_ns = own_timing["scalar_ns"]
            if (call := timings.get(f"peer {peer_figures.name} (call)")) is not None:
                peer_figures.call_ns = call["scalar_ns"]

    def _memory(self, context: RunContext, options: ComparisonOptions, fleet: FleetFigures,
                built: dict[str, Algorithm], servers: list[Server], keys: list[str],
                hashes: _Hashes) -> None:
        """memray in a fresh process per recipe and per peer, as the memory metric does."""
        workdir = Path(context.workdir)
        server_list = [(s.name, s.weight) for s in servers]
        for figures in fleet.algorithms:
            algorithm = built.get(figures.label)
            if algorithm is not None:
                context.stage(f"{context.label}: comparison {fleet.label}: memory of "
                              f"{figures.label} (fresh process)")
                figures.memory = self._probe(workdir, algorithm, server_list, keys, hashes)
            context.advance(1)
        peer_file = workdir / "comparison-peer.json"
        save_peer_spec(peer_file, server_list, keys[:PEER_MEMORY_KEYS])
        for peer_figures in fleet.peers:
            if peer_figures.unsupported is None:
                context.stage(f"{context.label}: comparison {fleet.label}: memory of peer "
                              f"{peer_figures.name} (fresh process)")
                peer_figures.memory = measure_in_subprocess("peer", peer_figures.name,
                                                            peer_file)
            context.advance(1)

    @staticmethod
    def _probe(workdir: Path, algorithm: Algorithm, servers: list[tuple[str, float]],
               keys: list[str], hashes: _Hashes) -> Memory:
        ring = algorithm.ring
        if ring is not None:
            # A ring is measured as its layout, built from its points (the memory metric's
            # way): the points generation is not the structure routing keeps.
            ring_file = workdir / "comparison-ring.npz"
            save_ring_for_probe(ring_file, ring.positions, ring.owners,
                                hashes.of(algorithm)[0][:MEMORY_KEYS])
            return measure_in_subprocess("layout", algorithm.form, ring_file)
        spec_file = workdir / "comparison-algorithm.json"
        spec_file.write_text(json.dumps({"servers": servers, "params": algorithm.params,
                                         "key_names": keys[:MEMORY_KEYS]}))
        return measure_in_subprocess("algorithm", type(algorithm).name, spec_file)

    def sections(self, result: Result) -> list[Section]:
        return comparison_sections(result, self.name)

    def answers(self, result: Result) -> list[Answer]:
        return comparison_answers(result, self.name)

