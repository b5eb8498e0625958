"""Each metric owns its rules: its table, its default, its scenario checks and its reference
entries live with it, so the scenario code and the reference name no metric."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from harness.core.errors import ScenarioError
from harness.metrics.base import MetricBase
from harness.metrics.registry import (
    BUILT_IN,
    CONTRACT,
    default_metrics,
    metrics,
    table_metrics,
)
from harness.recipes.plugins import contract_problem
from harness.run.scenario import parse_scenario
from tests.paths import ROOT

#: the metric modules the scenario code may import: the registry and the shared interface
SHARED = {"harness.metrics.registry", "harness.metrics.base", "harness.metrics.context"}


def _metric_imports(path: Path) -> list[tuple[str, str]]:
    """(module, name) of every name a module imports from harness.metrics, anywhere in it."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("harness.metrics"):
            found += [(node.module or "", alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(alias.name, "") for alias in node.names
                      if alias.name.startswith("harness.metrics")]
    return found


@pytest.mark.parametrize("module", ["harness/run/scenario.py", "harness/run/reference.py"])
def test_scenario_code_imports_no_metric(module: str) -> None:
    """run/scenario.py and run/reference.py import no metric's module or options class: only
    the registry and the metric interface."""
    imports = _metric_imports(ROOT / module)
    assert imports, "expected the registry at least"
    assert [(m, n) for m, n in imports if m not in SHARED or n.endswith("Options")] == []


def test_tables_and_defaults_come_from_the_metrics() -> None:
    """The table metrics are those declaring a table, read in the order scenarios always
    read them; the default metrics those without one that are on by default (all but
    counts and foreign)."""
    assert table_metrics() == ("process", "migration", "comparison", "equivalence",
                               "removals", "hostile_keys", "replication", "hot_keys",
                               "clients", "range_scans", "rollout", "fleet")
    assert {m.name for m in metrics() if m.table} == set(table_metrics())
    assert default_metrics() == ("collisions", "balance", "load", "movement", "memory",
                               "throughput")


def test_a_metric_without_rules_checks_nothing() -> None:
    """The default `check_scenario` accepts any scenario, and a metric has no reference
    entries unless it declares them."""
    class Plain(MetricBase):
        name = "plain"

    Plain().check_scenario(parse_scenario({"servers": {"count": 2}}, "x.toml"), None,
                           None)  # type: ignore[arg-type]
    assert Plain.reference.tables == {} and Plain.reference.specimens == ()


def test_a_table_metric_checks_its_own_table() -> None:
    """A rule across sections is asked of the metric that owns the table (hot_keys' copies
    against the servers on the ring)."""
    with pytest.raises(ScenarioError, match=r"hot_keys.copies must be at most the servers"):
        parse_scenario({"servers": {"count": 2}, "hot_keys": {"copies": 3}}, "x.toml")


def test_every_built_in_metric_keeps_the_plugin_contract() -> None:
    """Ours pass the check a plugin's metric gets (`ring_harness.metrics`): every member of
    the Metric protocol is there."""
    assert [(m.name, contract_problem(type(m), CONTRACT)) for m in BUILT_IN
            if contract_problem(type(m), CONTRACT)] == []
