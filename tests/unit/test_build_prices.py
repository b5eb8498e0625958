"""Building is priced in time: every registered algorithm, construction and layout has a
build rate in the one cost model, and a run whose builds outlast `--max-minutes` is refused
before any work with one line naming them (a ring of 8,388,608 Envoy points rebuilt for a
movement ran 19.4 s under a budget of 0.05 minutes when builds were unpriced).

How the rates were measured is in benchmarks/build_rates.py; that the priced seconds bound
the measured ones is tests/property/test_time_bound.py (slow).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.core.params import keyword_fields
from harness.core.servers import fleet_servers
from harness.metrics.process import FILTER_SECONDS_PER_ENTRY
from harness.recipes.algorithms import ALGORITHMS, BUILT_IN
from harness.recipes.algorithms.base import Routing
from harness.recipes.constructions import CONSTRUCTIONS
from harness.recipes.constructions.build_time import SECONDS_PER_POINT
from harness.recipes.constructions.envoy_ring_hash import hash_counts
from harness.recipes.layouts import LAYOUTS
from harness.recipes.layouts.costs import (
    FLAT_BUILD_SECONDS_PER_ENTRY,
    OBJECT_BUILD_SECONDS_PER_ENTRY,
    build_seconds_per_entry,
)
from harness.run.estimate import run_cost
from harness.run.scenario import load_scenario
from tests.paths import ROOT
from tests.property.test_fuzz import toml_document

#: the hostile pass's scenario: Envoy's largest ring, rebuilt after one operation
ENVOY_8M: dict[str, Any] = {
    "name": "envoy-8m",
    "servers": {"count": 10, "name": "10.0.{i}.1:80"},
    "generator": {"construction": "envoy_ring_hash", "minimum_ring_size": 8_388_608},
    "keys": {"count": 1_000},
    "measure": {"layouts": ["cffi-packed-64"], "metrics": ["movement"], "repeats": 1},
    "operations": [{"kind": "add", "server": "10.0.10.1:80"}],
}
#: the same size of `points` ring, its names formatted by Python (a format spec C lacks)
PYTHON_NAMED_8M: dict[str, Any] = {
    "name": "python-named-8m",
    "servers": {"count": 10},
    "generator": {"construction": "points", "points_per_weight": 838_861,
                  "point_name": "{server}-{j:07d}", "hash": "blake2b-64"},
    "keys": {"count": 1_000},
    "measure": {"layouts": ["cffi-packed-64"], "metrics": ["balance"], "repeats": 1},
}


def _declares_build_price(cls: type[Any]) -> bool:
    """A rate of its own (or its family's), or a build price computed its own way."""
    overridden = getattr(cls.estimated_build_seconds, "__func__", None) is not \
        Routing.estimated_build_seconds.__func__  # type: ignore[attr-defined]
    return cls.build_seconds_per_entry is not None or overridden


@pytest.mark.parametrize("cls", BUILT_IN, ids=[cls.name for cls in BUILT_IN])
def test_every_registered_algorithm_has_a_build_price(cls: type[Any]) -> None:
    """A newly registered algorithm fails here until it says what its build costs
    (`build_seconds_per_entry`, measured by benchmarks/build_rates.py)."""
    assert cls.name in ALGORITHMS
    assert _declares_build_price(cls), (
        f"algorithm {cls.name!r} has no build price: set build_seconds_per_entry "
        "(benchmarks/build_rates.py measures it) or define estimated_build_seconds")


def test_the_default_build_price_is_not_mistaken_for_a_declared_one() -> None:
    class Unpriced(Routing):
        name = "unpriced"

    assert not _declares_build_price(Unpriced)


@pytest.mark.parametrize("name", list(CONSTRUCTIONS))
def test_every_construction_has_a_build_rate(name: str) -> None:
    assert name in SECONDS_PER_POINT, f"construction {name!r} has no build rate"


def test_layouts_are_priced_by_what_they_build() -> None:
    """Python objects an entry cost the most; a flat array copy the least."""
    assert build_seconds_per_entry("tuples") == OBJECT_BUILD_SECONDS_PER_ENTRY
    assert build_seconds_per_entry("cffi-packed") == FLAT_BUILD_SECONDS_PER_ENTRY
    assert FLAT_BUILD_SECONDS_PER_ENTRY < build_seconds_per_entry("bucketed") \
        < OBJECT_BUILD_SECONDS_PER_ENTRY
    assert all(build_seconds_per_entry(name) > 0 for name in LAYOUTS)


def _params(name: str, table: dict[str, Any]) -> dict[str, Any]:
    return ALGORITHMS[name].parse_params(keyword_fields(name, table))


@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_build_seconds_grow_with_the_fleet(name: str) -> None:
    """Each algorithm's build price is positive (range's build is its sample's sort, priced
    by its `estimated_seconds`) and does not shrink when the fleet grows."""
    small, large = (fleet_servers(n, (1.0,), "10.0.{i}.1:80") for n in (20, 400))
    params = _params(name, {})
    cls = ALGORITHMS[name]
    seconds_small, why = cls.estimated_build_seconds(small, params)
    seconds_large, _ = cls.estimated_build_seconds(large, params)
    assert seconds_large >= seconds_small >= 0
    assert why
    if name != "range":
        assert seconds_large > 0


def test_a_python_named_ring_costs_more_than_a_c_named_one() -> None:
    servers = fleet_servers(10, (1.0,), "s-{i}")
    ring = ALGORITHMS["ring"]
    c_named = ring.estimated_build_seconds(servers, _params("ring", {
        "points_per_weight": 100_000, "hash": "blake2b-64"}))[0]
    python_named = ring.estimated_build_seconds(servers, _params("ring", {
        "points_per_weight": 100_000, "hash": "blake2b-64", "point_name": "{server}-{j:07d}"}))
    assert python_named[0] > 10 * c_named
    assert "Python" in python_named[1]


def _loop_counts(weights: list[float], minimum: int, maximum: int) -> list[int]:
    """Envoy's running sums one step at a time, as ring_hash_lb.cc walks them."""
    smallest = min(weights)
    scale = min(math.ceil(smallest * minimum) / smallest, float(maximum))
    current = target = 0.0
    counts = []
    for weight in weights:
        target += scale * weight
        taken = 0
        while current < target:
            taken += 1
            current += 1
        counts.append(taken)
    return counts


@settings(max_examples=200, deadline=None)
@given(weights=st.lists(st.integers(1, 1_000), min_size=1, max_size=30),
       minimum=st.integers(1, 5_000), extra=st.integers(0, 5_000))
def test_envoy_counts_in_one_step_match_the_loop(weights: list[int], minimum: int,
                                                 extra: int) -> None:
    """`hash_counts` takes each host's steps at once (the estimate asks for it, and an 8M
    ring's loop took seconds); the counts are the loop's."""
    total = sum(weights)
    normalised = [weight / total for weight in weights]
    assert hash_counts(normalised, minimum, minimum + extra)[1] == \
        _loop_counts(normalised, minimum, minimum + extra)


def _refused(document: dict[str, Any], tmp_path: Path,
             capsys: pytest.CaptureFixture[str]) -> str:
    path = tmp_path / f"{document['name']}.toml"
    path.write_text(toml_document(document), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["run", str(path), "--no-progress", "--no-history", "--out", str(out),
                 "--max-minutes", "0.05"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert not out.exists() or not any(out.iterdir())
    return err


def test_the_8m_envoy_ring_with_a_movement_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The hostile pass's case: refused under 0.05 minutes (3 s) before any work, the line
    naming the builds and the fields that set them."""
    err = _refused(ENVOY_8M, tmp_path, capsys)
    assert "--max-minutes 0.05" in err
    assert "8,388,608 points of envoy_ring_hash built" in err
    assert "the ring's size" in err


def test_a_large_python_named_ring_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = _refused(PYTHON_NAMED_8M, tmp_path, capsys)
    assert "points named and hashed in Python" in err


def test_each_build_a_run_makes_is_priced(tmp_path: Path) -> None:
    """The 8M Envoy run builds its ring twice (the fleet, then the fleet after the
    operation, for movement): both are in the run's seconds."""
    path = tmp_path / "envoy.toml"
    path.write_text(toml_document(ENVOY_8M), encoding="utf-8")
    scenario = load_scenario(path)
    recipe = scenario.recipes()[0]
    one, _ = ALGORITHMS["ring"].estimated_build_seconds(scenario.ring_servers(), recipe.params)
    assert run_cost(scenario).seconds >= 2 * one > 0
    without = dict(ENVOY_8M, operations=[])
    path.write_text(toml_document(without), encoding="utf-8")
    assert one <= run_cost(load_scenario(path)).seconds < 2 * one


def test_a_process_prices_every_ring_in_each_layout() -> None:
    """scenarios/process-cloudflare.toml: 32 rings of the servers holding each combination
    of capabilities, each filtered and built in three layouts; their entries are the
    ring's, each server counted once per ring it is in (8,125,932 built in the committed
    result, 8,126,400 estimated before collisions), and they name the run's seconds."""
    scenario = load_scenario(ROOT / "scenarios" / "process-cloudflare.toml")
    cost = run_cost(scenario)
    assert cost.why_seconds.startswith("[process]: 32 rings of 8,126,400 entries in all")
    layouts = scenario.measure.options["process"].layouts
    each = FILTER_SECONDS_PER_ENTRY + sum(build_seconds_per_entry(name) for name in layouts)
    assert cost.seconds >= 8_126_400 * each


def test_a_process_sample_prices_the_rings_it_builds(tmp_path: Path) -> None:
    """process-cloudflare with `sample_rings = 2` builds two rings, the largest among them
    (`ProcessMetric._which_to_build`): priced as the two largest, fewer seconds than all
    32 and named so."""
    source = (ROOT / "scenarios" / "process-cloudflare.toml").read_text(encoding="utf-8")
    assert "\n[process]\n" in source
    path = tmp_path / "sampled.toml"
    path.write_text(source.replace("\n[process]\n", "\n[process]\nsample_rings = 2\n"),
                    encoding="utf-8")
    every = run_cost(load_scenario(ROOT / "scenarios" / "process-cloudflare.toml"))
    sampled = run_cost(load_scenario(path))
    assert sampled.why_seconds.startswith("[process]: 2 rings of ")
    assert 0 < sampled.seconds < every.seconds
