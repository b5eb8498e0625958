"""A weighted fleet is reported per unit weight everywhere: min, max, mean, peak-to-mean and
the hottest server agree with each other, and the raw counts have their own columns."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.core.stats import is_weighted, per_weight
from harness.core.tables import significant
from harness.metrics.balance import Balance
from harness.metrics.collisions import CollisionsMetric
from harness.metrics.load import Load
from harness.report import markdown
from harness.report.results import load_result
from harness.report.sections import result_report
from harness.run.runner import run_scenario
from harness.run.scenario import load_scenario
from tests.paths import ROOT

RESULTS = ROOT / "results"


def test_hottest_server_is_the_one_that_sets_the_peak() -> None:
    """A weight-4 server with the most keys is not the hottest when a weight-1 server holds
    more per unit weight (the fault the tutorial's fleet showed)."""
    spread = per_weight([110, 400, 230], [1, 4, 2])
    assert spread.hottest == 2  # 115 per unit weight, against 110 and 100
    assert (spread.min, spread.max) == (100, 115)
    assert spread.mean == pytest.approx((110 + 100 + 115) / 3)
    assert spread.peak_to_mean == pytest.approx(115 / spread.mean)
    assert spread.hottest_share == pytest.approx(230 / 740)


@given(st.lists(st.tuples(st.integers(0, 10_000), st.sampled_from([1.0, 2.0, 4.0, 0.5])),
                min_size=1, max_size=60).filter(lambda rows: sum(c for c, _ in rows) > 0))
def test_per_weight_matches_a_plain_loop(rows: list[tuple[int, float]]) -> None:
    """Against a plain loop over servers: the first server with the largest count per unit
    weight, its share of all counts, and min, max and mean of count / weight."""
    counts, weights = [c for c, _ in rows], [w for _, w in rows]
    loads = [c / w for c, w in rows]
    spread = per_weight(counts, weights)
    hottest = loads.index(max(loads))
    assert spread.hottest == hottest
    assert spread.max == max(loads) and spread.min == min(loads)
    assert spread.mean == pytest.approx(sum(loads) / len(loads))
    assert spread.hottest_share == pytest.approx(counts[hottest] / sum(counts))


def test_equal_weights_are_not_weighted() -> None:
    """Weights all equal read as raw counts; None (an older result) is not weighted."""
    assert not is_weighted([1.0, 1.0]) and not is_weighted(None)
    assert is_weighted([1.0, 2.0])


@pytest.fixture(scope="module")
def weighted_run(tmp_path_factory: pytest.TempPathFactory) -> object:
    folder = tmp_path_factory.mktemp("weighted")
    scenario = folder / "w.toml"
    servers = ", ".join(f'{{name = "s{i}", weight = {w}}}'
                        for i, w in enumerate([1] * 6 + [2] * 4 + [4] * 2))
    scenario.write_text(f'name = "w"\n[servers]\nlist = [{servers}]\n'
                        '[generator]\npoints_per_weight = [40, 4]\n[keys]\ncount = 30000\n'
                        '[measure]\nlayouts = []\nmetrics = ["balance", "load"]\n')
    return run_scenario(load_scenario(scenario), show_progress=False)


def test_balance_and_load_agree_per_unit_weight(weighted_run: object) -> None:
    """Balance and Load of the same keys name the same hottest server, which is the one
    with the most keys per unit weight, and the same peak-to-mean."""
    for run in weighted_run.runs:  # type: ignore[attr-defined]
        balance, load = run.figure("balance"), run.figure("load")
        assert isinstance(balance, Balance) and isinstance(load, Load)
        counts = np.array(balance.keys_per_server)
        weights = np.array(balance.weights)
        hottest = int(np.argmax(counts / weights))
        assert load.hottest_server == f"s{hottest}"
        assert balance.per_weight().hottest == hottest  # type: ignore[union-attr]
        assert load.max_over_mean == pytest.approx(balance.max_over_mean)
        assert load.max_over_mean == pytest.approx(
            (counts / weights).max() / (counts / weights).mean())


def test_weighted_tables_label_per_weight_and_raw_columns(weighted_run: object) -> None:
    """The weighted Balance and Load tables give per-unit-weight figures and the hottest
    server, then the raw counts in their own labelled columns."""
    page = markdown.report(result_report(weighted_run))  # type: ignore[arg-type]
    for heading in ("keys/weight min", "keys/weight max", "keys/weight mean",
                    "min keys (raw)", "max keys (raw)", "requests/weight max",
                    "max requests (raw)", "hottest server"):
        assert f"| {heading} " in page, heading
    run = weighted_run.runs[0]  # type: ignore[attr-defined]
    spread = run.figure("balance").per_weight()
    row = next(line for line in page.splitlines() if line.startswith(f"| {run.label} ")
               and "keys" not in line)
    assert f"| {spread.max:,.1f} " in row and f"| s{spread.hottest} " in row


@pytest.mark.parametrize("name", ["tutorial", "reproduce/c_weights", "allocated-weighted-100",
                                  "random-weighted-100"])
def test_committed_weighted_results_are_consistent(name: str) -> None:
    """In the committed weighted results, the hottest server's keys per unit weight over the
    mean is the peak-to-mean shown, and Load names the same server as Balance."""
    result = load_result(RESULTS / f"{name}.json")
    names = [s["name"] for s in result.scenario["servers"]]
    for run in result.runs:
        balance = run.figure("balance")
        spread = balance.per_weight()
        assert spread is not None, "re-measured with per-server counts"
        assert spread.peak_to_mean == pytest.approx(balance.max_over_mean)
        load = run.figure("load")
        if load is not None:
            assert load.hottest_server == names[spread.hottest]


@pytest.mark.parametrize(("value", "shown"), [(0.025, "0.025"), (0.0172, "0.0172"),
                                              (7450.3, "7,450"), (0.0, "0"), (1.5, "1.5"),
                                              (3.4e-12, "3.40e-12"), (12.0, "12")])
def test_expected_figures_keep_their_significant_digits(value: float, shown: str) -> None:
    """An expectation of 0.025 collisions reads 0.025, not 0.0."""
    assert significant(value).text == shown


def test_collisions_chart_draws_zero_counts() -> None:
    """Measured counts of 0 stay in the chart's data, on a symlog axis that can show them."""
    result = load_result(RESULTS / "reproduce" / "e_collisions_32.json")
    (section,) = CollisionsMetric().sections(result)
    (chart,) = section.charts
    values = chart.spec["data"]["values"]
    assert any(row["collisions"] == 0 and row["series"] == "measured" for row in values)
    assert chart.spec["layer"][0]["encoding"]["y"]["scale"] == {"type": "symlog"}


def test_share_chart_for_every_sweep_point(weighted_run: object) -> None:
    """One load-per-server chart per sweep point, not only the last one's."""
    (section,) = [s for s in result_report(weighted_run).sections  # type: ignore[arg-type]
                  if s.title == "Balance"]
    titles = [c.title for c in section.charts if c.title.startswith("Load per server")]
    assert len(titles) == 2 and "(k=40)" in titles[0] and "(k=4)" in titles[1]
