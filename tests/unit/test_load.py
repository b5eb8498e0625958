"""The load metric: requests per server under uniform keys and zipf traffic."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from harness.metrics.load import Load
from harness.run.runner import run_scenario
from harness.run.scenario import load_scenario


def _load(write_scenario: Callable[[str], Path], keys: str) -> Load:
    scenario = load_scenario(write_scenario(
        '[servers]\nlist = [{name = "a", weight = 1}, {name = "b", weight = 3}]\n'
        f'[generator]\npoints_per_weight = 500\n[keys]\n{keys}\n'
        '[measure]\nlayouts = []\nmetrics = ["load"]'))
    (run,) = run_scenario(scenario, show_progress=False).runs
    load = run.figure("load")
    assert isinstance(load, Load)
    return load


def test_uniform_load_is_judged_per_unit_weight(write_scenario: Callable[[str], Path]) -> None:
    """Weights 1:3 with 500 points per unit: load per unit weight is nearly even."""
    load = _load(write_scenario, "count = 40000")
    assert load.distribution == "uniform" and load.requests == 40_000 and load.servers == 2
    assert load.cv < 0.1 and load.max_over_mean < 1.1
    # The hottest server is the one with more requests per unit weight, not the one with
    # more requests (b, with three times a's weight).
    a, b = load.requests_per_server or (0, 0)
    assert load.hottest_server == ("a" if a / 1 >= b / 3 else "b")
    assert load.hottest_share == pytest.approx((a if load.hottest_server == "a" else b) / 40_000)
    assert b / 40_000 == pytest.approx(0.75, abs=0.05)


def test_zipf_traffic_is_replayed_request_by_request(
    write_scenario: Callable[[str], Path],
) -> None:
    """Under zipf(1.2) over 50 keys, the hottest key alone is a large share of requests, and
    the figures follow the definitions: cv and peak-to-mean of requests per unit weight."""
    load = _load(write_scenario, 'count = 20000\ndistribution = "zipf"\nuniverse = 50\n'
                                 'zipf_exponent = 1.2')
    assert load.distribution == "zipf" and load.requests == 20_000
    assert 0 < load.hottest_share < 1
    shares = np.array(load.requests_per_server) / load.requests
    per_weight = shares / np.array([1, 3])
    assert load.hottest_server == "ab"[int(np.argmax(per_weight))]
    assert load.hottest_share == pytest.approx(shares[int(np.argmax(per_weight))])
    assert load.cv == pytest.approx(per_weight.std() / per_weight.mean())
    assert load.max_over_mean == pytest.approx(per_weight.max() / per_weight.mean())
