"""Protocols that declare everything called on them, and the defaults callers rely on.

Every optional member of `Algorithm`, `Construction`, `Layout` and `Metric` has
a default in the base class ours subclass (`Routing`, `ConstructionBase`,
`LayoutBase`, `MetricBase`); each test below proves one default is what its
callers expect. Registration checks a plugin against the same protocols.
"""

from __future__ import annotations

import ast
import sys
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

import harness
from harness.core.errors import HarnessError
from harness.core.fields import Fields
from harness.core.servers import Server
from harness.metrics.base import METRIC_DEFAULTS, Metric
from harness.metrics.registry import get_metric, metrics, unavailable
from harness.recipes import plugins
from harness.recipes.algorithms import ALGORITHMS, CONTRACT, get_algorithm
from harness.recipes.algorithms.base import DEFAULTS, Algorithm, Routing
from harness.recipes.algorithms.jump import JumpAlgorithm
from harness.recipes.algorithms.ring import RingAlgorithm
from harness.recipes.constructions import get_construction
from harness.recipes.constructions.base import CONSTRUCTION_DEFAULTS, Construction
from harness.recipes.layouts import CONTRACT as LAYOUT_CONTRACT
from harness.recipes.layouts import LAYOUTS
from harness.recipes.layouts.base import LAYOUT_DEFAULTS, Layout
from harness.recipes.peers.base import Peer, PrehashedPeer
from harness.recipes.plugins import Contract, contract_problem, protocol_members
from harness.run.runner import run_scenario
from harness.run.scenario import parse_scenario
from tests.paths import PLUGIN_DEMO

SERVERS = [Server("a"), Server("b", 2.0), Server("c")]
HASHES = np.arange(0, 2**32, 2**24, dtype=np.uint64).astype(np.uint32)


class Bare(Routing):
    """An algorithm that defines nothing optional: every default from `Routing`."""

    name = "bare"
    built: ClassVar[list[dict[str, Any]]] = []

    @classmethod
    def build(cls, servers: Any, **params: Any) -> Bare:
        cls.built.append(params)
        return cls()


def test_defaults_are_declared_by_each_protocol() -> None:
    """Every member with a default is one its protocol declares (none is extra)."""
    for protocol, defaults in ((Algorithm, DEFAULTS), (Construction, CONSTRUCTION_DEFAULTS),
                               (Layout, LAYOUT_DEFAULTS), (Metric, METRIC_DEFAULTS)):
        assert set(defaults) <= set(protocol_members(protocol)), protocol.__name__


def test_from_params_defaults_to_build() -> None:
    """An algorithm that defines only `build` (a plugin's) is built by `from_params` through it."""
    Bare.built.clear()
    assert isinstance(Bare.from_params(SERVERS, {"k": 1}), Bare)
    assert Bare.built == [{"k": 1}]


def test_from_params_does_not_check_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ours build from parsed parameters as given: `from_params` never parses them again."""
    params = RingAlgorithm.parse_params(Fields("t", "", {"points_per_weight": 4}))
    expected = RingAlgorithm.build(SERVERS, **params).lookup_many(HASHES).tolist()

    def refuse(cls: Any, fields: Any) -> Any:
        raise AssertionError("parameters parsed twice")

    monkeypatch.setattr(RingAlgorithm, "parse_params", classmethod(refuse))
    monkeypatch.setattr(JumpAlgorithm, "parse_params", classmethod(refuse))
    ring = RingAlgorithm.from_params(SERVERS, params)
    assert ring.params == params and ring.lookup_many(HASHES).tolist() == expected
    assert JumpAlgorithm.from_params([Server("a"), Server("b")], {}).entries == 2
    with pytest.raises(AssertionError, match="parsed twice"):
        RingAlgorithm.build(SERVERS, **params)  # the public API checks its keywords


def test_a_scenario_parses_its_parameters_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading a scenario parses each recipe's parameters; running it parses none again."""
    scenario = parse_scenario({
        "name": "once", "servers": {"count": 4}, "generator": {"points_per_weight": [4, 8]},
        "keys": {"count": 500},
        "measure": {"layouts": ["numpy-packed"], "metrics": ["balance", "load", "movement"],
                    "repeats": 1, "scalar_keys": 50},
        "operations": [{"kind": "remove", "server": "server-1"}, {"kind": "add",
                                                                   "server": "new"}]},
        "once.toml")
    calls: list[str] = []
    parse = RingAlgorithm.parse_params.__func__  # type: ignore[attr-defined]

    def counted(cls: Any, fields: Any) -> Any:
        calls.append(fields.path)
        return parse(cls, fields)

    monkeypatch.setattr(RingAlgorithm, "parse_params", classmethod(counted))
    result = run_scenario(scenario, show_progress=False)
    assert calls == []
    assert [run.label for run in result.runs] == ["k=4", "k=8"]
def test_removal_problem_defaults_to_none() -> None:
    """Any server can be removed unless an algorithm says otherwise (jump does)."""
    assert Bare.removal_problem(SERVERS, "a") is None
    assert RingAlgorithm.removal_problem(SERVERS, "a") is None
    assert JumpAlgorithm.removal_problem(SERVERS, "a") is not None


def test_metric_problem_defaults_to_none() -> None:
    """Every metric can be measured unless an algorithm says otherwise (the ring says nothing)."""
    assert all(Bare.metric_problem(m.name) is None for m in metrics())
    assert all(RingAlgorithm.metric_problem(m.name) is None for m in metrics())
    assert get_algorithm("jump").metric_problem("process") is not None


def test_ring_and_construction_default_to_none() -> None:
    """An algorithm that routes otherwise has no ring and no construction; the ring has both."""
    assert Bare().ring is None and Bare().construction is None
    jump = JumpAlgorithm.build([Server("a"), Server("b")])
    assert jump.ring is None and jump.construction is None
    bounded = get_algorithm("bounded-load").build(SERVERS, points_per_weight=4)
    assert bounded.ring is None  # it walks its points, it does not route by arcs
    ring = RingAlgorithm.build(SERVERS, points_per_weight=4)
    assert ring.ring is not None and ring.construction is not None


def test_route_one_defaults_to_none() -> None:
    """Without a one-call route the comparison times no "(route)" row; jump has one."""
    assert Bare().route_one is None
    assert RingAlgorithm.build(SERVERS, points_per_weight=4).route_one is None
    jump = JumpAlgorithm.build([Server("a"), Server("b")])
    assert jump.route_one is not None
    assert jump.route_one(b"k") == int(jump.route([b"k"])[0])


def test_reset_defaults_to_doing_nothing() -> None:
    """`reset` on a stateless algorithm does nothing: every answer stays the same."""
    ring = RingAlgorithm.build(SERVERS, points_per_weight=4)
    before = [ring.lookup(int(h)) for h in HASHES]
    ring.reset()
    assert [ring.lookup(int(h)) for h in HASHES] == before


def test_slot_counts_defaults_to_none() -> None:
    """Only an algorithm with a table of slots (maglev) gives their counts."""
    assert Bare().slot_counts() is None
    assert RingAlgorithm.build(SERVERS, points_per_weight=4).slot_counts() is None
    assert get_algorithm("maglev").build([Server("a"), Server("b")]).slot_counts() is not None


def test_without_and_rebalanced_default_to_none() -> None:
    """An algorithm is rebuilt to lose a server, and has nothing to re-place, by default."""
    assert Bare().without(0) is None and Bare().rebalanced(0.01) is None
    jump = JumpAlgorithm.build([Server("a"), Server("b")])
    assert jump.without(0) is None and jump.rebalanced(0.01) is None


def test_construction_defaults_rebuild_and_never_rebalance() -> None:
    """Hashed points: `remove_server` and `rebalance` give None, so the ring is rebuilt."""
    points = get_construction("points", points_per_weight=4)
    ring = points.build_ring(SERVERS)
    assert points.remove_server(ring, 0) is None
    assert points.rebalance(ring, [1.0, 2.0, 1.0], 0.01) is None
    hashed = RingAlgorithm.build(SERVERS, points_per_weight=4)
    assert hashed.without(0) is None and hashed.rebalanced(0.01) is None
    allocated = RingAlgorithm.build(SERVERS, construction="allocated", points_per_weight=4)
    assert allocated.without(0) is not None


def test_layout_c_functions_defaults_to_none() -> None:
    """A layout without C functions is counted as its whole Python call; C layouts name theirs."""
    assert LAYOUTS["numpy-packed"].c_functions is None
    assert LAYOUTS["tuples"].c_functions is None
    functions = LAYOUTS["cffi-packed"].c_functions
    assert functions is not None and functions.batch.startswith("ring_lookup_many")


def test_metric_check_defaults_to_none() -> None:
    """A metric that runs on any machine has nothing to say when validation asks it."""
    assert get_metric("balance").check() is None
    assert unavailable("balance") is None


def test_metric_parse_options_defaults_to_an_error_naming_the_metric() -> None:
    """A metric without a table of its own refuses one, by name; the table metrics parse theirs."""
    with pytest.raises(HarnessError, match="metric 'balance' takes no table of options"):
        get_metric("balance").parse_options(Fields("s.toml", "balance", {}))
    assert get_metric("process").parse_options(Fields("s.toml", "process", {})) is not None


def _contract_names() -> set[str]:
    """Every member the protocols declare, the names a contract look-up would use."""
    protocols = (Algorithm, Construction, Layout, Metric, Peer, PrehashedPeer)
    return {name for protocol in protocols for name in protocol_members(protocol)}


def test_no_getattr_on_a_contract_member_remains() -> None:
    """No `getattr`/`hasattr` in harness/ names a protocol member by a literal string."""
    root = Path(harness.__file__).parent
    names = _contract_names()
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2
                    and isinstance(node.args[1], ast.Constant)
                    and node.args[1].value in names):
                found.append(f"{path.relative_to(root)}:{node.lineno} {node.args[1].value}")
    assert names >= {"removal_problem", "ring", "c_functions", "check", "parse_options"}
    assert found == []


def test_builtin_classes_follow_their_contract() -> None:
    """Our layouts and algorithms pass the check plugins pass (their C lookups bound per
    instance included)."""
    assert {name: contract_problem(cls, LAYOUT_CONTRACT) for name, cls in LAYOUTS.items()} == {
        name: None for name in LAYOUTS}
    assert {name: contract_problem(cls, CONTRACT) for name, cls in ALGORITHMS.items()} == {
        name: None for name in ALGORITHMS}


def _register(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, group: str,
              source: str) -> dict[str, Any]:
    """Load one entry point naming `plugin_case:Plugin` in `group`, as `Registry` does."""
    (tmp_path / "plugin_case.py").write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("plugin_case", None)
    entry = EntryPoint("case", "plugin_case:Plugin", group)
    monkeypatch.setattr(plugins, "entry_points", lambda group: [entry])
    contract = CONTRACT if group == "ring_harness.algorithms" else LAYOUT_CONTRACT
    return plugins.load_plugins(group, {}, contract)


DEMO = (PLUGIN_DEMO / "ring_harness_demo.py").read_text()


def test_plugin_missing_a_required_method_is_refused_naming_both(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An algorithm without `reference_owners` stops registration: one line, plugin and method."""
    source = DEMO.replace("def reference_owners(", "def _not_reference_owners(") + (
        "\nPlugin = DemoModuloAlgorithm\n")
    with pytest.raises(HarnessError) as caught:
        _register(tmp_path, monkeypatch, "ring_harness.algorithms", source)
    message = str(caught.value)
    assert message == ("plugin 'plugin_case:Plugin' (ring_harness.algorithms) lacks "
                       "`reference_owners`, which the Algorithm "
                       "(harness/recipes/algorithms/base.py) protocol declares")


def test_plugin_missing_an_optional_member_is_told_where_its_default_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A layout not subclassing `LayoutBase` lacks `c_functions`; the message names the base."""
    source = DEMO.replace("class DemoBisectLayout(LayoutBase):", "class DemoBisectLayout:") + (
        "\nPlugin = DemoBisectLayout\n")
    with pytest.raises(HarnessError, match=(
            r"^plugin 'plugin_case:Plugin' \(ring_harness.layouts\) lacks `c_functions`, .* "
            r"\(its default comes with subclassing harness.recipes.layouts.base.LayoutBase\)$")):
        _register(tmp_path, monkeypatch, "ring_harness.layouts", source)


def test_plugin_algorithm_not_subclassing_routing_lacks_its_defaults(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A structural algorithm defining the required members only is refused for the first
    optional one, with where to get it."""
    source = DEMO.replace("class DemoModuloAlgorithm(Routing):", "class DemoModuloAlgorithm:")
    source = source.replace("    def hash_keys(", "    def route(self, keys: Any) -> Any:\n"
                            "        return self.lookup_many(self.hash_keys(keys))\n\n"
                            "    def hash_keys(") + "\nPlugin = DemoModuloAlgorithm\n"
    with pytest.raises(HarnessError, match=(
            r"lacks `from_params`, .* subclassing harness.recipes.algorithms.base.Routing\)$")):
        _register(tmp_path, monkeypatch, "ring_harness.algorithms", source)


def test_plugin_that_is_not_a_class_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry point naming a function, not a class, is refused as such."""
    with pytest.raises(HarnessError, match=r"\(ring_harness.layouts\) is not a class"):
        _register(tmp_path, monkeypatch, "ring_harness.layouts", "def Plugin(): pass\n")


def test_demo_plugin_follows_both_contracts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo's classes register: subclassing our bases gives every optional member."""
    layouts = _register(tmp_path, monkeypatch, "ring_harness.layouts",
                        DEMO + "\nPlugin = DemoBisectLayout\n")
    assert list(layouts) == ["demo-bisect"]
    algorithms = _register(tmp_path, monkeypatch, "ring_harness.algorithms",
                           DEMO + "\nPlugin = DemoModuloAlgorithm\n")
    assert list(algorithms) == ["demo-modulo"]


def test_contract_lists_every_member_in_declaration_order() -> None:
    """The algorithm contract starts with `name` and holds each default-carrying member."""
    contract = Contract("X", protocol_members(Algorithm), DEFAULTS, "base")
    assert contract.members[0] == "name"
    assert set(DEFAULTS) <= set(contract.members)
