"""What scenarios/clients.toml claims, held to the scenario itself: hashring-js claims npm
hashring's own traits (the known client `ring-harness identify` names), and on every fleet
state the scenario routes, those traits build libketama's ring point for point, which is
why the matrix shows hashring-js agreeing with the libketama clients on every key. The
proxies of scenarios/proxies.toml are in the matrix, with the same recipes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from harness.core.servers import Server
from harness.metrics.clients.options import ClientsOptions
from harness.recipes.constructions import get_construction
from harness.recipes.constructions.known_clients import OTHER_CLIENTS
from harness.run.scenario import Scenario, load_scenario
from tests.paths import ROOT

SCENARIO = load_scenario(ROOT / "scenarios" / "clients.toml")
PROXIES = load_scenario(ROOT / "scenarios" / "proxies.toml")
PROXY_NAMES = ("nginx", "pingora-v1", "pingora-v2", "envoy-ring-hash", "envoy-maglev")


def clients_options(scenario: Scenario) -> ClientsOptions:
    options = scenario.measure.options["clients"]
    assert isinstance(options, ClientsOptions)
    return options


def fleet_states() -> Iterator[tuple[str, list[Server]]]:
    """Every fleet state hashring-js routes in the scenario: the Foreign peers section's
    fleet ([servers]) and each state of each [clients] fleet that takes it."""
    yield "[servers]", [Server(s.name, s.weight) for s in SCENARIO.servers]
    for fleet in clients_options(SCENARIO).fleets:
        if fleet.clients is None or "hashring-js" in fleet.clients:
            for label, servers in fleet.states():
                yield f"{fleet.label}, {label}", servers


STATES = dict(fleet_states())


def npm_hashring_traits() -> dict[str, Any]:
    _, algorithm, params = OTHER_CLIENTS["npm hashring"]
    assert algorithm == "ring"
    return {k: v for k, v in params.items() if k != "construction"}


def test_hashring_js_claims_the_npm_hashring_traits() -> None:
    """The scenario's claim is the known client, by name: its recipe, parameter for
    parameter."""
    spec = next(p for p in SCENARIO.measure.foreign_peers if p.name == "hashring-js")
    assert spec.exact and spec.routes_like is not None
    assert spec.routes_like["client"] == "npm hashring"
    stated = {k: v for k, v in spec.routes_like.items()
              if k not in ("algorithm", "construction", "client")}
    assert spec.routes_like["construction"] == "points"
    assert stated == npm_hashring_traits()


def test_the_fleets_cover_both_fleets_and_their_changes() -> None:
    """Seven states: the peers' fleet, and three of each [clients] fleet."""
    assert len(STATES) == 7
    assert {len(servers) for servers in STATES.values()} == {9, 10, 99, 100}


@pytest.mark.parametrize("state", list(STATES))
def test_npm_hashring_traits_are_libketama_here(state: str) -> None:
    """Same points, same owners: both floors give each server the same digests and no
    two points are equal (were any, npm hashring would keep the first server's and
    libketama the last's)."""
    servers = STATES[state]
    ketama = get_construction("libketama").build_ring(servers)
    traits = get_construction("points", **npm_hashring_traits()).build_ring(servers)
    assert np.array_equal(traits.positions, ketama.positions)
    assert np.array_equal(traits.owners, ketama.owners)
    assert len(np.unique(ketama.positions)) == len(ketama.positions)


def test_the_traits_part_from_libketama_on_other_fleets() -> None:
    """The equality above is the fleets', not the recipes': at 7 equal servers npm
    hashring's double floors each share to 39 digests, libketama's exact one to 40."""
    servers = [Server(f"10.0.{i}.1:11211") for i in range(7)]
    ketama = get_construction("libketama").build_ring(servers)
    traits = get_construction("points", **npm_hashring_traits()).build_ring(servers)
    assert (len(ketama.positions), len(traits.positions)) == (7 * 160, 7 * 156)


def test_the_proxies_are_in_the_matrix_with_their_own_recipes() -> None:
    """Each proxy recipe of scenarios/proxies.toml is a [clients] recipe here, with the same
    parameters, and takes both fleets (they take weights)."""
    ours = {r.name: r for r in clients_options(SCENARIO).recipes}
    theirs = {r.name: r for r in clients_options(PROXIES).recipes}
    assert set(PROXY_NAMES) == set(theirs)
    for name in PROXY_NAMES:
        assert (ours[name].algorithm, ours[name].params) == (
            theirs[name].algorithm, theirs[name].params), name
    weighted = clients_options(SCENARIO).fleets[1]
    assert weighted.clients is not None and set(PROXY_NAMES) <= set(weighted.clients)
