"""The clients of the agreement matrix, one shape for three kinds: a Python peer of our
registry, a foreign peer (a library or a process), and a recipe of ours listed in
`[clients]`. Each can be built for any server list and asked for the owners of the keys,
and names the recipe of ours it routes like (its own, for a recipe).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from harness.core.errors import ParityError
from harness.core.fields import Fields
from harness.core.servers import Server
from harness.metrics.clients.options import RecipeClient
from harness.recipes.algorithms import get_algorithm
from harness.recipes.algorithms.base import Algorithm
from harness.recipes.algorithms.ring import RingAlgorithm
from harness.recipes.peers.base import Peer
from harness.recipes.peers.foreign import (
    DOORS,
    ForeignPeer,
    ProcessPeer,
    open_foreign_peer,
    protocol,
)
from harness.recipes.peers.foreign.claims import batch_for, owners_by_name
from harness.recipes.peers.foreign.spec import ForeignPeerSpec

#: the fastest form of a ring of each width: for 32 bits the bucket index on the top bits of
#: the hash (5.4 ns a key against cffi-packed's 105 for 100,000 keys on 1,600 libketama
#: points, 7.7 against 167 on 16,000, measured here interleaved); 64-bit rings have no
#: bucketed form, and their C batch search over packed entries is the fastest
FASTEST_LAYOUT = {32: "bucketed", 64: "cffi-packed-64"}


@dataclass(frozen=True)
class Client:
    name: str
    #: "Python", a foreign peer's door (`DOORS`) or "recipe of ours"
    runtime: str
    #: the recipe of ours it routes like: (algorithm, checked parameters), or None
    recipe: tuple[str, dict[str, Any]] | None
    #: whether it claims to route exactly like that recipe (a difference fails the run)
    exact: bool
    #: why it has no exact recipe ("" when it has one)
    note: str
    #: a Python peer's class, a foreign peer's spec, or None for a recipe of ours
    peer: type[Peer] | None = None
    spec: ForeignPeerSpec | None = None

    @property
    def recipe_label(self) -> str:
        if self.recipe is None:
            return "(none)"
        algorithm, params = self.recipe
        # As the foreign peers' tables name a recipe; the form and a secret key are not it.
        shown = " ".join(f"{k}={v}" for k, v in params.items() if k not in ("layout", "hash_key"))
        return f"{algorithm} {shown}".strip()

    def our_recipe(self, servers: Sequence[Server]) -> Algorithm | None:
        """Its recipe built for the servers (in its reference form)."""
        if self.recipe is None:
            return None
        algorithm, params = self.recipe
        return get_algorithm(algorithm).from_params(servers, params)

    def fastest_recipe(self, servers: Sequence[Server]) -> Algorithm | None:
        """Its recipe in our fastest form: a ring in the C batch layout of its width."""
        if self.recipe is None:
            return None
        algorithm, params = self.recipe
        if algorithm == "ring":
            bits = RingAlgorithm.construction_of(params).bits
            params = {**params, "layout": FASTEST_LAYOUT[bits]}
        return get_algorithm(algorithm).from_params(servers, params)

    def route(self, servers: Sequence[Server], keys: Sequence[bytes],
              key_names: Sequence[str]) -> npt.NDArray[np.uint16]:
        """Owners (indexes into `servers`) of every key, by the client itself."""
        if self.peer is not None:
            built = self.peer.build(servers)
            return np.fromiter((built.lookup_key(k) for k in key_names), np.uint16,
                               count=len(key_names))
        if self.spec is not None:
            foreign = open_foreign_peer(self.spec, servers)
            try:
                return foreign.route_prepared(batch_for(foreign, servers, keys))
            finally:
                foreign.close()
        ours = self.our_recipe(servers)
        assert ours is not None
        return ours.route(keys)


    def changes_itself(self) -> bool:
        """Whether it takes a fleet's changes through its own ADD and REMOVE (a process
        peer that supports them) rather than being built again for each state."""
        return (self.spec is not None and self.spec.kind == "command"
                and self.spec.input == "keys")

    def route_states(self, states: Sequence[Sequence[Server]],
                     changes: Sequence[tuple[str, str, float]], keys: Sequence[bytes],
                     key_names: Sequence[str]) -> tuple[list[npt.NDArray[np.uint16]], bool]:
        """Owners of every key in each state, and whether the changes went through the
        client's own ADD and REMOVE (else it was built for each state's servers)."""
        if not (self.changes_itself() and changes):
            return [self.route(servers, keys, key_names) for servers in states], False
        assert self.spec is not None
        peer = open_foreign_peer(self.spec, states[0])
        try:
            found = [peer.route_prepared(batch_for(peer, states[0], keys))]
            if not (isinstance(peer, ProcessPeer) and peer.supports(protocol.FEATURE_CHANGE)):
                return found + [self.route(servers, keys, key_names)
                                for servers in states[1:]], False
            for (kind, server, weight), servers in zip(changes, states[1:], strict=True):
                if kind == "remove":
                    peer.remove(server)
                else:
                    peer.add(server, weight)
                # Numbered as the state's list by name: its own order after a server was
                # removed and added back is not the list's.
                found.append(owners_by_name(
                    peer, servers, peer.route_prepared(batch_for(peer, servers, keys))))
            return found, True
        finally:
            peer.close()


def checked_parameters(algorithm: str, params: dict[str, Any], where: str) -> dict[str, Any]:
    """A peer's stated recipe with its defaults filled in, as a scenario's would be."""
    fields = Fields(where, "agrees_with", dict(params), declares=False)
    checked = get_algorithm(algorithm).parse_params(fields)
    fields.finish()
    return checked


def clients_of(peers: Sequence[type[Peer]], foreign: Sequence[ForeignPeerSpec],
               recipes: Sequence[RecipeClient]) -> list[Client]:
    """Every client, in the scenario's order: named peers, foreign peers, then recipes."""
    found = []
    for cls in peers:
        recipe = None
        if cls.agrees_with is not None and cls.exact:
            stated = {k: v for k, v in cls.agrees_with.items() if k != "algorithm"}
            name = cls.agrees_with["algorithm"]
            recipe = (name, checked_parameters(name, stated, f"peer {cls.name}"))
        found.append(Client(cls.name, "Python", recipe, cls.exact,
                            cls.agreement_note or ("" if recipe else "claims no recipe"),
                            peer=cls))
    for spec in foreign:
        recipe = None
        if spec.routes_like is not None and spec.exact:
            recipe = (str(spec.routes_like["algorithm"]), spec.recipe_params)
        found.append(Client(spec.name, DOORS[spec.kind], recipe, spec.exact,
                            "" if recipe else "claims no exact recipe", spec=spec))
    for item in recipes:
        found.append(Client(item.name, "recipe of ours", (item.algorithm, item.params), True,
                            ""))
    return found


def check_recipe(client: Client, fleet: str, servers: Sequence[Server], keys: Sequence[bytes],
                 owners: npt.NDArray[np.uint16],
                 expected: npt.NDArray[np.uint16] | None) -> float | None:
    """The client's agreement with its recipe; a ParityError when it claims parity and some
    key differs (the run fails, as any parity failure does)."""
    if expected is None:
        return None
    differ = np.flatnonzero(expected != owners)
    if client.exact and len(differ):
        at = int(differ[0])
        raise ParityError(
            f"client {client.name!r} on fleet {fleet!r}: claims to route like "
            f"{client.recipe_label} but routes {len(differ):,} of {len(keys):,} keys "
            f"differently (first: {keys[at].decode(errors='replace')!r} to "
            f"{servers[int(owners[at])].name!r}, ours to {servers[int(expected[at])].name!r})")
    return 1.0 - len(differ) / max(1, len(keys))


def timed_rounds(rounds: int, runs: Sequence[Callable[[], object]],
                 keys: int) -> list[list[float]]:
    """ns per key of each run, in `rounds` interleaved rounds after one warm-up round."""
    samples: list[list[float]] = [[] for _ in runs]
    for round_number in range(rounds + 1):
        for i, run in enumerate(runs):
            start = time.perf_counter_ns()
            run()
            if round_number:
                samples[i].append((time.perf_counter_ns() - start) / keys)
    return samples


def self_timed(peer: ForeignPeer, keys: Sequence[bytes], repeats: int) -> list[float] | None:
    """A process peer's TIME answer (its own clock), or None if it does not time itself."""
    if not isinstance(peer, ProcessPeer) or not peer.supports(protocol.FEATURE_TIME):
        return None
    blob, offsets = protocol.packed_keys(keys)
    return peer.self_timed(blob, offsets, repeats)
