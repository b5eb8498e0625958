"""Equivalence: the random k of the same cv_arcs as a recipe's rings, and the memory ratio."""

from __future__ import annotations

import json
import math

import pytest

from harness.core.errors import ScenarioError
from harness.core.model import Result
from harness.metrics.equivalence import (
    EXTRAPOLATED,
    INTERPOLATED,
    CurvePoint,
    Equivalence,
    equivalent,
    fit_c,
    interpolated_k,
    theory_c,
)
from harness.report.markdown import report
from harness.report.results import result_from_json
from harness.report.sections import result_report
from harness.run.runner import run_scenario
from harness.run.scenario import load_scenario, parse_scenario
from tests.paths import ROOT


def point(k: int, cv: float, entries: int = 0) -> CurvePoint:
    return CurvePoint(k, entries, entries, cv, 1.0, 0.0)


def document(**equivalence: object) -> dict[str, object]:
    return {
        "servers": {"count": 30},
        "generator": {"construction": "allocated", "points_per_weight": 4},
        "keys": {"count": 10_000},
        "measure": {"layouts": [], "metrics": ["balance"]},
        "equivalence": {
            "fleets": [{"servers": 30}, {"servers": 60, "weights": [1, 2, 5]}],
            "points_per_weight": [1, 4, 16, 64], "max_points": 2_000,
            "against": {"construction": "points", "hash": "blake2b-32",
                        "points_per_weight": [16, 64, 256, 1_024], "max_points": 40_000},
            **equivalence,
        },
    }


@pytest.fixture(scope="module")
def small() -> Result:
    return run_scenario(parse_scenario(document(), "eq.toml"), show_progress=False)


def test_fit_of_an_exact_law_recovers_c() -> None:
    """On points lying on c / sqrt(k), the fit gives c, and the equivalent k inverts it."""
    curve = [point(k, 0.9 / math.sqrt(k)) for k in (16, 64, 256)]
    assert fit_c(curve) == pytest.approx(0.9)
    assert interpolated_k(curve, 0.9 / math.sqrt(100)) == pytest.approx(100)
    assert interpolated_k(curve, 0.5) is None  # above the measured range


def test_interpolation_is_linear_in_log_log() -> None:
    """Between two measured points the equivalent k is log-linear, not linear."""
    curve = [point(10, 0.1), point(1000, 0.001)]
    assert interpolated_k(curve, 0.01) == pytest.approx(100)


def test_equivalent_row_says_how_it_was_found() -> None:
    """Inside the curve: interpolated; outside: from the fit, marked; both recorded; the
    memory ratio is random points (k x total weight) over the ring's entries."""
    curve = [point(k, 1 / math.sqrt(k)) for k in (16, 64)]
    inside = equivalent(point(8, 1 / math.sqrt(32), entries=80), curve, 1.0, 10.0)
    assert inside.method == INTERPOLATED and inside.random_k == pytest.approx(32)
    assert inside.memory_ratio == pytest.approx(32 * 10 / 80)
    outside = equivalent(point(8, 0.01, entries=80), curve, 1.0, 10.0)
    assert outside.method == EXTRAPOLATED and outside.random_k == pytest.approx(10_000)
    assert outside.random_k_fit == outside.random_k
    exact = equivalent(point(8, 0.0, entries=80), curve, 1.0, 10.0)
    assert exact.random_k is None and exact.memory_ratio is None


def test_theory_c_of_equal_and_mixed_weights() -> None:
    """c**2 = mean(1/w) - 1/sum(w): 1 - 1/N for equal weights."""
    assert theory_c([1.0] * 100) == pytest.approx(math.sqrt(0.99))
    assert theory_c([1.0, 2.0, 5.0]) == pytest.approx(math.sqrt((1 + 0.5 + 0.2) / 3 - 1 / 8))


def test_the_run_measures_every_fleet_within_its_caps(small: Result) -> None:
    """Each fleet gets its random curve and its recipe rows; rings over a cap are listed,
    not built; random rings scatter round the Beta-share law."""
    found = small.runs[0].figure("equivalence")
    assert isinstance(found, Equivalence)
    equal, weighted = found.fleets
    assert [p.points_per_weight for p in equal.random] == [16, 64, 256, 1_024]
    assert [r.ring.points_per_weight for r in equal.rows] == [1, 4, 16, 64]
    # 60 servers of mean weight 8/3: 1,024 random points per weight is 163,840 > 40,000
    assert weighted.random_not_built == [256, 1_024]
    assert weighted.rows_not_built == [16, 64]
    for fleet in (equal, weighted):
        assert fleet.fit_c == pytest.approx(fleet.theory_c, rel=0.25)
        for row in fleet.rows:
            assert row.ring.entries == sum(max(1, round(row.ring.points_per_weight * w))
                                           for w in [fleet.weights[i % len(fleet.weights)]
                                                     for i in range(fleet.servers)])
            assert row.random_k is not None and row.memory_ratio is not None
    # allocated tokens beat random points: more random points for the same CV
    assert all(r.memory_ratio is not None and r.memory_ratio > 1 for r in equal.rows[1:])


def test_the_result_reads_back_and_renders(small: Result) -> None:
    """The record survives JSON, and the report has a table and a chart per fleet."""
    again = result_from_json(json.loads(json.dumps(small.to_json())))
    assert again.runs[0].figure("equivalence") == small.runs[0].figure("equivalence")
    model = result_report(small)
    sections = [s for s in model.sections if "against random points" in s.title]
    assert len(sections) == 2 and all(s.charts for s in sections)
    assert "random k, same cv_arcs" in report(model) and "not built (over 40,000" in report(model)


@pytest.mark.parametrize(("change", "message"), [
    ({"fleets": []}, "equivalence.fleets must be a non-empty list"),
    ({"fleets": [{"servers": 10, "weights": [1, -2]}]}, "equivalence.fleets[0].weights"),
    ({"against": {"construction": "points", "hash": "nope", "points_per_weight": 16}},
     "equivalence.against.hash"),
    ({"max_points": 0}, "equivalence.max_points"),
    ({"fleets": [{"servers": 10, "colour": 1}]}, "colour"),
])
def test_bad_options_are_refused_before_work(change: dict[str, object], message: str) -> None:
    with pytest.raises(ScenarioError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_scenario(document(**change), "bad.toml")


def test_nginx_fleets_of_fractional_weights_are_refused() -> None:
    """A fleet is checked against both recipes before any work (nginx: integer weights)."""
    bad = document(fleets=[{"servers": 10, "weights": [1.5]}])
    bad["generator"] = {"construction": "nginx"}
    with pytest.raises(ScenarioError, match=r"equivalence.fleets\[0\] must be servers"):
        parse_scenario(bad, "bad.toml")


def test_the_shipped_scenario_loads() -> None:
    """allocated-vs-random: four fleets, allocated k = 1 to 256, random k = 16 to 100,000."""
    scenario = load_scenario(ROOT / "scenarios" / "allocated-vs-random.toml")
    options = scenario.measure.options["equivalence"]
    assert [(f.servers, f.weights) for f in options.fleets] == [
        (100, (1.0,)), (2048, (1.0,)), (100, (1.0, 2.0, 5.0)), (2048, (1.0, 2.0, 5.0))]
    assert options.points_per_weight[0] == 1 and options.points_per_weight[-1] == 256
    assert options.against_points_per_weight[0] == 16
    assert options.against_points_per_weight[-1] == 100_000
