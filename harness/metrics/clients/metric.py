"""Will my clients agree? Every client of a scenario on the same fleets, pair by pair.

`[clients]` (`options`) lists fleets; every client (the scenario's peers, Python
and foreign, and the recipes `[clients]` adds) routes the workload's keys on each fleet as
it is, after a removal and after an addition. For every pair the metric records:

- the **measured** agreement, the share of keys both send to the same server (by name);
- the **causes**: the traits their recipes differ in (`harness.recipes.traits`), from
  the recipe of ours each routes like, a claim checked on every key of every state;
- the **predicted** agreement, from those recipes alone (`harness.core.agreement`): for
  two rings on the same key hash, the exact share of the hash circle where their owners
  match, by merging their points; for routers whose key hashes differ, independence,
  sum of share_a * share_b, each recipe's own shares (a ring's arcs); for routers on the
  same key hash that are not both rings (slots, mod N), the share of 2**20 uniformly
  drawn hashes both route alike.

Per client it records the keys moved on the removal and the addition, and on the first
fleet its speed against our recipe in its fastest form, timed in interleaved rounds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from harness.core.agreement import independent_agreement, key_shares, ring_agreement
from harness.core.cost import Cost, total
from harness.core.errors import ScenarioError
from harness.core.servers import Server
from harness.core.stats import arc_shares
from harness.metrics.base import (
    NOTHING_MORE,
    MetricBase,
    Reference,
    RunShape,
    ScenarioView,
    Working,
)
from harness.metrics.clients.members import (
    Client,
    check_recipe,
    clients_of,
    self_timed,
    timed_rounds,
)
from harness.metrics.clients.options import ClientFleet, ClientsOptions, parse_clients
from harness.metrics.clients.records import (
    ClientMoves,
    ClientsAgreement,
    ClientSpeed,
    FleetAgreement,
    FleetState,
    PairAgreement,
)
from harness.metrics.clients.tables import clients_answers, clients_sections
from harness.metrics.instruments.timing import Timing
from harness.recipes.algorithms import get_algorithm
from harness.recipes.algorithms.base import Algorithm
from harness.recipes.algorithms.cost import recipe_cost
from harness.recipes.peers import PEERS
from harness.recipes.peers.foreign import (
    ForeignPeerSpec,
    LibraryPeer,
    ProcessPeer,
    open_foreign_peer,
)
from harness.recipes.peers.foreign.claims import batch_for
from harness.recipes.traits import causes, recipe_traits

if TYPE_CHECKING:
    from harness.core.fields import Fields
    from harness.core.model import Result
    from harness.core.tables import Answer, Section
    from harness.metrics.context import RunContext, RunPlan, Scope

#: uniform hashes drawn to predict two routers on one key hash that are not both rings
SAMPLED_HASHES = 1 << 20
#: keys compared to decide whether two recipes hash keys alike
KEY_HASH_PROBE = 4096
#: seconds to start a client and build it, at most (a Java process: about 0.5 s here)
CLIENT_START_S = 2.0
#: ns per key we allow a client's route (a Python peer's loop: about 3,000 here)
CLIENT_NS_PER_KEY = 10_000
#: bytes per key and client while a state is measured: its owners, named copies and batch
CLIENT_BYTES_PER_KEY = 240
#: bytes per point we allow a client's own structure (a Python peer's dict entry and int)
CLIENT_BYTES_PER_POINT = 400


def clients_cost(options: Any, peers: Sequence[str], foreign_peers: Sequence[ForeignPeerSpec],
                 keys: int, repeats: int) -> Cost:
    """[clients]' seconds at one sweep point: in each state of each fleet, every client
    started, built and routing every key (a foreign peer at the ns per key it declares)
    with our recipe's route beside it; then each peer's speed rounds on the first fleet."""
    if not isinstance(options, ClientsOptions):
        return Cost()
    own = {name: float(CLIENT_NS_PER_KEY) for name in peers}
    own |= {spec.name: spec.ns_per_key for spec in foreign_peers}
    recipes = {recipe.name: 0.0 for recipe in options.recipes}

    def route(name: str) -> float:
        # The client's route, and our recipe's beside it (priced as a Python peer's, at most).
        # A recipe of ours runs in this process: nothing to start, and its own build and
        # route are priced by its algorithm (`recipes_built`).
        start = 0.0 if name in recipes else CLIENT_START_S
        return start + keys * ((own | recipes)[name] + CLIENT_NS_PER_KEY) * 1e-9

    seconds = sum(len(fleet.states()) * route(name) for fleet in options.fleets
                  for name in (fleet.clients or [*own, *recipes]))
    # The speed rounds: the client, our route and our lookup, after one warm-up round.
    seconds += sum((repeats + 1) * route(name) for name in own)
    clients = Cost(seconds=seconds, why_seconds="[clients]: every client routing every key in "
                                                "each state of each fleet")
    # Held while the matrix works, released before what follows: a transient of the run.
    return clients + total(recipes_built(options, foreign_peers, keys, repeats)).passing()


def recipes_built(options: ClientsOptions, foreign_peers: Sequence[ForeignPeerSpec],
                  keys: int, repeats: int) -> list[Cost]:
    """Each recipe the matrix builds, priced by its algorithm (`recipe_cost`) on every
    state of the fleets it is a client of: `[clients]`' recipes and the recipes foreign
    peers claim exactly. In each state every such recipe is built to route the keys, then
    again as the prediction's recipe, all held at once; on the first fleet once more for
    the speed rounds, which route the keys `repeats + 1` times."""
    built = [(f"clients.recipes ({recipe.name!r}: {recipe.algorithm} and its parameters)",
              recipe.name, recipe.algorithm, recipe.params) for recipe in options.recipes]
    built += [(f"measure.peers ({spec.name!r}: its routes_like, "
               f"{spec.routes_like['algorithm']})", spec.name,
               str(spec.routes_like["algorithm"]), spec.recipe_params)
              for spec in foreign_peers if spec.routes_like is not None and spec.exact]
    costs = []
    for why, name, algorithm, params in built:
        states = [servers for fleet in options.fleets
                  if fleet.clients is None or name in fleet.clients
                  for _, servers in fleet.states()]
        if states:
            costs.append(recipe_cost(algorithm, params, states, keys=keys,
                                     builds=2 * len(states) + repeats + 2, why=why))
    return costs


def _names(servers: Sequence[Server]) -> list[str]:
    return [s.name for s in servers]


def _same_key_hash(a: Algorithm, b: Algorithm, keys: Sequence[bytes]) -> bool:
    probe = keys[:KEY_HASH_PROBE]
    return a.key_bits == b.key_bits and bool(np.array_equal(
        np.asarray(a.hash_keys(probe), np.uint64), np.asarray(b.hash_keys(probe), np.uint64)))


def _shares(recipe: Algorithm, servers: Sequence[Server],
            owners: npt.NDArray[np.uint16]) -> dict[str, float]:
    """A recipe's own share of each server: a ring's arcs, else its share of the keys."""
    if recipe.ring is not None:
        return dict(zip(_names(servers), arc_shares(recipe.ring, len(servers)).tolist(),
                        strict=True))
    return key_shares(owners, _names(servers))


def predict(a: Algorithm, b: Algorithm, servers: Sequence[Server], keys: Sequence[bytes],
            owners_a: npt.NDArray[np.uint16],
            owners_b: npt.NDArray[np.uint16]) -> tuple[float, str]:
    """Predicted agreement of two recipes on the servers, and how it was worked out."""
    names = _names(servers)
    if _same_key_hash(a, b, keys):
        if a.ring is not None and b.ring is not None:
            return ring_agreement(a.ring, names, b.ring, names), "both rings' points merged"
        rng = np.random.default_rng(0)
        space = np.iinfo(np.uint32 if a.key_bits == 32 else np.uint64).max
        drawn = rng.integers(0, space, SAMPLED_HASHES, dtype=np.uint64, endpoint=True)
        drawn = drawn.astype(np.uint32) if a.key_bits == 32 else drawn
        alike = np.mean(a.lookup_many(drawn) == b.lookup_many(drawn))
        return float(alike), f"{SAMPLED_HASHES:,} uniform hashes on their one key hash"
    return (independent_agreement(_shares(a, servers, owners_a), _shares(b, servers, owners_b)),
            "independent key hashes: sum of share x share")


def _state(label: str, servers: list[Server], clients: list[Client], keys: list[bytes],
           routed: dict[str, npt.NDArray[np.uint16]], fleet: str) -> FleetState:
    """One state's matrix from every client's owners, each checked against its recipe,
    and every pair's causes and prediction."""
    recipes: dict[str, tuple[Algorithm, npt.NDArray[np.uint16]]] = {}
    with_recipe = []
    for client in clients:
        ours = client.our_recipe(servers) if client.exact else None
        expected = ours.route(keys) if ours is not None else None
        with_recipe.append(check_recipe(client, f"{fleet}, {label}", servers, keys,
                                        routed[client.name], expected))
        if ours is not None and expected is not None:
            recipes[client.name] = (ours, expected)
    names = [c.name for c in clients]
    matrix = [[float(np.mean(routed[x] == routed[y])) for y in names] for x in names]
    pairs = []
    for i, a in enumerate(clients):
        for j in range(i + 1, len(clients)):
            b = clients[j]
            predicted, basis, found = None, "", [f"no exact recipe of ours: {c.name}, {c.note}"
                                                 for c in (a, b) if c.name not in recipes]
            if not found:
                (ra, oa), (rb, ob) = recipes[a.name], recipes[b.name]
                predicted, basis = predict(ra, rb, servers, keys, oa, ob)
                assert a.recipe is not None and b.recipe is not None
                found = causes(recipe_traits(*a.recipe, servers, ra.ring),
                               recipe_traits(*b.recipe, servers, rb.ring))
            pairs.append(PairAgreement(a.name, b.name, matrix[i][j], predicted, basis, found))
    return FleetState(label, len(servers), names, matrix, pairs, with_recipe)


def _moved(before: tuple[list[Server], npt.NDArray[np.uint16]],
           after: tuple[list[Server], npt.NDArray[np.uint16]]) -> float:
    return float(np.mean(np.array(_names(before[0]), dtype=object)[before[1]]
                         != np.array(_names(after[0]), dtype=object)[after[1]]))


def _speed(client: Client, servers: list[Server], keys: list[bytes], key_names: list[str],
           repeats: int, scalar_keys: int) -> ClientSpeed | None:
    """The client beside our recipe's fastest form, in interleaved rounds."""
    ours = client.fastest_recipe(servers)
    if ours is None or (client.peer is None and client.spec is None):
        return None
    recipe = client.recipe_label + (f", {ours.form}" if ours.ring is not None else "")
    if client.peer is not None:
        built = client.peer.build(servers)
        some, some_keys = key_names[:scalar_keys], keys[:scalar_keys]
        hashes = ours.hash_keys(some_keys)
        own, mine, lookups = timed_rounds(repeats, [
            lambda: [built.lookup_key(k) for k in some], lambda: ours.route(some_keys),
            lambda: ours.lookup_many(hashes)], len(some))
        return ClientSpeed(client.name, client.runtime, recipe, Timing.of(own), None,
                           Timing.of(mine), built.nbytes, ours_lookup_ns=Timing.of(lookups))
    assert client.spec is not None
    peer = open_foreign_peer(client.spec, servers)
    try:
        batch = batch_for(peer, servers, keys)
        hashes = ours.hash_keys(keys)
        # A library's C call as its worker timed it, round by round (the first is the
        # warm-up round timed_rounds leaves out): its own clock, the hand-over left out.
        calls: list[float] = []

        def route() -> object:
            owners = peer.route_prepared(batch)
            if isinstance(peer, LibraryPeer) and peer.last_call_ns is not None:
                calls.append(peer.last_call_ns[0] / len(keys))
            return owners

        piped, mine, lookups = timed_rounds(repeats, [
            route, lambda: ours.route(keys), lambda: ours.lookup_many(hashes)], len(keys))
        process = isinstance(peer, ProcessPeer)
        clock: list[float] | None = calls[1:] or None
        if client.spec.input == "keys" and process:
            clock = self_timed(peer, keys, repeats)
        return ClientSpeed(
            client.name, client.runtime, recipe,
            Timing.of(clock) if clock else (None if process else Timing.of(piped)),
            Timing.of(piped) if process else None, Timing.of(mine), peer.nbytes,
            peer.pss if isinstance(peer, ProcessPeer) else None,
            ours_lookup_ns=Timing.of(lookups), given_hashes=client.spec.input == "hashes")
    finally:
        peer.close()


def _fleet(fleet: ClientFleet, clients: list[Client], context: RunContext,
           keys: list[bytes]) -> FleetAgreement:
    chosen = [c for c in clients if fleet.clients is None or c.name in fleet.clients]
    labelled = fleet.states()
    servers_of = [servers for _, servers in labelled]
    # Each client through every state at once: one that changes itself keeps its process.
    routed: dict[str, list[npt.NDArray[np.uint16]]] = {}
    itself: dict[str, bool] = {}
    for client in chosen:
        context.stage(f"{context.label}: clients on {fleet.label}, {client.name}")
        routed[client.name], itself[client.name] = client.route_states(
            servers_of, fleet.changes(), keys, context.key_names)
    states = []
    for at, (label, servers) in enumerate(labelled):
        context.stage(f"{context.label}: clients on {fleet.label}, {label}")
        states.append(_state(label, servers, chosen, keys,
                             {name: owners[at] for name, owners in routed.items()},
                             fleet.label))
        context.advance(1)
    moves = []
    for client in chosen:
        steps = list(zip(servers_of, routed[client.name], strict=True))
        on_remove = _moved(steps[0], steps[1]) if fleet.remove is not None else None
        on_add = _moved(steps[-2], steps[-1]) if fleet.add is not None else None
        moves.append(ClientMoves(client.name, on_remove, on_add,
                                 "its own ADD and REMOVE" if itself[client.name]
                                 else "built again for each state"))
    return FleetAgreement(fleet.label, fleet.servers, list(fleet.weights), states, moves)


def _check_clients(scenario: ScenarioView, options: ClientsOptions, top: Fields) -> None:
    """The matrix's clients are the scenario's peers and [clients]' recipes, each named
    once; every fleet names clients that exist, two at least, each able to take the
    fleet in every state (its recipe's rules, a Python peer's own)."""
    peers = {name: PEERS[name] for name in scenario.measure.peers}
    foreign = {spec.name: spec for spec in scenario.measure.foreign_peers}
    recipes = {recipe.name: recipe for recipe in options.recipes}
    for name in recipes:
        if name in peers or name in foreign:
            raise ScenarioError(f"{top.file}: clients.recipes must have names other than the "
                                f"peers' (got {name!r}, a peer)")
    every = [*peers, *foreign, *recipes]
    for i, fleet in enumerate(options.fleets):
        where = f"clients.fleets[{i}]"
        chosen = list(fleet.clients) if fleet.clients is not None else every
        for name in chosen:
            if name not in every:
                raise ScenarioError(f"{top.file}: {where}.clients must name the scenario's "
                                    f"peers or clients.recipes ({', '.join(every)}) (got "
                                    f"{name!r})")
        if len(chosen) < 2:
            raise ScenarioError(f"{top.file}: {where} must have at least two clients to "
                                f"compare (measure.peers, clients.recipes; got {chosen!r})")
        for label, servers in fleet.states():
            for name in chosen:
                problem = None
                if name in peers:
                    problem = peers[name].check_servers(servers)
                elif name in foreign and (claim := foreign[name].routes_like) is not None:
                    problem = get_algorithm(claim["algorithm"]).check_servers(
                        servers, foreign[name].recipe_params)
                elif name in recipes:
                    problem = get_algorithm(recipes[name].algorithm).check_servers(
                        servers, recipes[name].params)
                if problem:
                    raise ScenarioError(f"{top.file}: {where} must be servers that are "
                                        f"{problem} for client {name!r} ({label}); leave it "
                                        f"out of {where}.clients")


class ClientsMetric(MetricBase):
    """The agreement matrix of every client, its causes and predictions, and each client's
    movement and speed."""

    name: ClassVar[str] = "clients"
    table: ClassVar[str] = "clients"
    reference: ClassVar[Reference] = Reference(specimens=("""
        [servers]
        count = 3
        [measure]
        peers = ["uhashring-ketama", "jump-consistent-hash"]
        [[clients.fleets]]
        servers = 3
        clients = ["uhashring-ketama", "jump-consistent-hash"]
        shuffle = 1
        """, """
        [servers]
        count = 3
        [clients]
        recipes = [{ name = "npm", client = "npm hashring" },
                   { name = "k", construction = "libketama" }]
        [[clients.fleets]]
        servers = 3
        """))
    scope: ClassVar[Scope] = "run"
    needs: ClassVar[frozenset[str]] = frozenset()
    record_type: ClassVar[Any] = ClientsAgreement
    cost_fields: ClassVar[str] = "clients.fleets' servers and weights"

    def check_scenario(self, scenario: ScenarioView, options: Any, top: Fields) -> None:
        _check_clients(scenario, options, top)

    def parse_options(self, table: Fields) -> ClientsOptions:
        return parse_clients(table)

    def steps(self, plan: RunPlan) -> int:
        options = plan.options.get(self.name)
        return options.states() + 1 if isinstance(options, ClientsOptions) else 0

    def estimated_bytes(self, options: Any, servers: Sequence[Server]) -> float:
        """The largest fleet's structures: every client's (a Python peer's dict of points)
        and our recipe's beside it."""
        if not isinstance(options, ClientsOptions):
            return 0.0
        weight = max(sum(fleet.weights[i % len(fleet.weights)] for i in range(fleet.servers))
                     + fleet.add_weight for fleet in options.fleets)
        return float(2 * CLIENT_BYTES_PER_POINT * 160 * weight)

    def working(self, shape: RunShape) -> Working:
        """Every client's owners of every state of a fleet at once, its batch, and our
        recipe's beside it."""
        options = shape.options.get(self.name)
        if not isinstance(options, ClientsOptions):
            return NOTHING_MORE
        return Working(bytes=float(CLIENT_BYTES_PER_KEY * shape.keys
                                   * (1 + len(options.recipes))))

    def measure(self, context: RunContext) -> ClientsAgreement | None:
        options = context.options.get(self.name)
        if not isinstance(options, ClientsOptions):
            return None
        clients = clients_of([type(p) for p in context.peers.values()],
                             [p.spec for p in context.foreign_peers.values()], options.recipes)
        keys = [name.encode() for name in context.key_names]
        fleets = [_fleet(fleet, clients, context, keys) for fleet in options.fleets]
        first = options.fleets[0]
        context.stage(f"{context.label}: clients' speed on {first.label}")
        servers = first.server_list()
        speeds = [speed for client in clients
                  if (first.clients is None or client.name in first.clients)
                  and (speed := _speed(client, servers, keys, context.key_names,
                                       context.settings.repeats,
                                       context.settings.scalar_keys)) is not None]
        context.advance(1)
        return ClientsAgreement(len(keys), fleets, speeds)

    def sections(self, result: Result) -> list[Section]:
        return clients_sections(result, self.name)

    def answers(self, result: Result) -> list[Answer]:
        return clients_answers(result, self.name)
