"""`[clients]`: the fleets every client of a scenario is asked to route, and recipes of ours
that join the matrix as clients of their own (nginx, HAProxy).

    [clients]
    recipes = [{ name = "nginx", construction = "nginx" },
               { name = "npm", client = "npm hashring" }]
    [[clients.fleets]]
    label = "10 equal"
    servers = 10
    remove = "10.0.3.1:11211"
    add = "10.0.10.1:11211"
    [[clients.fleets]]
    label = "100 at 1:2:4"
    servers = 100
    weights = [1, 2, 4]
    clients = ["spymemcached", "hashring-js"]

Each fleet is measured as it is, then (`remove`) without one of its servers, then
(`add`) with a new server added to that: three states, each its own agreement matrix, and
the keys each client moves on the removal and on the addition. `shuffle = SEED` lists a
fleet's servers in an order that seed shuffles, for clients whose ring depends on the
order of the list (which server keeps a position two points share). Every key is read through
`Fields.take_*` and checked before any work; the clients a fleet names are checked
against the scenario's peers by the scenario (`run/scenario.py`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.core.fields import Fields
from harness.core.ring import MAX_SERVERS
from harness.core.servers import Server, fleet_servers
from harness.recipes.algorithms import ALGORITHMS, get_algorithm
from harness.recipes.peers.foreign.spec import known_client_recipe

#: servers a fleet of the matrix may have: every client is built on it three times
MAX_FLEET_SERVERS = 10_000
WEIGHTS_EXPECTED = "a non-empty list of whole numbers from 1 to 1000 (cycled over the servers)"
SHUFFLE_EXPECTED = ("a seed from 0 to 2**63 - 1: the servers listed in an order it "
                    "shuffles")
CLIENTS_EXPECTED = "a non-empty list of distinct client names (peers or [clients] recipes)"


@dataclass(frozen=True)
class ClientFleet:
    """`servers` servers named by the template, weights cycling, and its two changes."""

    label: str
    servers: int
    name: str = "10.0.{i}.1:11211"
    weights: tuple[float, ...] = (1.0,)
    #: the server removed for the second state (None: no removal)
    remove: str | None = None
    #: the server added for the third state (None: no addition)
    add: str | None = None
    add_weight: float = 1.0
    #: the clients measured on it (None: every client of the scenario)
    clients: tuple[str, ...] | None = None
    #: list the servers in an order shuffled by this seed (None: in template order); for
    #: clients whose ring depends on the order of the list, as their tie rules do
    shuffle: int | None = None

    def server_list(self) -> list[Server]:
        servers = fleet_servers(self.servers, self.weights, self.name)
        if self.shuffle is None:
            return servers
        order = np.random.default_rng(self.shuffle).permutation(len(servers))
        return [servers[i] for i in order.tolist()]

    def changes(self) -> list[tuple[str, str, float]]:
        """(kind, server, weight) of the change that leads to each state after the first."""
        found = []
        if self.remove is not None:
            found.append(("remove", self.remove, 0.0))
        if self.add is not None:
            found.append(("add", self.add, self.add_weight))
        return found

    def states(self) -> list[tuple[str, list[Server]]]:
        """(label, servers) of each state: as it is, after the removal, after the addition."""
        servers = self.server_list()
        states = [("as it is", servers)]
        if self.remove is not None:
            servers = [s for s in servers if s.name != self.remove]
            states.append((f"without {self.remove}", servers))
        if self.add is not None:
            servers = [*servers, Server(self.add, self.add_weight)]
            changed = f"without {self.remove}, with {self.add}" if self.remove else (
                f"with {self.add}")
            states.append((changed, servers))
        return states


@dataclass(frozen=True)
class RecipeClient:
    """A recipe of ours in the matrix as a client of its own."""

    name: str
    algorithm: str
    #: the recipe's checked parameters (defaults filled in)
    params: dict[str, Any]


@dataclass(frozen=True)
class ClientsOptions:
    fleets: tuple[ClientFleet, ...]
    recipes: tuple[RecipeClient, ...] = ()

    def states(self) -> int:
        return sum(len(fleet.states()) for fleet in self.fleets)


def _weights(item: Fields) -> tuple[float, ...]:
    weights = item.take_raw("weights", [1], expected=WEIGHTS_EXPECTED)
    if (not isinstance(weights, list) or not weights
            or not all(isinstance(w, int | float) and not isinstance(w, bool)
                       and math.isfinite(w) and float(w).is_integer() and 1 <= w <= 1000
                       for w in weights)):
        raise item.error("weights", WEIGHTS_EXPECTED, weights)
    return tuple(float(w) for w in weights)


def _fleet(item: Fields) -> ClientFleet:
    count = item.take_int("servers", minimum=2, maximum=min(MAX_FLEET_SERVERS, MAX_SERVERS))
    label = item.take_label("label", f"{count} servers", shown_default="'N servers'")
    template = item.take_template("name", "10.0.{i}.1:11211", "i")
    weights = _weights(item)
    names = [template.format(i=i) for i in range(count)]
    if len(set(names)) != count:
        raise item.error("name", "a template giving each server its own name", template)
    remove = item.take_raw("remove", None, expected="the name of one of the fleet's servers")
    if remove is not None and remove not in names:
        raise item.error("remove", "the name of one of the fleet's servers", remove)
    add = item.take_raw("add", None, expected="a new server name (none of the fleet's)")
    if add is not None and (not isinstance(add, str) or not add or add in names):
        raise item.error("add", "a new server name (none of the fleet's)", add)
    add_weight = float(item.take_int("add_weight", 1, minimum=1, maximum=1000))
    clients = item.take_raw("clients", None, expected=CLIENTS_EXPECTED,
                            shown_default="every client of the scenario")
    if clients is not None and (
            not isinstance(clients, list) or not clients
            or not all(isinstance(c, str) and c for c in clients)
            or len(set(clients)) != len(clients)):
        raise item.error("clients", CLIENTS_EXPECTED, clients)
    shuffle = item.take_raw("shuffle", None, expected=SHUFFLE_EXPECTED,
                            shown_default="none: the servers in template order")
    if shuffle is not None and (isinstance(shuffle, bool) or not isinstance(shuffle, int)
                                or not 0 <= shuffle < 2**63):
        raise item.error("shuffle", SHUFFLE_EXPECTED, shuffle)
    item.finish()
    return ClientFleet(label, count, template, weights, remove, add, add_weight,
                       tuple(clients) if clients is not None else None, shuffle)


def _recipe(item: Fields) -> RecipeClient:
    name = item.take_label("name")
    if item.has("client"):  # a known client by name: its recipe
        _, algorithm_name, _, checked = known_client_recipe(item, beside=("name",))
        return RecipeClient(name, algorithm_name, checked)
    algorithm = get_algorithm(item.take_choice("algorithm", list(ALGORITHMS), "ring"))
    rest = item.take_rest()
    params = Fields(item.file, item.path, rest, declares=False)
    checked = algorithm.parse_params(params)
    params.finish()
    return RecipeClient(name, algorithm.name, checked)


def parse_clients(table: Fields) -> ClientsOptions:
    """`[clients]`, checked: at least one fleet, recipes with distinct names."""
    fleets = tuple(_fleet(item) for item in table.take_table_list("fleets"))
    if not fleets:
        raise table.error("fleets", "a non-empty list of fleets ({ servers = N, ... })", [])
    recipes = tuple(_recipe(item) for item in table.take_table_list("recipes"))
    names = [recipe.name for recipe in recipes]
    if len(set(names)) != len(names):
        raise table.error("recipes", "recipes with distinct names", names)
    table.finish()
    return ClientsOptions(fleets, recipes)
