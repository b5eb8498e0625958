"""The counts gate end to end: the real suite in a counts mode under callgrind, the real gate.

Proves both directions: unchanged code passes, with identical instruction counts of
the C layouts and every other figure within REPEAT_TOLERANCE of the baseline; a layout
whose C search does 10% more work per key (tests/injected_layouts.py) fails the gate
on that layout's lookup counts only. The ten-run version of each is marked slow.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.apps.benchgate.decide import COUNT_FLOOR
from harness.cli.gate import main
from tests.injected_layouts import COUNTED
from tests.paths import TESTS

SUITE = TESTS.parent / "benchmarks"
FEW = "injected_layouts:COUNTS_FEW"
TENTH_MORE = "injected_layouts:COUNTS_TENTH_MORE"

pytestmark = pytest.mark.tools("valgrind")


def count_suite(directory: Path, name: str, layouts: str) -> Path:
    """Run the suite in counts-smoke mode in a fresh process; its JSON report's path."""
    report = directory / f"{name}.json"
    env = {**os.environ, "PYTHONHASHSEED": "0",
           "PYTHONPATH": os.pathsep.join([str(TESTS), str(TESTS.parent)])}
    subprocess.run(
        [sys.executable, "-m", "pytest", str(SUITE), "-q", "-p", "no:cacheprovider",
         "--bench-mode=counts-smoke", f"--bench-layouts={layouts}",
         f"--benchmark-json={report}"],
        cwd=directory, env=env, check=True, capture_output=True,
    )
    return report


def figures_of(report: Path) -> dict[str, object]:
    figures: dict[str, object] = json.loads(report.read_text())["ring_bench"]["figures"]
    return figures


def gate(report: Path, baseline_dir: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = main([str(report), "--baseline-dir", str(baseline_dir)])
    return status, capsys.readouterr().out


def regressed_rows(output: str) -> set[str]:
    return {line.split()[0] for line in output.splitlines() if line.rstrip().endswith("REGRESSION")}


#: how far an unchanged run's miss figures may move: C instruction counts repeat exactly,
#: but misses shift a little between runs and checkouts (the interpreter seeds its random
#: modules from the OS at start, which moves a few heap objects; 1.07% seen in a clean
#: clone): up to the gate's own 2% threshold, which is what "passes unchanged" means
REPEAT_TOLERANCE = 0.02


def check_repeated(now: dict[str, object], then: dict[str, object]) -> float:
    """C instruction counts identical, every other figure within REPEAT_TOLERANCE; the
    largest relative difference, for the record."""
    assert now.keys() == then.keys()
    largest = 0.0
    for name, value in now.items():
        before = then[name]
        assert isinstance(value, float) and isinstance(before, float), name
        # Instructions inside a C search repeat exactly; a whole Python call (numpy-*,
        # tuples) carries a little interpreter start-up noise, within the tolerance.
        if name.endswith("instructions_per_key") and ("/cffi-" in name or "/bucketed/" in name):
            assert value == before, name
        else:
            assert abs(value - before) <= max(REPEAT_TOLERANCE * before, COUNT_FLOOR / 5), (
                name, before, value)
            if before >= COUNT_FLOOR:
                largest = max(largest, abs(value - before) / before)
    return largest


#: the injected layout's lookup figures the gate must flag (not its build, not misses that
#: the repeated tenth finds in cache)
CAUGHT = {f"counts/{path}/{COUNTED}/16k/instructions_per_key" for path in ("batch", "scalar")}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    """A counts baseline recorded by the gate from one unchanged run, and its figures."""
    directory = tmp_path_factory.mktemp("recorded")
    report = count_suite(directory, "baseline", FEW)
    assert main([str(report), "--baseline-dir", str(directory / "baseline")]) == 0
    assert (directory / "baseline" / "counts-smoke.json").exists()
    return directory / "baseline", figures_of(report)


@pytest.fixture
def baseline_dir(recorded: tuple[Path, dict[str, object]], tmp_path: Path) -> Path:
    copy = tmp_path / "baseline"
    shutil.copytree(recorded[0], copy)
    return copy


def _unchanged_runs(runs: int, recorded: tuple[Path, dict[str, object]], baseline_dir: Path,
                    tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for attempt in range(runs):
        report = count_suite(tmp_path, f"unchanged{attempt}", FEW)
        largest = check_repeated(figures_of(report), recorded[1])
        print(f"unchanged run {attempt}: largest change of a figure {largest:.3%}")
        status, output = gate(report, baseline_dir, capsys)
        assert (status, regressed_rows(output)) == (0, set()), output


def _injected_runs(runs: int, baseline_dir: Path, tmp_path: Path,
                   capsys: pytest.CaptureFixture[str]) -> None:
    for attempt in range(runs):
        status, output = gate(count_suite(tmp_path, f"tenth{attempt}", TENTH_MORE),
                              baseline_dir, capsys)
        assert status == 1, output
        rows = regressed_rows(output)
        print(f"injected run {attempt}: flagged {sorted(rows)}")
        assert rows >= CAUGHT, output
        assert all(f"/{COUNTED}/" in row and "/build/" not in row for row in rows), output


def test_unchanged_counts_identical_and_pass(
    recorded: tuple[Path, dict[str, object]], baseline_dir: Path, tmp_path: Path,
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A fresh run of unchanged code counts the baseline's figures again and passes."""
    monkeypatch.delenv("RING_BENCH_UPDATE", raising=False)
    _unchanged_runs(1, recorded, baseline_dir, tmp_path, capsys)


def test_tenth_more_work_per_lookup_is_caught(
    baseline_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """10% more C search work per key fails the gate on that layout's lookup counts only."""
    monkeypatch.delenv("RING_BENCH_UPDATE", raising=False)
    _injected_runs(1, baseline_dir, tmp_path, capsys)


@pytest.mark.slow
def test_ten_unchanged_runs_pass_and_ten_injected_runs_fail(
    recorded: tuple[Path, dict[str, object]], baseline_dir: Path, tmp_path: Path,
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The issue's target: ten unchanged runs all pass with identical figures, and the
    1.10x instruction regression is caught ten times out of ten."""
    monkeypatch.delenv("RING_BENCH_UPDATE", raising=False)
    _unchanged_runs(10, recorded, baseline_dir, tmp_path, capsys)
    _injected_runs(10, baseline_dir, tmp_path, capsys)
