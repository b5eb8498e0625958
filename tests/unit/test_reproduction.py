"""Tolerance logic and REPRODUCTION.md rendering, on small synthetic results."""

from __future__ import annotations

from typing import Any

import pytest

from harness.apps.reproduction.bands import (
    binomial_band,
    cv_rows,
    poisson_band,
    rounding_band,
    simulated_band,
)
from harness.apps.reproduction.checks import Check, Figure, evaluate, show
from harness.apps.reproduction.figures import collision_trend_std
from harness.apps.reproduction.reading import Results, packing_saving, run_of
from harness.apps.reproduction.render import checks_table, sweep_table, tolerance_reasons
from harness.core.errors import HarnessError
from harness.core.model import Machine, Parity, Result, RingInfo, Run, Subject
from harness.core.stats import theory_cv
from harness.metrics.balance import Balance
from harness.metrics.memory import Memory
from harness.report import markdown


def _figure(key: str, published: float | str, value: float, band: tuple[float, float],
            why: str = "because") -> Figure:
    return Figure(key, f"figure {key}", published, "an article", "%", 2,
                  lambda _r: value, lambda _r: band, why)


def _balance(servers: int, cv_arcs: float) -> Balance:
    return Balance(servers=servers, keys=1000, min_keys=200, max_keys=300, mean_keys=250.0,
                   max_over_mean=1.2, cv_keys=0.2, cv_arcs=cv_arcs, cv_theory=0.3,
                   cv_floor=0.31, arc_shares=tuple([1 / servers] * servers))


def _memory(structure_bytes: int, bytes_per_entry: float = 6.0) -> Memory:
    return Memory(structure_bytes=structure_bytes, bytes_per_entry=bytes_per_entry,
                  build_peak_bytes=0, lookup_peak_bytes=0, rss_before_bytes=0,
                  rss_after_bytes=0)


def _result(runs: list[Run]) -> Result:
    return Result(format="ring-harness-result", format_version=2, harness_version="t",
                  scenario={}, scenario_file="s.toml", scenario_sha256="",
                  machine=Machine("cpu", 2, None, "os", "3.11", "CPython", {}),
                  git_commit=None, started_at="t", duration_s=0.0, runs=runs)


def _run(k: int, subjects: list[Subject], **figures: Any) -> Run:
    return Run(label=f"k={k}", algorithm="ring", params={}, points_per_weight=k,
               parity=Parity(1, 1, [], True), ring=RingInfo(4, 4 * k, 4 * k, 32, "h"),
               subjects=subjects, figures=figures)


def _sweep_results(with_memory: bool = True) -> Results:
    runs = [_run(k, [Subject("numpy-packed", "layout", 4 * k, 24 * k, 6,
                             figures={"memory": _memory(24 * k)} if with_memory else {})],
                 balance=_balance(4, cv))
            for k, cv in ((10, 0.27), (20, 5.0))]
    return {"sweep": _result(runs)}


def test_rounding_band_holds_exactly_the_values_that_round_to_the_published_value() -> None:
    """3.1464 rounds to 3.15 and lies in its band; 3.144 does not."""
    low, high = rounding_band(3.15, 2)
    assert low <= 3.1464 <= high
    assert not low <= 3.144 <= high


def test_rounding_band_to_tens() -> None:
    """A published value rounded to tens (7,450) accepts 7,445.96 and refuses 7,444."""
    low, high = rounding_band(7_450, -1)
    assert low <= 7_445.96 <= high and not low <= 7_444 <= high


def test_check_inside_and_outside() -> None:
    """A value in the band is inside; one past its edge is not."""
    assert evaluate(_figure("x", 1.0, 1.2, (0.9, 1.3)), {}).inside
    assert not evaluate(_figure("y", 1.0, 1.4, (0.9, 1.3)), {}).inside


def test_published_inside_is_none_for_a_qualitative_claim() -> None:
    """Words cannot fall in a band: published_inside is None, not False."""
    check = evaluate(_figure("q", "worse in 32 bits", 0.1, (0.0, 1.0)), {})
    assert check.published_inside is None
    assert evaluate(_figure("n", 2.0, 0.1, (0.0, 1.0)), {}).published_inside is False


def test_simulated_band_is_reproducible_and_covers_the_theory() -> None:
    """Same seed, same band; the band holds the formula's CV of shares."""
    points = [100] * 20
    first = simulated_band(points, cv_rows, trials=2_000)
    assert first == simulated_band(points, cv_rows, trials=2_000)
    assert first[0] < theory_cv(points) < first[1]


def test_simulated_band_narrows_with_more_points() -> None:
    """1/sqrt(k): the CV band at k=400 lies wholly below the band at k=25."""
    wide = simulated_band([25] * 50, cv_rows, trials=2_000)
    narrow = simulated_band([400] * 50, cv_rows, trials=2_000)
    assert narrow[1] < wide[0]


def test_poisson_and_binomial_bands() -> None:
    """Counting bands are about +-3 standard errors, skew at small means, never below zero."""
    low, high = poisson_band(100.0)
    assert abs(low - 70) <= 2 and abs(high - 130) <= 3
    assert poisson_band(1.16) == (0.0, 5.0)
    assert poisson_band(0.0) == (0.0, 0.0)
    low, high = binomial_band(0.75, 10_000)
    assert (low, high) == pytest.approx((0.75 - 3 * 0.00433, 0.75 + 3 * 0.00433), abs=1e-5)


def test_run_of_names_the_missing_scenario() -> None:
    """A missing result fails with the scenario's name and the command that makes it."""
    with pytest.raises(HarnessError, match=r"'absent'.*harness reproduce"):
        run_of({}, "absent")


def test_packing_saving_reads_allocator_bytes() -> None:
    """800 aligned bytes against 600 packed is a 25% saving."""
    layouts = [Subject("cffi-aligned", "layout", 100, 800, 8, figures={"memory": _memory(800)}),
               Subject("cffi-packed", "layout", 100, 600, 6, figures={"memory": _memory(600)})]
    results = {"pad": _result([_run(1, layouts)])}
    assert packing_saving(results, "pad", "cffi") == pytest.approx(25.0)


def test_checks_table_marks_figures_outside_their_band() -> None:
    """Inside reads yes, outside reads **NO**, and the band is printed in the unit."""
    checks = [Check(_figure("a", 1.0, 1.0, (0.5, 1.5)), 1.0, (0.5, 1.5)),
              Check(_figure("b", 1.0, 2.0, (0.5, 1.5)), 2.0, (0.5, 1.5))]
    table = markdown.table(checks_table(checks))
    assert "| a " in table and "| yes " in table
    assert "**NO**" in table.splitlines()[-1]
    assert "0.50% to 1.50%" in table


def test_tolerance_reasons_group_figures_with_one_reason() -> None:
    """Figures sharing a reason are listed on one line."""
    checks = [evaluate(_figure(k, 1.0, 1.0, (0, 2), why), {})
              for k, why in (("a", "same"), ("b", "same"), ("c", "other"))]
    assert tolerance_reasons(checks).splitlines() == ["- a, b: same.", "- c: other."]


def test_show_formats_units() -> None:
    """Percent and ratios attach their unit; counts get a spaced unit and separators."""
    assert show(3.146, "%", 2) == "3.15%"
    assert show(10955, "keys", 0) == "10,955 keys"
    assert show("words", "%", 2) == "words"


def test_sweep_table_judges_each_row_against_its_band() -> None:
    """A plausible cv_arcs reads inside, an impossible 500% reads **NO**; memory is per server."""
    rows = markdown.table(sweep_table(_sweep_results(), "sweep")).splitlines()[2:]
    assert "| yes " in rows[0] and "60 B (6.000 B/entry)" in rows[0]
    assert "**NO**" in rows[1]


def test_sweep_table_leaves_out_memory_when_not_measured() -> None:
    """Without a memory record the table has no memory column."""
    assert "memory per server" not in markdown.table(
        sweep_table(_sweep_results(with_memory=False), "sweep"))
    assert "memory per server" in markdown.table(sweep_table(_sweep_results(), "sweep"))


def test_collision_trend_is_rate_over_sqrt_12_when_collisions_are_rare() -> None:
    """Lowest-index-wins shifts shares by a trend of std ~ n/S / sqrt(12), growing with n."""
    assert collision_trend_std(0.001) == pytest.approx(0.001 / 12**0.5, rel=1e-3)
    assert collision_trend_std(0.05) > 10 * collision_trend_std(0.004)
