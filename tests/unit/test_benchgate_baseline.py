"""The gate's baseline handling and decision rules, on synthetic results (no timing, fast)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from harness.apps.benchgate.baseline import BASELINE_FORMAT_VERSION
from harness.apps.benchgate.decide import SLOWDOWN_THRESHOLD
from harness.cli.gate import main

MACHINE: Mapping[str, object] = {
    "python_implementation": "CPython",
    "python_version": "3.11.7",
    "machine": "x86_64",
    "cpu": {"brand_raw": "AMD EPYC", "count": 2},
}
REFERENCE_SECONDS = [1e-3 * (1 + i / 100) for i in range(20)]


def write_results(
    path: Path,
    scale: float = 1.0,
    nbytes: int = 96_000,
    machine: Mapping[str, object] = MACHINE,
    round_scale: int | None = None,
) -> Path:
    """A suite report with one timing (ratios ~2 times `scale`, 10 samples) and one figure;
    `round_scale`, when given, is recorded as the times the reference's work a round did."""
    times = [2 * scale * r for r in REFERENCE_SECONDS]
    extra: dict[str, object] = {
        "id": "batch/x/16k",
        "rounds_per_sample": 2,
        "reference_seconds": REFERENCE_SECONDS,
    }
    if round_scale is not None:
        extra["round_scale"] = round_scale
    bench = {"stats": {"data": times}, "extra_info": extra}
    document = {
        "machine_info": machine,
        "benchmarks": [bench],
        "ring_bench": {"mode": "smoke", "figures": {"x/16k/nbytes": nbytes}},
    }
    path.write_text(json.dumps(document))
    return path


def test_missing_baseline_is_recorded_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No baseline: exit 0, a warning that says so, and a baseline file written."""
    monkeypatch.delenv("RING_BENCH_UPDATE", raising=False)
    status = main([str(write_results(tmp_path / "r.json")), "--baseline-dir", str(tmp_path)])
    assert status == 0
    assert "WARNING: no baseline" in capsys.readouterr().err
    written = json.loads((tmp_path / "smoke.json").read_text())
    assert written["format_version"] == BASELINE_FORMAT_VERSION


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("format_version", BASELINE_FORMAT_VERSION + 1, "format_version"),
        ("environment", {**MACHINE, "python": "CPython 3.12"}, "recorded on"),
        ("mode", "full", "recorded in mode"),
    ],
)
def test_incompatible_baseline_is_replaced_not_compared(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    field: str,
    value: object,
    reason: str,
) -> None:
    """Another format, Python or mode: a warning naming why, a new baseline, no comparison."""
    monkeypatch.delenv("RING_BENCH_UPDATE", raising=False)
    report = write_results(tmp_path / "r.json")
    assert main([str(report), "--baseline-dir", str(tmp_path)]) == 0
    baseline = tmp_path / "smoke.json"
    document = json.loads(baseline.read_text())
    document[field] = value
    baseline.write_text(json.dumps(document))
    slower = write_results(tmp_path / "slow.json", scale=3.0)
    capsys.readouterr()
    assert main([str(slower), "--baseline-dir", str(tmp_path)]) == 0
    assert reason in capsys.readouterr().err
    assert json.loads(baseline.read_text())["format_version"] == BASELINE_FORMAT_VERSION


def test_other_cpu_is_incompatible(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A report from another CPU model is not compared with this machine's baseline."""
    monkeypatch.delenv("RING_BENCH_UPDATE", raising=False)
    main([str(write_results(tmp_path / "r.json")), "--baseline-dir", str(tmp_path)])
    other: Mapping[str, object] = {**MACHINE, "cpu": {"brand_raw": "Intel Xeon", "count": 2}}
    report = write_results(tmp_path / "o.json", scale=3.0, machine=other)
    capsys.readouterr()
    assert main([str(report), "--baseline-dir", str(tmp_path)]) == 0
    assert "Intel Xeon" in capsys.readouterr().err


def test_unreadable_baseline_is_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A baseline that is not JSON gives a warning and is rewritten, not a traceback."""
    monkeypatch.delenv("RING_BENCH_UPDATE", raising=False)
    (tmp_path / "smoke.json").write_text("{not json")
    assert main([str(write_results(tmp_path / "r.json")), "--baseline-dir", str(tmp_path)]) == 0
    assert "not readable JSON" in capsys.readouterr().err


def test_update_switch_rewrites_a_valid_baseline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """RING_BENCH_UPDATE=1 records a 3x slower run as the baseline instead of failing it."""
    main([str(write_results(tmp_path / "r.json")), "--baseline-dir", str(tmp_path)])
    monkeypatch.setenv("RING_BENCH_UPDATE", "1")
    slower = write_results(tmp_path / "slow.json", scale=3.0)
    assert main([str(slower), "--baseline-dir", str(tmp_path)]) == 0
    ratios = json.loads((tmp_path / "smoke.json").read_text())["ratios"]["batch/x/16k"]
    assert ratios[0] == pytest.approx(6.0)


@pytest.mark.parametrize(
    ("scale", "nbytes", "status"),
    [
        (1.0, 96_000, 0),
        (SLOWDOWN_THRESHOLD * 0.9, 96_000, 0),  # significant but small: noise-sized
        (2.0, 96_000, 1),
        (1.0, 96_002, 1),  # memory grew by 2 bytes
        (1.0, 95_000, 0),  # memory shrank: an improvement, not a regression
    ],
)
def test_decision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scale: float, nbytes: int, status: int
) -> None:
    """Fails only on a slowdown past the threshold or on memory growth."""
    monkeypatch.delenv("RING_BENCH_UPDATE", raising=False)
    main([str(write_results(tmp_path / "r.json")), "--baseline-dir", str(tmp_path)])
    report = write_results(tmp_path / "now.json", scale=scale, nbytes=nbytes)
    assert main([str(report), "--baseline-dir", str(tmp_path)]) == status


def test_unusable_results_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A results file without the suite's section is a usage error (2), named in the message."""
    report = tmp_path / "r.json"
    report.write_text(json.dumps({"benchmarks": []}))
    assert main([str(report), "--baseline-dir", str(tmp_path)]) == 2
    assert "ring_bench" in capsys.readouterr().err


def test_parity_layouts_may_grow_but_not_shrink() -> None:
    """A layout joining the agreeing set passes; a layout dropping out of it is a regression."""
    from harness.apps.benchgate.decide import FigureVerdict

    grown = FigureVerdict("ring32/16k/parity_layouts", "a,b", "a,b,c")
    shrunk = FigureVerdict("ring32/16k/parity_layouts", "a,b,c", "a,c")
    assert not grown.regressed
    assert shrunk.regressed


def test_builds_need_a_larger_change_than_lookups() -> None:
    """A significant 1.8x change flags a lookup but not a build (allocation-bound, noisier)."""
    from harness.apps.benchgate.decide import TimingVerdict

    assert TimingVerdict("batch/cffi-packed/16k", 1.0, 1.8, 1e-6).regressed
    assert not TimingVerdict("build/cffi-packed/16k", 1.0, 1.8, 1e-6).regressed
    assert TimingVerdict("build/cffi-packed/16k", 1.0, 2.2, 1e-6).regressed


@pytest.mark.parametrize(
    ("scale", "nbytes", "named"),
    [
        (1.0, 96_000, []),
        (2.0, 96_000, ["batch/x/16k"]),
        (2.0, 96_002, ["batch/x/16k", "x/16k/nbytes"]),
    ],
)
def test_regressions_file_names_what_regressed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scale: float, nbytes: int,
    named: list[str],
) -> None:
    """--regressions-out (RING_BENCH_REGRESSIONS) lists every regression, one per line, and is
    written empty on a pass: .ci/bench.sh fails only what two runs both name."""
    monkeypatch.delenv("RING_BENCH_UPDATE", raising=False)
    main([str(write_results(tmp_path / "r.json")), "--baseline-dir", str(tmp_path)])
    out = tmp_path / "regressions.txt"
    monkeypatch.setenv("RING_BENCH_REGRESSIONS", str(out))
    report = write_results(tmp_path / "now.json", scale=scale, nbytes=nbytes)
    assert main([str(report), "--baseline-dir", str(tmp_path)]) == (1 if named else 0)
    assert out.read_text().splitlines() == named


def test_scaled_rounds_are_compared_per_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A round over 16 times the reference's keys that took 16 times as long is the same
    speed per key: it passes against an unscaled baseline; the same round claimed at the
    reference's size regresses."""
    monkeypatch.delenv("RING_BENCH_UPDATE", raising=False)
    baseline = tmp_path / "baseline"
    assert main([str(write_results(tmp_path / "b.json")), "--baseline-dir", str(baseline)]) == 0
    capsys.readouterr()
    repeated = write_results(tmp_path / "r.json", scale=16, round_scale=16)
    assert main([str(repeated), "--baseline-dir", str(baseline)]) == 0
    assert "PASS" in capsys.readouterr().out
    unrepeated = write_results(tmp_path / "u.json", scale=16)
    assert main([str(unrepeated), "--baseline-dir", str(baseline)]) == 1
    assert "REGRESSION" in capsys.readouterr().out
