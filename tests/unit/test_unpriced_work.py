"""Work built outside the sweep's ring is priced by its owner's cost before any work: a
`[clients]` recipe, a foreign peer's claimed `routes_like`, `[migration]`'s `to` and a
`[comparison]` recipe by their algorithm on every fleet they are built for, a removal
walk's steps on the servers each step has left; a run too large for them is refused by
`run` with exit 2 and one line naming what makes it so."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.core.servers import fleet_servers
from harness.recipes.algorithms import get_algorithm
from harness.run.estimate import run_cost
from harness.run.scenario import load_scenario
from tests.paths import ROOT
from tests.property.test_fuzz import toml_document

#: recipes whose own structure or lookups grow with a parameter: (algorithm, parameters)
RECIPES: list[tuple[str, dict[str, Any]]] = [
    ("ring", {"points_per_weight": 3_000_000}),
    ("dx", {"capacity": 200_000_000}),
    ("anchor", {"capacity": 400_000_000}),
    ("maglev", {"table_size": 400_000_009}),
]


def _scenario(tmp_path: Path, document: dict[str, Any]) -> Path:
    path = tmp_path / "unpriced.toml"
    path.write_text(toml_document({"name": "unpriced", **document}), encoding="utf-8")
    return path


def _refused(path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    out = path.parent / "out"
    assert main(["run", str(path), "--no-progress", "--out", str(out), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert not out.exists() or not any(out.iterdir())
    return err


def _clients(recipe: tuple[str, dict[str, Any]], servers: int) -> dict[str, Any]:
    algorithm, params = recipe
    return {"servers": {"count": 3}, "keys": {"count": 1_000},
            "measure": {"peers": ["jump-consistent-hash"]},
            "clients": {"fleets": [{"servers": servers}],
                        "recipes": [{"name": "big", "algorithm": algorithm, **params}]}}


@pytest.mark.parametrize("recipe", RECIPES[1:], ids=[name for name, _ in RECIPES[1:]])
def test_a_large_clients_recipe_is_refused_before_any_work(
        recipe: tuple[str, dict[str, Any]], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Each issue-38 example of a [clients] recipe whose work outlasts a budget (DxHash of
    2e8 slots, anchor and Maglev of 4e8) is refused by --max-minutes 0.5, naming the
    recipe (the ring of 3,000,000 points a weight fits, within its now priced bound:
    tests/property/test_estimate_bound.py)."""
    path = _scenario(tmp_path, _clients(recipe, 3))
    err = _refused(path, capsys, "--max-minutes", "0.5")
    assert "clients.recipes ('big'" in err


@settings(max_examples=12, deadline=None)
@given(recipe=st.sampled_from(RECIPES), scale=st.sampled_from([1e-3, 1e-2, 0.1]),
       servers=st.integers(2, 40))
def test_a_clients_recipe_is_priced_at_least_as_its_algorithm(
        recipe: tuple[str, dict[str, Any]], scale: float, servers: int,
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """A [clients] recipe of any size is priced at least at its algorithm's own bytes on
    the fleet as a client builds it (`estimated_client_bytes`: no plain-Python reference),
    beside what the run holds, and adds its routing seconds."""
    algorithm, params = recipe
    sized = {key: max(1, int(value * scale)) for key, value in params.items()}
    if algorithm == "maglev":
        sized = {"table_size": 65_537}
    folder = tmp_path_factory.mktemp("priced")
    path = _scenario(folder, _clients((algorithm, sized), servers))
    scenario = load_scenario(path)
    params_checked = scenario.measure.options["clients"].recipes[0].params
    fleet = fleet_servers(servers, (1.0,), "10.0.{i}.1:11211")
    built = get_algorithm(algorithm)
    # A ring's own bound is its arrays (the sorted 64-bit positions and 16-bit owners).
    own = (10.0 * built.estimated_entries(fleet, params_checked) if algorithm == "ring"
           else built.estimated_client_bytes(fleet, params_checked))
    priced = run_cost(scenario)
    assert priced.peak >= priced.held + own
    assert priced.why_seconds.startswith("clients.recipes ('big'") or priced.seconds < 60


def test_a_claimed_maglev_of_4e8_slots_is_refused(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A pipe peer claiming to route like Maglev at 400,000,009 slots is priced by Maglev's
    own cost and refused before its process starts: the claim is checked by Maglev's C
    table (three builds of 20 s each at 50 ns a slot; the plain-Python reference's fill,
    which a claim never makes, is not charged), past a budget of half a minute."""
    command = [sys.executable, str(ROOT / "tests" / "fake_peer.py"), "ok"]
    path = _scenario(tmp_path, {
        "servers": {"count": 3}, "keys": {"count": 1_000},
        "measure": {"peers": [{"command": command, "routes_like": {
            "algorithm": "maglev", "table_size": 400_000_009}}]}})
    assert "routes_like, maglev" in _refused(path, capsys, "--max-minutes", "0.5")


def test_a_removal_walk_prices_its_late_steps(tmp_path: Path) -> None:
    """A walk to 99% removed is priced on the servers left at each step: a DxHash keeping
    its capacity costs more than when every step was priced on the whole fleet."""
    def seconds(max_share: float) -> float:
        path = _scenario(tmp_path, {
            "servers": {"count": 3}, "keys": {"count": 100},
            "removals": {"servers": 1_000, "algorithms": [{"name": "dx"}],
                         "max_share": max_share, "step": 0.33, "keys": 100_000,
                         "memory": False}})
        return run_cost(load_scenario(path)).seconds
    fleet = fleet_servers(1_000, (1.0,), "s-{i}")
    dx = get_algorithm("dx")
    whole, _ = dx.estimated_seconds(fleet, {"capacity": 2048}, reference_keys=100,
                                    fast_keys=100_000, plain_keys=100)
    last, _ = dx.estimated_seconds(fleet[:10], {"capacity": 2048}, reference_keys=100,
                                   fast_keys=100_000, plain_keys=100)
    assert last > 50 * whole
    assert seconds(0.99) - seconds(0.66) >= last


def _migration(to: dict[str, Any], algorithm: str | None = None) -> dict[str, Any]:
    return {"servers": {"count": 10}, "keys": {"count": 1_000},
            **({"algorithm": {"name": algorithm}} if algorithm else {}),
            "measure": {"metrics": ["balance"]},
            "migration": {"to": to, "universe": 1_000, "requests_per_stage": 1_000,
                          "warmup_requests": 1_000, "cache_objects": 10}}


def _comparison(algorithm: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"servers": {"count": 10}, "keys": {"count": 1_000},
            "measure": {"metrics": [], "layouts": []},
            "comparison": {"servers": [10], "weights": [[1]], "keys": 1_000,
                           "zipf_requests": 1_000, "zipf_universe": 1_000,
                           "algorithms": [{"name": algorithm, **params}]}}


@pytest.mark.parametrize("recipe", RECIPES[1:], ids=[name for name, _ in RECIPES[1:]])
def test_a_large_migration_target_is_refused_before_any_work(
        recipe: tuple[str, dict[str, Any]], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A migration from the run's ring to another algorithm of 2e8 to 4e8 slots (once
    priced at the run's ring: 41 MiB and 0 s, then 47 s into a MemoryError) is refused by
    --max-minutes 0.5, naming migration.to."""
    algorithm, params = recipe
    path = _scenario(tmp_path, _migration({"algorithm": algorithm, **params}))
    assert "migration.to (" in _refused(path, capsys, "--max-minutes", "0.5")


def test_a_migration_within_an_algorithm_is_priced_by_its_new_parameters(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A DxHash run migrating to its own algorithm at 2e8 slots is priced at the new
    capacity, not scaled from the run's small one."""
    path = _scenario(tmp_path, _migration({"capacity": 200_000_000}, algorithm="dx"))
    assert "migration.to (dx" in _refused(path, capsys, "--max-minutes", "0.5")


@pytest.mark.parametrize("recipe", RECIPES, ids=[name for name, _ in RECIPES])
def test_a_large_comparison_recipe_is_refused_before_any_work(
        recipe: tuple[str, dict[str, Any]], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A [comparison] recipe is priced by its own parameters (it was, checked here): each
    large one is refused by the budget or by available memory, naming [comparison]."""
    algorithm, params = recipe
    if algorithm == "ring":
        params = {"points_per_weight": 40_000_000}
    path = _scenario(tmp_path, _comparison(algorithm, params))
    assert "[comparison]" in _refused(path, capsys, "--max-minutes", "0.5")


@settings(max_examples=12, deadline=None)
@given(recipe=st.sampled_from(RECIPES[1:]), scale=st.sampled_from([1e-3, 1e-2, 0.1, 1.0]),
       servers=st.integers(2, 40), run_algorithm=st.sampled_from([None, "jump", "dx"]))
def test_a_migration_target_is_priced_at_least_as_its_algorithm(
        recipe: tuple[str, dict[str, Any]], scale: float, servers: int,
        run_algorithm: str | None, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Whatever the run's own recipe, a migration's new recipe of any size is priced at
    least at its algorithm's own bytes on the run's servers, beside what the run holds."""
    algorithm, params = recipe
    sized = {key: max(16, int(value * scale)) for key, value in params.items()}
    if algorithm == "maglev":
        sized = {"table_size": 65_537 if scale < 1 else 400_000_009}
    document = _migration({"algorithm": algorithm, **sized}, algorithm=run_algorithm)
    document["servers"] = {"count": servers}
    path = _scenario(tmp_path_factory.mktemp("migration"), document)
    scenario = load_scenario(path)
    built = get_algorithm(algorithm)
    checked = {**sized}
    own = built.estimated_bytes(scenario.ring_servers(), checked)
    priced = run_cost(scenario)
    assert priced.peak >= priced.held + own
