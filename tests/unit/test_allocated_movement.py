"""Movement of allocated rings: removal from the middle as it falls, and with a rebalance."""

from __future__ import annotations

import numpy as np
import pytest

from harness.core.model import Result
from harness.core.ring import reference_owners
from harness.core.servers import numbered_servers
from harness.core.stats import arc_shares, cv
from harness.metrics.movement import Movement
from harness.recipes.algorithms.ring import RingAlgorithm
from harness.recipes.constructions.allocated import allocate, remove_server
from harness.report.markdown import report
from harness.report.sections import result_report
from harness.run.runner import run_scenario
from harness.run.scenario import parse_scenario


def scenario_document(construction: str, removed: str) -> dict[str, object]:
    return {
        "name": "allocated-movement",
        "servers": {"count": 60},
        "generator": {"construction": construction, "points_per_weight": 8},
        "keys": {"count": 50_000},
        "measure": {"layouts": ["numpy-aligned"], "metrics": ["balance", "movement"]},
        "operations": [{"kind": "remove", "server": removed}, {"kind": "add", "server": "new"}],
    }


@pytest.fixture(scope="module")
def middle() -> Result:
    scenario = parse_scenario(scenario_document("allocated", "server-30"), "middle.toml")
    return run_scenario(scenario, show_progress=False)


def test_removing_from_the_middle_moves_only_its_keys(middle: Result) -> None:
    """As it falls, only the removed server's keys move; a rebuild from the shorter list
    would re-place the 29 servers that joined after it and move far more."""
    remove, add = middle.runs[0].figure("movement")
    assert isinstance(remove, Movement) and remove.as_it_falls and not add.as_it_falls
    assert remove.ring_only_changed_server
    assert remove.ring_moved_fraction == pytest.approx(remove.changed_server_share, abs=0.01)
    servers = numbered_servers(60)
    full = allocate(servers, 8)
    rebuilt = allocate([s for s in servers if s.name != "server-30"], 8)
    keys = np.arange(0, 2**32, 4099, dtype=np.uint32)
    before = np.asarray(full.servers)[reference_owners(full, keys)]
    after = np.asarray(rebuilt.servers)[reference_owners(rebuilt, keys)]
    assert np.count_nonzero(before != after) / len(keys) > 3 * remove.ring_moved_fraction


def test_the_rebalance_reaches_the_cv_before_the_removal(middle: Result) -> None:
    """The rebalance brings cv_arcs back to the full ring's, re-placing a few points, and the
    extra keys it moves match the exact share it moved."""
    remove, add = middle.runs[0].figure("movement")
    assert add.rebalance is None
    r = remove.rebalance
    assert r is not None
    full = middle.runs[0].figure("balance").cv_arcs
    assert r.cv_target == pytest.approx(full)
    assert r.cv_fallen > r.cv_target >= r.cv_after
    assert 0 < r.points_moved <= 20
    assert 0 < r.extra_moved_share < 0.02
    assert r.extra_moved_fraction == pytest.approx(r.extra_moved_share, abs=0.003)


def test_rebalance_after_matches_the_construction_functions() -> None:
    """The metric's fallen and rebalanced rings are the construction's own functions'."""
    servers = numbered_servers(40)
    ring = RingAlgorithm.build(servers, construction="allocated", points_per_weight=8)
    fallen = ring.without(12)
    assert fallen is not None and fallen.servers == tuple(servers[:12] + servers[13:])
    assert np.array_equal(fallen.ring.positions, remove_server(ring.ring, 12).positions)
    target = cv(arc_shares(ring.ring, 40))
    done = fallen.rebalanced(target)
    assert done is not None
    rebalanced, how = done
    assert how.cv_after <= target and rebalanced.servers == fallen.servers
    keys = np.arange(0, 2**32, 4099, dtype=np.uint32)
    moved = np.count_nonzero(reference_owners(fallen.ring, keys)
                             != rebalanced.reference_owners(keys)) / len(keys)
    assert moved == pytest.approx(how.moved_share, abs=0.002)


def test_hashed_points_are_rebuilt_and_not_rebalanced() -> None:
    """Hashed points have no removal of their own: rebuilt from the list, no rebalance."""
    ring = RingAlgorithm.build(numbered_servers(10), points_per_weight=8)
    assert ring.without(3) is None and ring.rebalanced(0.01) is None
    scenario = parse_scenario(scenario_document("points", "server-30"), "points.toml")
    remove, _ = run_scenario(scenario, show_progress=False).runs[0].figure("movement")
    assert not remove.as_it_falls and remove.rebalance is None


def test_the_report_shows_the_rebalance(middle: Result) -> None:
    """The Movement section names the removal as it falls and tabulates the rebalance."""
    markdown = report(result_report(middle))
    assert "remove server-30 (as it falls)" in markdown
    assert "points re-placed" in markdown and "extra keys moved" in markdown
