"""The hot-keys metric: zipf traffic replayed to owners, over replicas, split, and cached."""

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from harness.core.errors import ScenarioError
from harness.metrics.hot_keys import HotKeys, policy_load
from harness.run.runner import run_scenario
from harness.run.scenario import load_scenario

Write = Callable[[str], Path]


def _hot_keys(write_scenario: Write, table: str) -> HotKeys:
    scenario = load_scenario(write_scenario(
        "[servers]\ncount = 20\n[generator]\npoints_per_weight = 160\n[keys]\ncount = 100\n"
        f"[measure]\nlayouts = []\nmetrics = []\n[hot_keys]\n{table}"))
    (run,) = run_scenario(scenario, show_progress=False).runs
    record = run.figure("hot_keys")
    assert isinstance(record, HotKeys)
    return record


def test_each_remedy_lowers_the_busiest_server(write_scenario: Write) -> None:
    """Zipf(1.2) over 5,000 objects on 20 servers: the owner of the hottest object is far
    above the mean; replicas, splitting and a front cache each bring it down."""
    record = _hot_keys(write_scenario, "universe = 5000\nrequests = 200000\n"
                                       "zipf_exponent = 1.2\ncopies = 3\ntop_keys = 20\n"
                                       "sub_keys = 8\ncache_objects = 200")
    primary, replicas, split, cached = record.policies
    assert primary.name == "primary" and primary.fleet_requests == 200_000
    # The hottest object alone lands on one server: that server has at least its share.
    assert primary.hottest_share >= record.hottest_object_share
    assert primary.peak_to_mean > 3
    for remedy in (replicas, split, cached):
        assert remedy.peak_to_mean < primary.peak_to_mean
    assert cached.fleet_requests == round(200_000 * (1 - record.cache_hit_ratio))
    assert 0.5 < record.cache_hit_ratio < 1


def test_no_hot_keys_to_split_is_the_primary(write_scenario: Write) -> None:
    """top_keys = 0 splits nothing: the split policy routes as the primary does."""
    record = _hot_keys(write_scenario, "universe = 1000\nrequests = 20000\ntop_keys = 0")
    primary, _, split, _ = record.policies
    assert (split.peak_to_mean, split.cv) == (primary.peak_to_mean, primary.cv)


def test_policy_load_follows_the_definitions() -> None:
    """Peak-to-mean and CV per unit weight, hottest share of the requests given."""
    policy = policy_load("x", np.array([0, 0, 0, 1]), np.array([1.0, 1.0]))
    assert policy.fleet_requests == 4 and policy.hottest_share == 0.75
    assert policy.peak_to_mean == pytest.approx(1.5) and policy.cv == pytest.approx(0.5)


@pytest.mark.parametrize(("body", "message"), [
    ('[algorithm]\nname = "maglev"\n[hot_keys]\n', "hot_keys must be left out for maglev"),
    ("[hot_keys]\ncopies = 9\n", r"hot_keys.copies must be at most the servers on the ring "
                                 r"\(8\)"),
    ("[hot_keys]\nsub_keys = 0\n", "hot_keys.sub_keys must be an integer from 1 to 1,024"),
    ("[hot_keys]\nzipf_exponent = -1\n", "hot_keys.zipf_exponent must be a finite positive"),
])
def test_refusals(write_scenario: Write, body: str, message: str) -> None:
    """Each problem is one line naming the field, before any work."""
    with pytest.raises(ScenarioError, match=message):
        load_scenario(write_scenario(f"[servers]\ncount = 8\n{body}"))
