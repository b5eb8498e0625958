"""`ring-harness gate` without building anything: thresholds, verdicts, the history's
change points, the reports (the JSON against its published schema), and the command's
exit codes on the committed foreign-python result (baseline and history modes judge a
result given with --result, so nothing runs). The worked example, built and gated for
real, is tests/unit/test_gate_example.py."""

from __future__ import annotations

import copy
import json
import math
import shutil
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import jsonschema
import pytest

from harness.apps.gate.figures import Observed, result_figures
from harness.apps.gate.history_mode import judge_timing, mann_whitney_greater
from harness.apps.gate.report import (
    SCHEMA,
    GateReport,
    github_annotations,
    html_page,
    junit,
    markdown,
)
from harness.apps.gate.report import to_json as report_json
from harness.apps.gate.verdicts import (
    NOT_JUDGED,
    PASS,
    REGRESSION,
    UNKNOWN,
    Check,
    judge_exact,
    judge_ranges,
)
from harness.cli import main
from harness.core.errors import ScenarioError
from harness.run.gate_table import GateThresholds
from harness.run.scenario import parse_scenario
from tests.paths import ROOT

SCENARIO = ROOT / "scenarios" / "foreign-python.toml"
RESULT = ROOT / "results" / "foreign-python.json"
PEER = "libketama/ketama-python"
DEFAULTS = GateThresholds()


def _document() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(RESULT.read_text())
    return loaded


def _peer(document: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = next(s for s in document["runs"][0]["subjects"]
                                 if s["kind"] == "peer")
    return found


# --- thresholds ---------------------------------------------------------------------------

def test_the_gate_table_is_read_with_its_defaults_and_overridden_by_the_command_line() -> None:
    scenario = parse_scenario({"servers": {"count": 3}, "gate": {"cv": 1.5}}, "s.toml")
    assert scenario.gate == GateThresholds(cv=1.5)
    assert parse_scenario({"servers": {"count": 3}}, "s.toml").gate is None
    changed = DEFAULTS.with_overrides(["moved=2", "ns_per_key=1.2"])
    assert (changed.moved, changed.ns_per_key, changed.cv) == (2.0, 1.2, DEFAULTS.cv)


@pytest.mark.parametrize(("given", "words"), [
    ("latency=2", "FIGURE must be one of ns_per_key"),
    ("cv=0.5", "RATIO must be a number from 1 to 100 (got '0.5')"),
    ("cv=nan", "(got 'nan')"), ("cv", "(got '')"), ("cv=1e400", "(got '1e400')"),
])
def test_a_bad_threshold_names_the_argument(given: str, words: str) -> None:
    with pytest.raises(ScenarioError, match=r"--threshold") as caught:
        DEFAULTS.with_overrides([given])
    assert words in str(caught.value)


def test_the_scenario_record_of_a_result_leaves_the_thresholds_out() -> None:
    scenario = parse_scenario({"servers": {"count": 3}, "gate": {"cv": 1.5}}, "s.toml")
    assert "gate" not in scenario.as_record()


# --- figures and verdicts -----------------------------------------------------------------

def test_figures_are_read_from_what_the_run_records() -> None:
    figures = result_figures(_document())
    peer = _peer(_document())
    foreign = peer["figures"]["foreign"]
    timing = figures[(PEER, "ns_per_key")]
    assert timing.value == pytest.approx(foreign["batch_ns"]["median"]
                                         / foreign["reference_ns"]["median"])
    assert timing.low is not None and timing.high is not None
    assert timing.low <= timing.value <= timing.high
    assert figures[(PEER, "structure_bytes")].value == peer["nbytes"]
    assert figures[(PEER, "agreement")].value == 1.0
    assert ("libketama/ring", "cv") in figures


def test_a_figure_a_result_lacks_is_absent_not_zero() -> None:
    document = _document()
    _peer(document)["agreement"] = None
    del _peer(document)["figures"]["foreign"]["reference_ns"]
    figures = result_figures(document)
    assert (PEER, "agreement") not in figures and (PEER, "ns_per_key") not in figures
    check = judge_exact(None, Observed(PEER, "agreement", 1.0), "agreement", PEER, DEFAULTS)
    assert check.verdict == UNKNOWN and check.old is None and "old run" in check.note


@pytest.mark.parametrize(("old", "new", "figure", "verdict"), [
    (100.0, 105.0, "structure_bytes", PASS), (100.0, 105.1, "structure_bytes", REGRESSION),
    (100.0, 200.0, "peak_build_bytes", REGRESSION), (0.05, 0.054, "cv", PASS),
    (0.05, 0.056, "cv", REGRESSION), (1.0, 0.99999, "agreement", REGRESSION),
    (0.9, 0.95, "agreement", PASS), (1.0, 1.0, "routes_as_base", PASS),
    (0.01, 0.0111, "moved", REGRESSION), (0.0, 0.0, "structure_bytes", PASS),
    (0.0, 3.0, "structure_bytes", UNKNOWN),
])
def test_an_exact_figure_regresses_past_its_threshold_and_agreement_at_any_drop(
        old: float, new: float, figure: str, verdict: str) -> None:
    check = judge_exact(Observed("s", figure, old), Observed("s", figure, new), figure, "s",
                        DEFAULTS)
    assert check.verdict == verdict


def test_a_timing_against_a_baseline_of_another_cpu_is_not_judged() -> None:
    old, new = Observed("s", "ns_per_key", 1.0, 0.9, 1.1), Observed("s", "ns_per_key", 3, 2.9, 3.1)
    assert judge_ranges(old, new, "s", DEFAULTS, False, "another CPU").verdict == NOT_JUDGED
    assert judge_ranges(old, new, "s", DEFAULTS, True, "").verdict == REGRESSION
    # ranges that overlap: a median 1.2x slower is not a finding
    overlapping = Observed("s", "ns_per_key", 1.2, 1.0, 1.4)
    assert judge_ranges(old, overlapping, "s", DEFAULTS, True, "").verdict == PASS
    # apart, but by less than the threshold: the fastest new round over the slowest old one
    assert judge_ranges(old, Observed("s", "ns_per_key", 1.2, 1.15, 1.25), "s", DEFAULTS,
                        True, "").verdict == PASS
    layout = Observed("s", "ns_per_key", 3, 2.9, 3.1, referenced=False)
    assert judge_ranges(old, layout, "s", DEFAULTS, True, "").verdict == NOT_JUDGED


# --- the history's change points ----------------------------------------------------------

def test_mann_whitney_is_exact_on_small_samples() -> None:
    # two values above all five others: one way in C(7, 2) = 21
    assert mann_whitney_greater([1, 2, 3, 4, 5], [10, 11]) == pytest.approx(1 / 21)
    assert mann_whitney_greater([1, 2, 3], [1, 2, 3]) > 0.3
    large = mann_whitney_greater(list(range(40)), [100.0 + i for i in range(20)])
    assert large < 1e-6


def _series(values: list[float]) -> list[Observed]:
    return [Observed("s", "ns_per_key", v, v * 0.99, v * 1.01) for v in values]


def test_a_step_that_persists_is_a_regression_and_one_noisy_run_is_not() -> None:
    steady = [1.0, 1.02, 0.98, 1.01, 0.99, 1.0, 1.03, 0.97]
    # runs apart are judged at the bench gate's 1.5x at least, not the A/B threshold
    step = judge_timing(_series([*steady, 2.0, 2.04]), Observed("s", "ns_per_key", 1.98),
                        "s", DEFAULTS)
    assert step.verdict == REGRESSION and "last 3 runs" in step.note
    within = judge_timing(_series(steady), Observed("s", "ns_per_key", 1.02, 0.98, 1.05),
                          "s", DEFAULTS)
    assert within.verdict == PASS
    smaller_step = judge_timing(_series([*steady, 1.3, 1.32]), Observed("s", "ns_per_key", 1.3),
                                "s", DEFAULTS)
    assert smaller_step.verdict == PASS
    lone = judge_timing(_series(steady), Observed("s", "ns_per_key", 2.0, 1.9, 2.1), "s",
                        DEFAULTS)
    assert lone.verdict == REGRESSION and "above" in lone.note
    short = judge_timing(_series([1.0, 1.0]), Observed("s", "ns_per_key", 5.0), "s", DEFAULTS)
    assert short.verdict == NOT_JUDGED and "2 earlier runs" in short.note


# --- reports --------------------------------------------------------------------------------

def _report() -> GateReport:
    checks = [Check("k=1/a|b", "ns_per_key", 10.0, 13.0, 1.3, 1.2, 1.4, 1.05, REGRESSION,
                    detectable=1.08, pairs=20, note="<script>%0A"),
              Check("k=1/c", "agreement", 1.0, 1.0, 1.0, None, None, None, PASS),
              Check("k=1/c", "structure_bytes", None, 5.0, None, None, None, 1.05, UNKNOWN,
                    note="not in the old run"),
              Check("k=1/c", "cv", 0.0, math.inf, None, None, None, 1.1, UNKNOWN)]
    return GateReport("s<1>", "ab", checks, "the base library x.so", "judged", "cpu", "cpu")


def test_the_json_report_follows_its_published_schema_and_the_docs_copy_is_it() -> None:
    schema = json.loads(SCHEMA.read_text())
    assert json.loads((ROOT / "docs" / "reference" / "gate-report.schema.json").read_text()) \
        == schema
    document = report_json(_report())
    jsonschema.validate(document, schema)
    assert document["verdict"] == "regression"
    figures = {(f["subject"], f["figure"]): f for f in document["figures"]}
    assert figures[("k=1/c", "agreement")]["interval"] == "exact"
    assert figures[("k=1/a|b", "ns_per_key")]["interval"] == "1.200 to 1.400"
    assert figures[("k=1/c", "cv")]["new"] is None  # inf is no JSON number: unknown
    broken = copy.deepcopy(document)
    broken["figures"][0]["verdict"] = "fine"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


def test_the_markdown_escapes_names_and_states_the_verdict_in_words() -> None:
    text = markdown(_report())
    assert "REGRESSION: 1 of 2 judged figures of 's&lt;1&gt;'" in text
    assert "k=1/a\\|b" in text and "<script>" not in text and "&lt;script&gt;" in text
    assert "| 1.200 to 1.400 |" in text and "| exact |" in text and "| 1.080x |" in text


def test_junit_has_a_failure_per_regression_and_annotations_are_one_line_each() -> None:
    suite = ElementTree.fromstring(junit(_report()))
    assert suite.get("tests") == "4" and suite.get("failures") == "1"
    assert suite.get("skipped") == "2"
    assert len(suite.findall("testcase/failure")) == 1
    annotations = github_annotations(_report())
    assert len(annotations) == 1 and annotations[0].startswith("::error ")
    assert "%250A" in annotations[0] and "\n" not in annotations[0]


# --- the command ----------------------------------------------------------------------------

def _gate(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["gate", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_result_judged_against_itself_passes_and_writes_every_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outputs = [tmp_path / name for name in ("r.json", "r.md", "r.html", "r.xml")]
    code, out, err = _gate([str(SCENARIO), "--baseline", str(RESULT), "--result", str(RESULT),
                            "--json", str(outputs[0]), "--markdown", str(outputs[1]),
                            "--html", str(outputs[2]), "--junit", str(outputs[3])], capsys)
    assert (code, err) == (0, "")
    assert "PASS: none of" in out and "same CPU here" in out
    assert "timings of runs apart are judged only with --judge-timings" in out
    jsonschema.validate(json.loads(outputs[0].read_text()), json.loads(SCHEMA.read_text()))
    assert outputs[1].read_text().startswith("# Gate: foreign-python (baseline)")
    assert "<table>" in outputs[2].read_text()
    ElementTree.fromstring(outputs[3].read_text())


def _tampered(tmp_path: Path, cpu: str | None = None, bytes_factor: float = 1.0,
              agreement: float | None = None) -> Path:
    document = _document()
    peer = _peer(document)
    peer["nbytes"] = int(peer["nbytes"] * bytes_factor)
    if agreement is not None:
        peer["agreement"] = agreement
    if cpu is not None:
        document["machine"]["cpu"] = cpu
    path = tmp_path / "changed.json"
    path.write_text(json.dumps(document))
    return path


def test_a_bloat_and_a_lost_agreement_each_fail_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    changed = _tampered(tmp_path, bytes_factor=2.0, agreement=0.99999)
    code, out, err = _gate([str(SCENARIO), "--baseline", str(RESULT), "--result",
                            str(changed)], capsys)
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 3, err  # structure bytes, bytes per entry, agreement
    assert all(line.startswith(f"regression: {PEER} ") for line in lines)
    assert any("structure_bytes 2.000x" in line and "threshold 1.05x" in line
               for line in lines)
    assert "REGRESSION: 3 of" in out


def test_under_github_actions_the_summary_is_appended_and_regressions_annotated(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    changed = _tampered(tmp_path, bytes_factor=2.0)
    code, out, _ = _gate([str(SCENARIO), "--baseline", str(RESULT), "--result", str(changed)],
                         capsys)
    assert code == 1
    written = summary.read_text()
    assert written.startswith("earlier step\n# Gate: foreign-python (baseline)")
    assert "REGRESSION: 2 of" in written
    annotations = [line for line in out.splitlines() if line.startswith("::error ")]
    assert len(annotations) == 2 and all(PEER in line for line in annotations)


def test_the_html_report_escapes_every_name() -> None:
    page = html_page(_report())
    assert "<script>" not in page and "&lt;script&gt;" in page and "s&lt;1&gt;" in page
    assert page.count('<tr class="regression">') == 1


def test_timings_of_another_cpu_are_not_judged_and_the_report_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    changed = _tampered(tmp_path, cpu="Other CPU 9000")
    code, out, _ = _gate([str(SCENARIO), "--baseline", str(RESULT), "--result", str(changed),
                          "--judge-timings"], capsys)
    assert code == 0
    assert "not judged: the baseline ran on AMD EPYC, this run on Other CPU 9000" in out


def test_history_mode_reads_this_machines_entries(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("harness.apps.gate.history_mode.machine_name", lambda: "m")
    (tmp_path / "h" / "m").mkdir(parents=True)
    for number in range(1, 5):
        shutil.copy(RESULT, tmp_path / "h" / "m" / f"{number:04d}.json")
    changed = _tampered(tmp_path, bytes_factor=2.0)
    code, out, err = _gate([str(SCENARIO), "--against-history", "--history",
                            str(tmp_path / "h"), "--result", str(changed)], capsys)
    assert code == 1 and "4 earlier runs in the history" in out
    assert "structure_bytes 2.000x" in err
    code, out, _ = _gate([str(SCENARIO), "--against-history", "--history",
                          str(tmp_path / "h"), "--result", str(RESULT), "--judge-timings"],
                         capsys)
    assert code == 0 and "the new run against 4 earlier runs" in out
    code, out, _ = _gate([str(SCENARIO), "--against-history", "--history",
                          str(tmp_path / "h"), "--result", str(RESULT)], capsys)
    assert code == 0 and "Timings: not judged: timings of runs apart" in out


def test_judged_timings_against_a_baseline_catch_a_large_slowdown(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    document = _document()
    batch = _peer(document)["figures"]["foreign"]["batch_ns"]
    for key in ("median", "min", "max"):
        batch[key] *= 3
    changed = tmp_path / "slow.json"
    changed.write_text(json.dumps(document))
    argv = [str(SCENARIO), "--baseline", str(RESULT), "--result", str(changed)]
    assert _gate(argv, capsys)[0] == 0  # not judged unless asked
    code, _, err = _gate([*argv, "--judge-timings"], capsys)
    assert code == 1 and err.startswith(f"regression: {PEER} ns_per_key 3.000x")


@pytest.mark.parametrize(("argv", "words"), [
    ([], "give exactly one of --base-library"),
    (["--baseline", "x.json", "--against-history"], "give exactly one of"),
    (["--base-library", "a", "--base-command", "b"], "give exactly one of"),
    (["--base-rev", "HEAD"], "--base-rev and --build go together"),
    (["--base-library", "nowhere.so"], "--base-library: expected an existing shared library"),
    (["--base-library", str(RESULT)], "needs a scenario with one library peer"),
    (["--base-command", ""], "--base-command: expected a program"),
    (["--base-command", "python3 x.py", "--peer", "nope"], "--peer: expected one of"),
    (["--base-command", "python3 x.py", "--result", str(RESULT)], "--result judges a run"),
    (["--baseline", str(RESULT), "--threshold", "cv=0"], "--threshold cv=0"),
    (["--baseline", "missing.json"], "missing.json"),
    (["--baseline", str(ROOT / "results" / "default.json")],
     "expected a result of scenario 'foreign-python' (got 'default')"),
    (["--baseline", str(RESULT), "--max-seconds", "0"], "--max-seconds"),
])
def test_bad_input_is_one_line_and_exit_2(argv: list[str], words: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _gate([str(SCENARIO), *argv], capsys)
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and words in err, err
