"""Router processes (one ring per eligibility set) and migrations between recipes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from harness.core.errors import ScenarioError
from harness.core.servers import eligibility_sets
from harness.metrics.migration.metric import Migration, biggest_spike, extra_totals
from harness.metrics.process import ProcessCost
from harness.report import markdown
from harness.report.sections import result_report
from harness.run.runner import run_scenario
from harness.run.scenario import load_scenario


def test_eligibility_is_every_combination_present() -> None:
    """Every subset of some server's capabilities, and the empty set (all servers)."""
    sets = eligibility_sets([("a", "b"), ("b",), ()], [])
    assert sets == [(), ("a",), ("b",), ("a", "b")]
    assert eligibility_sets([("a",)], [("b",), ("b",), ()]) == [("b",), ()]


PROCESS = """
[servers]
list = [{{ name = "a", weight = 1, capabilities = ["pci"] }},
        {{ name = "b", weight = 2, capabilities = ["pci", "eu"] }},
        {{ name = "c", weight = 1, capabilities = ["eu"] }},
        {{ name = "d", weight = 3 }}]
[generator]
points_per_weight = 40
[keys]
count = 500
[measure]
layouts = ["numpy-packed"]
metrics = ["balance"]
[process]
layouts = ["numpy-aligned", "numpy-packed"]
{extra}
"""


def _process(write_scenario: Callable[[str], Path], extra: str = "") -> ProcessCost:
    (run,) = run_scenario(load_scenario(write_scenario(PROCESS.format(extra=extra))),
                          show_progress=False).runs
    cost = run.figure("process")
    assert isinstance(cost, ProcessCost)
    return cost


def test_process_rings_and_totals(write_scenario: Callable[[str], Path]) -> None:
    """One ring per set; 8- and 6-byte layouts cost 8 and 6 bytes an entry plus the owner
    maps; the server table is counted once in the total."""
    cost = _process(write_scenario)
    assert [r.requires for r in cost.rings] == [[], ["eu"], ["pci"], ["eu", "pci"]]
    assert [r.servers for r in cost.rings] == [4, 2, 2, 1]
    assert all(r.built for r in cost.rings) and not cost.estimated
    for ring in cost.rings:
        assert ring.bytes["numpy-aligned"] == 8 * ring.entries + 2 * ring.servers
        assert ring.bytes["numpy-packed"] == 6 * ring.entries + 2 * ring.servers
    assert cost.shared_bytes == sum(len(n) + 8 for n in "abcd")
    for layout in cost.layouts:
        assert cost.total_bytes[layout] == sum(r.bytes[layout] for r in cost.rings) + (
            cost.shared_bytes)


def test_a_sample_of_rings_is_built_and_the_rest_estimated(
    write_scenario: Callable[[str], Path],
) -> None:
    """sample_rings = 2: two rings built (the largest among them), the others estimated at
    the bytes per entry measured on those two, and the result says so."""
    cost = _process(write_scenario, "sample_rings = 2")
    built = [r for r in cost.rings if r.built]
    assert len(built) == cost.built_rings == 2 and cost.estimated
    assert max(cost.rings, key=lambda r: r.entries).built
    assert cost.bytes_per_entry["numpy-packed"] == pytest.approx(6.0)
    for ring in cost.rings:
        if not ring.built:
            assert ring.build_s is None
            assert ring.bytes["numpy-packed"] == 6 * ring.entries + 2 * ring.servers


MIGRATION = """
[servers]
count = 40
[generator]
points_per_weight = 200
[keys]
count = 500
[measure]
layouts = ["numpy-packed"]
metrics = ["balance"]
[migration]
to = {{ points_per_weight = {to} }}
stages = [0.05, 0.25, 0.5, 1.0]
cache_objects = 300
universe = 60000
requests_per_stage = 100000
warmup_requests = 400000
"""


def test_moved_fraction_follows_the_subset_formula(
    write_scenario: Callable[[str], Path],
) -> None:
    """200 -> 20 points per server at N = 40: (1 - 0.1)(1 - 1/40) = 87.75% move, measured
    over 60,000 objects within a few points of it; and staging lowers the origin peak."""
    (run,) = run_scenario(load_scenario(write_scenario(MIGRATION.format(to=20))),
                          show_progress=False).runs
    migration = run.figure("migration")
    assert isinstance(migration, Migration)
    assert migration.formula_moved_fraction == pytest.approx(0.9 * (1 - 1 / 40))
    assert migration.moved_fraction == pytest.approx(migration.formula_moved_fraction,
                                                     abs=0.03)
    assert migration.bytes_before is not None and migration.bytes_after is not None
    assert migration.bytes_during == migration.bytes_before + migration.bytes_after
    assert migration.staged_peak_rate < migration.all_at_once_peak_rate
    assert [s.share for s in migration.stages] == [0.05, 0.25, 0.5, 1.0]
    extra = [s.extra_misses for s in migration.stages]
    assert extra[0] < extra[-1]


def test_migration_gives_both_rings_balance_and_names_the_layout(
    write_scenario: Callable[[str], Path],
) -> None:
    """The new ring's exact balance beside the old one's (ten times fewer points: about
    sqrt(10) times the CV, and a higher peak), and the layout each byte figure counts."""
    result = run_scenario(load_scenario(write_scenario(MIGRATION.format(to=20))),
                          show_progress=False)
    (run,) = result.runs
    migration = run.figure("migration")
    assert isinstance(migration, Migration)
    layout = run.params["layout"]
    assert migration.form_before == migration.form_after == layout
    assert migration.cv_arcs_before == pytest.approx(run.figure("balance").cv_arcs)
    assert migration.cv_arcs_after is not None and migration.cv_arcs_before is not None
    assert 2 < migration.cv_arcs_after / migration.cv_arcs_before < 5
    assert migration.peak_to_mean_after is not None and migration.peak_to_mean_before is not None
    assert migration.peak_to_mean_after > migration.peak_to_mean_before > 1
    page = markdown.report(result_report(result))
    assert f"entries' own bytes before / after ({layout})" in page
    assert f"entries' own bytes during (both resident, {layout})" in page
    assert "cv_arcs before / after (exact shares per unit weight)" in page


@pytest.mark.parametrize(("to", "message"), [
    ("0", "migration.to.points_per_weight must be an integer from 1"),
    ('"x", hash = "sha1"', "migration.to"),
])
def test_bad_migration_target_is_refused(to: str, message: str,
                                         write_scenario: Callable[[str], Path]) -> None:
    """The new recipe is checked by the ring itself, before any work."""

    with pytest.raises(ScenarioError, match=message):
        load_scenario(write_scenario(MIGRATION.format(to=to)))


def test_a_process_migrates_ring_by_ring(write_scenario: Callable[[str], Path]) -> None:
    """[process] and [migration] together: each ring's moved fraction and memory."""
    text = PROCESS.format(extra='[migration]\nto = { points_per_weight = 4 }\n'
                                'stages = [0.5, 1.0]\ncache_objects = 50\nuniverse = 5000\n'
                                'requests_per_stage = 20000\nwarmup_requests = 20000\n')
    (run,) = run_scenario(load_scenario(write_scenario(text)), show_progress=False).runs
    migration = run.figure("migration")
    assert isinstance(migration, Migration) and migration.rings is not None
    assert [r.requires for r in migration.rings] == [[], ["eu"], ["pci"], ["eu", "pci"]]
    whole = migration.rings[0]
    assert whole.moved_fraction == pytest.approx(migration.moved_fraction)
    assert migration.rings[-1].moved_fraction == 0.0  # one server: nothing can move
    assert all(r.bytes_after < r.bytes_before for r in migration.rings)


def test_migration_to_another_algorithm(write_scenario: Callable[[str], Path]) -> None:
    """`to = { algorithm = "maglev" }`: the ring's keys move to Maglev's owners; about
    (1 - 1/N) of them, since the two place keys independently."""
    text = MIGRATION.format(to=20).replace('to = { points_per_weight = 20 }',
                                           'to = { algorithm = "maglev", table_size = 4099 }')
    (run,) = run_scenario(load_scenario(write_scenario(text)), show_progress=False).runs
    migration = run.figure("migration")
    assert isinstance(migration, Migration)
    assert migration.formula_moved_fraction is None
    assert migration.moved_fraction == pytest.approx(1 - 1 / 40, abs=0.02)
    assert migration.to_label == "maglev M=4,099"
    with pytest.raises(ScenarioError, match=r"migration\.to\.algorithm must be one of"):
        load_scenario(write_scenario(text.replace('"maglev"', '"nope"')))
    with pytest.raises(ScenarioError, match=r"migration\.to\.table_size must be a prime"):
        load_scenario(write_scenario(text.replace("4099", "4096")))


def test_staged_rollout_costs_the_sum_of_its_stages(
    write_scenario: Callable[[str], Path],
) -> None:
    """The total extra origin fetches of a staged rollout are the sum of its stages', and
    the page gives them beside the all-at-once total, the biggest spike and every change."""
    result = run_scenario(load_scenario(write_scenario(MIGRATION.format(to=20))),
                          show_progress=False)
    migration = result.runs[0].figure("migration")
    assert isinstance(migration, Migration)
    staged, once = extra_totals(migration)
    assert staged == sum(s.misses - s.steady_misses for s in migration.stages)
    assert once is not None and once == sum(
        s.all_at_once_extra_misses for s in migration.stages
        if s.all_at_once_extra_misses is not None)
    page = markdown.report(result_report(result))
    assert "| extra origin fetches in total, staged" in page
    assert f"{staged:,}" in page and f"{once:,}" in page
    assert "points_per_weight 200 -> 20" in page
    spike = biggest_spike(migration)
    assert spike is not None and f"biggest spike is stage {spike + 1}" in page
