"""Committed results and a fresh run name a fastest only when it is clear of the others by
its interval (`harness.metrics.instruments.targets.leaders`); leaders inside each other's
noise read as a tie."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from harness.core.tables import Report
from harness.report.results import load_result
from harness.report.sections import result_report
from tests.conftest import SMALL_SCENARIO
from tests.paths import ROOT

RESULTS = ROOT / "results"
RENDERED = sorted(p for p in RESULTS.rglob("*.json") if p.with_suffix(".md").exists())


def _answers(name: str) -> dict[str, str]:
    """The answer lines about lookup time or the fastest batch, by their first words."""
    report = result_report(load_result(RESULTS / name))
    return {a.text.split(":")[0]: a.text for a in report.answers if " batch" in a.text}


def _notes(report: Report) -> list[str]:
    return [note for s in report.sections for t in s.tables for note in t.notes]


def test_layouts_within_each_others_noise_read_as_a_tie() -> None:
    """tutorial: cffi-aligned has the lowest batch median at k=160 (77.4 ns) but its
    rounds reach 100.6 ns, over the others' 84.0 to 106.2: no layout is named the
    fastest, all four are named as leaders."""
    line = _answers("tutorial.json")["k=160"]
    assert "the fastest batch lookup" not in line
    assert ("no batch lookup is clear of the others: the leaders, cffi-aligned, "
            "numpy-aligned, numpy-packed and cffi-packed, are within noise of each other "
            "(77.4, 84.2, 84.7 and 84.7 ns per key)") in line
    assert "the lowest median, cffi-aligned's, is 67.50x one random access" in line


def test_a_layout_clear_of_the_others_is_named_the_fastest() -> None:
    """default: bucketed's batch rounds all lie below every other layout's."""
    line = _answers("default.json")["k=160"]
    assert line.startswith("k=160: the fastest batch lookup, bucketed, clear of the others "
                           "by its interval, takes 7.2 ns per key")
    notes = _notes(result_report(load_result(RESULTS / "default.json")))
    assert any(n.startswith("Fastest batch lookup: bucketed (7.2 ns per key), clear of the "
                            "runner-up by its interval: cffi-aligned / bucketed 12.93x")
               for n in notes)


def test_algorithms_compared_name_a_tie_and_a_clear_fastest() -> None:
    """algorithms: at N=1,000 PowerCH's and JumpBackHash's batch ranges overlap (a tie);
    at N=10 the bucketed ring is clear of jump, the runner-up."""
    lines = _answers("algorithms.json")
    assert ("no batch is clear of the others: the leaders, powerch and jumpback, are within "
            "noise of each other (5.5 and 6.7 ns a key)") in lines["N=1,000, equal weights"]
    assert ("the fastest batch, ring k=160 bucketed, clear of the others by its interval, "
            "takes 4.4 ns a key") in lines["N=10, equal weights"]


def test_the_peers_base_is_labelled_as_the_lowest_median() -> None:
    report = result_report(load_result(RESULTS / "peers-libketama.json"))
    (table,) = [t for s in report.sections if s.title.startswith("Peer libraries")
                for t in s.tables]
    headings = [c.heading for c in table.columns]
    assert "vs our lowest scalar median" in headings
    assert not any("fastest" in h for h in headings)
    assert any("a base chosen by its median alone" in n for n in table.notes)
    assert any(n.startswith("Fastest scalar lookup of ours: bucketed") for n in table.notes)


@pytest.mark.parametrize("path", RENDERED, ids=lambda p: str(p.relative_to(RESULTS)))
def test_no_committed_result_names_a_fastest_from_medians_alone(path: Path) -> None:
    """Every answer or note that names a fastest batch says it is clear of the others by
    its interval, or names the leaders within noise of each other."""
    report = result_report(load_result(path))
    said = [a.text for a in report.answers] + _notes(report)
    for line in said:
        if "the fastest batch" in line or line.startswith("Fastest "):
            assert ("clear of the others by its interval" in line
                    or "clear of the runner-up by its interval" in line
                    or "within noise of each other" in line), line


def test_a_fresh_run_judges_its_fastest_on_the_rounds_interval(tmp_path: Path) -> None:
    """A result that keeps its rounds judges the leaders on the 99% bootstrap interval of
    the ratio (which of the two answers it gives depends on the machine; both are
    checked for their form)."""
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL_SCENARIO.replace(
        "[measure]", '[measure]\nmetrics = ["throughput"]\nlayouts = ["cffi-packed", '
                     '"numpy-packed"]'), encoding="utf-8")
    assert main(["run", str(scenario), "--out", str(tmp_path), "--no-history",
                 "--no-progress"]) == 0
    report = result_report(load_result(tmp_path / "small.json"))
    notes = [n for n in _notes(report) if n.startswith("Fastest batch lookup")]
    assert len(notes) == 2 and all("(99% interval)" in n for n in notes)
    lines = [a.text for a in report.answers if " batch lookup" in a.text]
    assert len(lines) == 2
    for line in lines:
        assert ("clear of the others by its interval" in line) != ("within noise" in line)
