"""The gate on hostile and broken inputs: exit 2 with one line, never a pass, never a write
outside --baseline-dir; and what a baseline from another environment still decides."""

from __future__ import annotations

import contextlib
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.apps.benchgate.plan import PLANS
from harness.apps.benchgate.results import minimum_samples, smallest_p_value
from harness.cli.gate import main
from tests.unit.test_benchgate_baseline import MACHINE, REFERENCE_SECONDS, write_results


@pytest.fixture(autouse=True)
def _no_update_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RING_BENCH_UPDATE", raising=False)


def valid_document() -> dict[str, Any]:
    """The document write_results writes: one timing of 10 samples, one figure."""
    with tempfile.TemporaryDirectory() as directory:
        path = write_results(Path(directory) / "r.json")
        document: dict[str, Any] = json.loads(path.read_text())
    return document


def files_under(directory: Path) -> dict[str, bytes]:
    """Every file below `directory` (relative name -> content)."""
    return {
        str(path.relative_to(directory)): path.read_bytes()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


def gate(results: Path, baseline_dir: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = main([str(results), "--baseline-dir", str(baseline_dir)])
    return status, capsys.readouterr().err


@pytest.mark.parametrize("mode", ["../../victim", "../victim", "/ABSOLUTE/victim", "", "nightly"])
def test_mode_outside_the_suites_plans_is_refused_and_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str
) -> None:
    """A mode that is not a plan (a path, `..`, an unknown name): exit 2, no file anywhere."""
    mode = mode.replace("/ABSOLUTE", str(tmp_path))
    document = valid_document()
    document["ring_bench"]["mode"] = mode
    results = tmp_path / "in" / "r.json"
    results.parent.mkdir()
    results.write_text(json.dumps(document))
    baseline_dir = tmp_path / "a" / "b" / "baseline"
    baseline_dir.mkdir(parents=True)
    before = files_under(tmp_path)
    status, err = gate(results, baseline_dir, capsys)
    assert status == 2
    assert f"mode must be one of the suite's modes ({', '.join(PLANS)})" in err
    assert files_under(tmp_path) == before


def test_baseline_is_written_atomically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An update interrupted mid-write leaves the old baseline whole and no stray file
    (and the gate exits 130 with one line, not a traceback)."""
    assert main([str(write_results(tmp_path / "r.json")), "--baseline-dir", str(tmp_path)]) == 0
    old = (tmp_path / "smoke.json").read_text()

    def interrupt(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("harness.core.atomic.os.fsync", interrupt)
    slower = write_results(tmp_path / "slow.json", scale=3.0)
    assert main([str(slower), "--baseline-dir", str(tmp_path), "--update-baseline"]) == 130
    assert (tmp_path / "smoke.json").read_text() == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "slow.json", "smoke.json"]


def _set(path: str, value: object) -> Any:
    """A change to the valid document: set the field at the dotted `path` (ints index lists)."""

    def change(document: dict[str, Any]) -> dict[str, Any]:
        *parents, last = path.split(".")
        node: Any = document
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        key: Any = int(last) if isinstance(node, list) else last
        if value is _DELETE:
            del node[key]
        else:
            node[key] = value
        return document

    return change


_DELETE = object()
SAMPLES = len(REFERENCE_SECONDS) // 2


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda d: [d], "expected a JSON object (got list)"),
        (_set("benchmarks.0.extra_info", _DELETE), "extra_info must be a dict"),
        (_set("benchmarks.0.extra_info.rounds_per_sample", 0), "rounds_per_sample must be at"),
        (_set("benchmarks.0.extra_info.rounds_per_sample", True), "rounds_per_sample must be"),
        (_set("benchmarks.0.extra_info.round_scale", 0), "round_scale must be a whole"),
        (_set("benchmarks.0.extra_info.round_scale", 2.5), "round_scale must be a whole"),
        (_set("benchmarks.0.extra_info.round_scale", True), "round_scale must be a whole"),
        (_set("benchmarks.0.extra_info.reference_seconds", [0.0] * 20), "finite positive"),
        (_set("benchmarks.0.extra_info.reference_seconds", [-1e-3] * 20), "finite positive"),
        (_set("benchmarks.0.stats.data", [math.nan] * 20), "finite positive"),
        (_set("benchmarks.0.stats.data", [math.inf] * 20), "finite positive"),
        (_set("ring_bench.mode", _DELETE), "mode must be one of"),
        (_set("benchmarks", []), "benchmarks must be a non-empty list"),
        (_set("ring_bench.figures", {}), "figures must be a non-empty object"),
        (_set("ring_bench.figures", {"x/16k/nbytes": math.nan}), "finite number"),
        (_set("benchmarks.0.extra_info.rounds_per_sample", 20), "1 samples"),
        (lambda d: _set("benchmarks", d["benchmarks"] * 2)(d), "appears twice"),
        (_set("benchmarks.0.extra_info.id", "batch/y/16k"), "shares no timing"),
        (_set("ring_bench.figures", {"y/16k/nbytes": 1}), "shares no figure"),
        (_set("ring_bench.skipped", ["x/16k"]), "skipped must be an object"),
        (_set("ring_bench.skipped", {"x": "over the memory budget"}), '"layout/ring": reason'),
        (_set("ring_bench.skipped", {"x/16k/nbytes": "r"}), '"layout/ring": reason'),
        (_set("ring_bench.skipped", {"x/16k": 1}), '"layout/ring": reason'),
    ],
)
def test_unusable_results_exit_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: Any, expected: str
) -> None:
    """Each broken results file gets exit 2 (never 0 or 1) and one line saying what is wrong."""
    assert main([str(write_results(tmp_path / "r.json")), "--baseline-dir", str(tmp_path)]) == 0
    baseline = (tmp_path / "smoke.json").read_bytes()
    results = tmp_path / "broken.json"
    results.write_text(json.dumps(change(valid_document())))
    capsys.readouterr()
    status, err = gate(results, tmp_path, capsys)
    assert status == 2
    assert expected in err
    assert err.count("\n") == 1 and err.startswith("ring-bench-gate: unusable data: ")
    assert (tmp_path / "smoke.json").read_bytes() == baseline


@pytest.mark.parametrize(
    "content", [b"\xff\xfe not utf-8", b"[" * 100_000, b"", b"NaN", b"{\"ring_bench\": 1}"]
)
def test_unreadable_results_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes
) -> None:
    """Bytes that are not a JSON object of the suite (or nest past the parser) exit 2."""
    results = tmp_path / "r.json"
    results.write_bytes(content)
    status, err = gate(results, tmp_path / "baseline", capsys)
    assert status == 2
    assert err.count("\n") == 1
    assert not (tmp_path / "baseline").exists()


def test_results_that_are_not_a_regular_file_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A directory, a FIFO or /dev/zero as the results file: exit 2 at once, no hang."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for results in (tmp_path, fifo, Path("/dev/zero")):
        status, err = gate(results, tmp_path / "baseline", capsys)
        assert status == 2
        assert "must be a regular file" in err


def test_baseline_dir_naming_a_file_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--baseline-dir that is a regular file: exit 2 and one line, the file untouched."""
    not_a_directory = tmp_path / "baseline"
    not_a_directory.write_text("keep me")
    status, err = gate(write_results(tmp_path / "r.json"), not_a_directory, capsys)
    assert status == 2
    assert "--baseline-dir" in err and "expected a directory" in err
    assert not_a_directory.read_text() == "keep me"


def test_baseline_dir_under_a_file_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A --baseline-dir that cannot be created (its parent is a file): exit 2, one line."""
    (tmp_path / "file").write_text("")
    status, err = gate(write_results(tmp_path / "r.json"), tmp_path / "file" / "baseline", capsys)
    assert status == 2
    assert err.count("\n") == 1 and "expected a directory" in err


def test_baseline_with_too_few_samples_cannot_judge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A baseline of one sample per timing cannot show a 10x slowdown significant: exit 2."""
    assert main([str(write_results(tmp_path / "r.json")), "--baseline-dir", str(tmp_path)]) == 0
    baseline = tmp_path / "smoke.json"
    document = json.loads(baseline.read_text())
    document["ratios"]["batch/x/16k"] = document["ratios"]["batch/x/16k"][:1]
    baseline.write_text(json.dumps(document))
    status, err = gate(write_results(tmp_path / "slow.json", scale=10.0), tmp_path, capsys)
    assert status == 2
    assert "too few samples to judge" in err


def test_minimum_samples_follows_the_significance_level() -> None:
    """With 5 samples a side a one-sided Mann-Whitney test can reach p < 0.01; with 4 not."""
    assert minimum_samples(0.01) == 5
    assert smallest_p_value(4, 4) > 0.01 > smallest_p_value(5, 5)
    assert minimum_samples(0.01) <= SAMPLES


OTHER_CPU: dict[str, object] = {**MACHINE, "cpu": {"brand_raw": "Intel Xeon", "count": 8}}
OTHER_PYTHON: dict[str, object] = {**MACHINE, "python_version": "3.12.1"}


def record(tmp_path: Path) -> Path:
    assert main([str(write_results(tmp_path / "r.json")), "--baseline-dir", str(tmp_path)]) == 0
    return tmp_path / "smoke.json"


def test_other_cpu_still_checks_sizes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """On another CPU a size that grew is still a regression (exit 1), baseline kept."""
    baseline = record(tmp_path)
    before = baseline.read_bytes()
    report = write_results(tmp_path / "o.json", nbytes=96_002, machine=OTHER_CPU)
    status = main([str(report), "--baseline-dir", str(tmp_path)])
    assert status == 1
    assert "x/16k/nbytes" in capsys.readouterr().out
    assert baseline.read_bytes() == before


def test_other_python_still_checks_the_routing_digest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Under another Python a changed routing digest is a regression; sizes are not judged."""
    baseline = record(tmp_path)
    document = json.loads(baseline.read_text())
    document["figures"]["ring32/16k/routing_sha256"] = "0123456789abcdef"
    baseline.write_text(json.dumps(document))
    changed = valid_document()
    changed["machine_info"] = OTHER_PYTHON
    changed["ring_bench"]["figures"].update(
        {"ring32/16k/routing_sha256": "fedcba9876543210", "x/16k/nbytes": 200_000}
    )
    results = tmp_path / "p.json"
    results.write_text(json.dumps(changed))
    assert main([str(results), "--baseline-dir", str(tmp_path)]) == 1
    output = capsys.readouterr().out
    assert "routing_sha256" in output and "nbytes" not in output


def test_other_cpu_rebaselines_timings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """On another CPU a 3x timing is not judged; with unchanged figures the timings are
    re-recorded for the new environment and the gate passes."""
    baseline = record(tmp_path)
    report = write_results(tmp_path / "o.json", scale=3.0, machine=OTHER_CPU)
    assert main([str(report), "--baseline-dir", str(tmp_path)]) == 0
    assert "re-baselined" in capsys.readouterr().err
    document = json.loads(baseline.read_text())
    assert document["environment"]["cpu"] == "Intel Xeon"
    assert document["ratios"]["batch/x/16k"][0] == pytest.approx(6.0)


def test_unusable_data_is_one_line_from_the_command(tmp_path: Path) -> None:
    """The installed command on a list document: exit 2, one line on stderr, no traceback."""
    results = tmp_path / "r.json"
    results.write_text("[]")
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli.gate", str(results),
         "--baseline-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


# --- fuzzing: hostile documents, in the suite's shape and not ---------------------------

_numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.sampled_from([0, -1, 1e-300, 1e300, 5e-324]),
)
_json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), _numbers, st.text(max_size=20)),
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)
_modes = st.one_of(
    st.sampled_from(
        ["smoke", "short", "full", "../escape", "../../escape", "/ABSOLUTE/escape", "smoke/..", ""]
    ),
    _json_values,
)
_hostile_fields = st.sampled_from(
    [
        "ring_bench.mode",
        "ring_bench.figures",
        "ring_bench",
        "benchmarks",
        "benchmarks.0",
        "benchmarks.0.extra_info",
        "benchmarks.0.extra_info.id",
        "benchmarks.0.extra_info.rounds_per_sample",
        "benchmarks.0.extra_info.reference_seconds",
        "benchmarks.0.extra_info.reference_seconds.3",
        "benchmarks.0.stats.data",
        "benchmarks.0.stats.data.0",
        "machine_info",
        "machine_info.cpu",
    ]
)


@st.composite
def hostile_documents(draw: st.DrawFn) -> object:
    """The suite's document with some fields replaced by hostile values, or any JSON at all."""
    if draw(st.integers(0, 4)) == 0:
        return draw(_json_values)
    document = valid_document()
    document["ring_bench"]["mode"] = draw(_modes)
    for _ in range(draw(st.integers(0, 3))):
        field = draw(_hostile_fields)
        value = draw(st.one_of(_json_values, st.lists(_numbers, max_size=30)))
        with contextlib.suppress(KeyError, IndexError, TypeError, ValueError):
            _set(field, value)(document)
    return document


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(document=hostile_documents(), with_baseline=st.booleans())
def test_fuzzed_gate_inputs_exit_0_1_or_2_and_write_only_the_baseline(
    capsys: pytest.CaptureFixture[str], document: object, with_baseline: bool
) -> None:
    """Any JSON document: exit 0, 1 or 2, no exception, nothing written outside the
    baseline directory, and exit 2 is one line on stderr."""
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        baseline_dir = root / "deep" / "baseline"
        baseline_dir.mkdir(parents=True)
        if with_baseline:
            assert main([str(write_results(root / "base.json")), "--baseline-dir",
                         str(baseline_dir)]) == 0
        text = json.dumps(document).replace("/ABSOLUTE", str(root))
        results = root / "results.json"
        results.write_text(text)
        outside = {k: v for k, v in files_under(root).items() if not k.startswith("deep/baseline")}
        capsys.readouterr()
        status = main([str(results), "--baseline-dir", str(baseline_dir)])
        err = capsys.readouterr().err
        assert status in (0, 1, 2)
        if status == 2:
            assert err.count("\n") == 1
        after = {k: v for k, v in files_under(root).items() if not k.startswith("deep/baseline")}
        assert after == outside
        assert all(p.suffix == ".json" and p.stem in ("smoke", "short", "full")
                   for p in baseline_dir.iterdir())

