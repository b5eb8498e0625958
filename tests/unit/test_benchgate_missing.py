"""The gate on a run that lacks a benchmark of its baseline, on synthetic results (fast).

What "lacks" means: the baseline has a timing or figure that the run neither measured
nor says its plan left out (`ring_bench.skipped`, "layout/ring" -> why: the suite's
memory budget, layouts the counts gate does not judge). In the baseline's environment
that fails the gate, every time (the baseline is kept), so .ci/bench.sh's second run
confirms it; in another environment the baseline is re-recorded, as for timings."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from harness.apps.benchgate.decide import skipped_by_plan
from harness.cli.gate import main
from tests.unit.test_benchgate_baseline import MACHINE, REFERENCE_SECONDS

MISSING_LINE = "in the baseline but not measured in this run"


def write_run(
    path: Path,
    layouts: tuple[str, ...] = ("x", "y"),
    skipped: Mapping[str, str] | None = None,
    machine: Mapping[str, object] = MACHINE,
) -> Path:
    """A smoke report with a batch timing and an nbytes figure per layout on the 16k ring."""
    benchmarks = [
        {"stats": {"data": [2 * r for r in REFERENCE_SECONDS]},
         "extra_info": {"id": f"batch/{name}/16k", "rounds_per_sample": 2,
                        "reference_seconds": REFERENCE_SECONDS}}
        for name in layouts
    ]
    suite: dict[str, object] = {
        "mode": "smoke", "figures": {f"{name}/16k/nbytes": 96_000 for name in layouts}}
    if skipped is not None:
        suite["skipped"] = dict(skipped)
    path.write_text(json.dumps(
        {"machine_info": machine, "benchmarks": benchmarks, "ring_bench": suite}))
    return path


def gate(report: Path, baseline_dir: Path, capsys: pytest.CaptureFixture[str],
         *extra: str) -> tuple[int, str]:
    status = main([str(report), "--baseline-dir", str(baseline_dir), *extra])
    return status, capsys.readouterr().out


@pytest.fixture
def baseline_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A smoke baseline recorded from a run of layouts x and y."""
    monkeypatch.delenv("RING_BENCH_UPDATE", raising=False)
    monkeypatch.delenv("RING_BENCH_REGRESSIONS", raising=False)
    directory = tmp_path / "baseline"
    assert main([str(write_run(tmp_path / "both.json")), "--baseline-dir", str(directory)]) == 0
    return directory


def test_a_run_lacking_a_baseline_benchmark_fails_naming_it(
    tmp_path: Path, baseline_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run without layout y exits 1, with one line naming y's timing and figure."""
    capsys.readouterr()
    status, out = gate(write_run(tmp_path / "x.json", layouts=("x",)), baseline_dir, capsys)
    assert status == 1
    lines = [line for line in out.splitlines() if MISSING_LINE in line]
    assert lines == [f"{MISSING_LINE}: batch/y/16k, y/16k/nbytes"]
    assert "FAIL: 2 regression(s): batch/y/16k, y/16k/nbytes" in out


def test_a_missing_benchmark_fails_both_runs_of_ci_and_is_written_out(
    tmp_path: Path, baseline_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--regressions-out names the missing benchmarks, again on a second run: the baseline
    is kept, so .ci/bench.sh finds them in both runs and fails."""
    baseline = (baseline_dir / "smoke.json").read_bytes()
    report = write_run(tmp_path / "x.json", layouts=("x",))
    for run in ("first", "second"):
        out_file = tmp_path / run
        assert gate(report, baseline_dir, capsys, "--regressions-out", str(out_file))[0] == 1
        assert out_file.read_text() == "batch/y/16k\ny/16k/nbytes\n"
    assert (baseline_dir / "smoke.json").read_bytes() == baseline


def test_a_run_lacking_it_in_another_environment_re_baselines(
    tmp_path: Path, baseline_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On another CPU the missing benchmarks are named but not judged: exit 0, new baseline."""
    other: Mapping[str, object] = {**MACHINE, "cpu": {"brand_raw": "Intel Xeon", "count": 2}}
    report = write_run(tmp_path / "x.json", layouts=("x",), machine=other)
    capsys.readouterr()
    status, out = gate(report, baseline_dir, capsys)
    assert status == 0
    assert f"{MISSING_LINE} (not judged in another environment): batch/y/16k" in out
    recorded = json.loads((baseline_dir / "smoke.json").read_text())
    assert list(recorded["ratios"]) == ["batch/x/16k"]
    assert recorded["environment"]["cpu"] == "Intel Xeon"


def test_what_the_plan_left_out_is_not_missing(
    tmp_path: Path, baseline_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A layout the run's plan skipped on this ring (memory budget) passes, named as left out."""
    report = write_run(tmp_path / "x.json", layouts=("x",),
                       skipped={"y/16k": "over the memory budget"})
    capsys.readouterr()
    status, out = gate(report, baseline_dir, capsys)
    assert status == 0
    assert MISSING_LINE not in out
    assert "left out by this run's plan (not judged): batch/y/16k, y/16k/nbytes" in out


def test_a_skip_of_another_ring_does_not_excuse_this_one(
    tmp_path: Path, baseline_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Layout y skipped on the 1M ring still fails for its missing 16k benchmarks."""
    report = write_run(tmp_path / "x.json", layouts=("x",),
                       skipped={"y/1M": "over the memory budget"})
    capsys.readouterr()
    status, out = gate(report, baseline_dir, capsys)
    assert status == 1
    assert f"{MISSING_LINE}: batch/y/16k, y/16k/nbytes" in out


def test_a_plan_skip_covers_every_kind_of_id_of_its_layout_and_ring() -> None:
    """Timing, figure and counts ids of y on 16k are covered by "y/16k"; x's and 1M's are not."""
    skipped = {"y/16k"}
    assert skipped_by_plan("batch/y/16k", skipped)
    assert skipped_by_plan("y/16k/nbytes", skipped)
    assert skipped_by_plan("counts/batch/y/16k/instructions_per_key", skipped)
    assert not skipped_by_plan("batch/x/16k", skipped)
    assert not skipped_by_plan("y/1M/nbytes", skipped)
    assert not skipped_by_plan("batch/y-64/16k", skipped)
