"""plan: the smallest points per server for a target, confirmed on the built ring."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from harness.apps.plan import allocated_section, allocated_tries, make_plan, points_for_target
from harness.cli import main
from harness.core.servers import Server
from harness.core.stats import theory_cv


def test_100_servers_at_1_percent_need_9900_points() -> None:
    """The formula sqrt((N-1)/(Nk+1)) <= 1% first holds at k = 9,900 for N = 100."""
    servers = [Server(f"s{i}") for i in range(100)]
    assert points_for_target(servers, 0.01) == 9_900
    assert theory_cv([9_900] * 100) <= 0.01 < theory_cv([9_899] * 100)


def test_weighted_fleets_step_to_the_smallest_k() -> None:
    """With weights, k is the smallest whose predicted CV meets the target."""
    servers = [Server("a", 1), Server("b", 2), Server("c", 5)]
    k = points_for_target(servers, 0.02)
    predicted = [theory_cv([max(1, round(k_ * s.weight)) for s in servers]) for k_ in (k - 1, k)]
    assert predicted[1] <= 0.02 < predicted[0]


@pytest.mark.parametrize(("weight", "count", "target"), [(2.5, 3, 0.001), (0.25, 2, 0.01),
                                                         (40.0, 5, 0.0005)])
def test_equal_weights_other_than_one_find_k_in_few_steps(
        weight: float, count: int, target: float, monkeypatch: pytest.MonkeyPatch) -> None:
    """Servers of one weight w need about 1/w of the points per unit weight the closed form
    gives per server; k is still the first that meets the target, found in a few dozen
    predictions (stepping down one point at a time from the per-server form took 400,000
    for three servers of weight 2.5 at 0.1%, a fuzzer's hang)."""
    import harness.apps.plan as plan

    calls: list[int] = []

    def counted(points: list[int]) -> float:
        calls.append(len(points))
        return theory_cv(points)

    monkeypatch.setattr(plan, "theory_cv", counted)
    servers = [Server(f"s{i}", weight) for i in range(count)]
    k = points_for_target(servers, target)
    assert len(calls) < 200
    predicted = [theory_cv([max(1, round(k_ * weight))] * count) for k_ in (k - 1, k)]
    assert predicted[1] <= target < predicted[0]


def test_peak_to_mean_target_uses_the_expected_maximum() -> None:
    """1.05 over 100 servers: CV target (1.05 - 1) / z_100, z_100 about 2.5."""
    plan = make_plan([Server(f"s{i}") for i in range(100)], target_peak_to_mean=1.05)
    assert plan.target_cv == pytest.approx(0.05 / 2.5, rel=0.03)
    assert plan.points_per_weight == math.ceil((99 / plan.target_cv**2 - 1) / 100)


def test_plan_command_builds_and_measures(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The report gives k, the measured cv_arcs, collisions and each layout's bytes."""
    assert main(["plan", "--servers", "20", "--target-cv", "0.05",
                 "--out", str(tmp_path / "plan")]) == 0
    out = capsys.readouterr().out
    k = points_for_target([Server(f"s{i}") for i in range(20)], 0.05)
    assert re.search(rf"\| points per unit weight k \(formula\) +\| {k:,} +\|", out)
    assert "cv_arcs measured on the built ring" in out and "cffi-packed" in out
    # 7,600 entries: the verdict names the ring's smallest layout and a cache of this machine
    assert re.search(r"The ring is [\d.]+ KiB in its smallest layout \(\w[\w-]*, 7,600 "
                     r"entries\)", out), out
    assert (tmp_path / "plan.md").exists() and (tmp_path / "plan.html").exists()


@pytest.mark.parametrize(("argv", "message"), [
    (["--servers", "0", "--target-cv", "0.01"], "--servers must be from 1"),
    (["--servers", "10", "--target-cv", "0"], "--target-cv must be a fraction between 0 and 1"),
    (["--servers", "10", "--target-cv", "1.5"], "--target-cv must be a fraction"),
    (["--servers", "10", "--target-peak-to-mean", "0.9"], "--target-peak-to-mean must be"),
    (["--servers", "10"], "exactly one of --target-cv or --target-peak-to-mean"),
    (["--target-cv", "0.1"], "exactly one of --servers N, --weights W1,W2,... or a scenario"),
    (["--weights", "1,x", "--target-cv", "0.1"], "--weights must be positive numbers"),
    (["--servers", "10", "--target-cv", "0.1", "--layouts", "nope"], "--layouts must name"),
])
def test_bad_input_is_refused(argv: list[str], message: str,
                              capsys: pytest.CaptureFixture[str]) -> None:
    """One line, exit 2."""
    assert main(["plan", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_plan_for_a_process_scenario(tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    """With [process], k is what the most demanding ring needs, and every ring is costed."""
    scenario = tmp_path / "p.toml"
    scenario.write_text('[servers]\nlist = [{name = "a", capabilities = ["x"]}, {name = "b", '
                        'capabilities = ["x"]}, {name = "c"}, {name = "d"}]\n[process]\n')
    assert main(["plan", str(scenario), "--target-cv", "0.05"]) == 0
    out = capsys.readouterr().out
    all_four = points_for_target([Server(n) for n in "abcd"], 0.05)
    pair = points_for_target([Server("a"), Server("b")], 0.05)
    assert f"## The process: 2 rings at k = {max(all_four, pair):,}" in out
    assert "| x " in out and "| process " in out


def test_allocated_tokens_are_offered_at_their_smallest_k() -> None:
    """Doubling then bisecting finds a k that meets the target whose k - 1 was built and
    missed it; every ring tried is an allocated ring of that many tokens."""
    servers = [Server(f"s{i}") for i in range(50)]
    tries = allocated_tries(servers, 0.02)
    by_k = {t.points_per_weight: t for t in tries}
    best = min(k for k, t in by_k.items() if t.cv_arcs <= 0.02)
    assert best > 1 and by_k[best - 1].cv_arcs > 0.02
    assert all(t.tokens == 50 * t.points_per_weight for t in tries)
    assert best < points_for_target(servers, 0.02) / 100  # far fewer than random points


def test_allocated_tokens_stop_at_the_budget() -> None:
    """No allocated ring over the token budget is built; the report says the target was
    not met within it."""
    servers = [Server(f"s{i}") for i in range(100)]
    tries = allocated_tries(servers, 0.001, budget=1_000)
    assert [t.points_per_weight for t in tries] == [1, 2, 4, 8]
    plan = make_plan(servers, target_cv=0.5)
    assert "meet the target at k = 1:" in allocated_section(plan, 100).paragraphs[0]


def test_plan_command_offers_allocated_tokens(capsys: pytest.CaptureFixture[str]) -> None:
    """The plan names allocated tokens beside random points, with their coordination cost."""
    assert main(["plan", "--weights", "1,2,5,1,2,5", "--target-cv", "0.05"]) == 0
    out = capsys.readouterr().out
    assert "## The other option: allocated tokens" in out
    assert "ordered list of servers and weights" in out and "rebalance" in out
    assert re.search(r"Allocated tokens meet the target at k = \d+: [\d,]+ entries against", out)


def test_the_cache_verdict_names_the_level_the_ring_fits(tmp_path: Path) -> None:
    """The verdict reads this machine's cache sizes (a sysfs folder here) and names the
    smallest level the ring fits, or says it is larger than the last one."""
    from harness.apps.plan import cache_verdict
    from harness.core.machine import data_cache_sizes

    for index, (level, kind, size) in enumerate([(1, "Data", "32K"), (1, "Instruction", "32K"),
                                                 (2, "Unified", "512K"),
                                                 (3, "Unified", "16384K")]):
        folder = tmp_path / f"index{index}"
        folder.mkdir()
        (folder / "level").write_text(f"{level}\n")
        (folder / "type").write_text(f"{kind}\n")
        (folder / "size").write_text(f"{size}\n")
    caches = data_cache_sizes(tmp_path)
    assert caches == {1: 32 << 10, 2: 512 << 10, 3: 16 << 20}
    assert "fits this machine's L2 data cache (512.0 KiB)" in cache_verdict(
        100 << 10, "cffi-packed", 16_000, caches)
    assert "larger than this machine's last-level cache (L3, 16.00 MiB)" in cache_verdict(
        600 << 20, "bucketed", 10**8, caches)
    assert "does not report its cache sizes" in cache_verdict(1, "x", 1, {})
