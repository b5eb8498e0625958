"""compare and the history judge noise: timing changes carry an interval and read "within
noise" unless they clear it; one-side-only sweep points and subjects are named; figures a
subject does not report read "unknown"; peers' figures are compared and kept."""

from __future__ import annotations

import copy
import json
import re
import statistics
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from harness.core.atomic import write_numbered
from harness.core.model import Result
from harness.core.steps import steps
from harness.metrics.registry import record_types
from harness.report import markdown
from harness.report.compare import (
    compared,
    comparison_report,
    judge_timing,
    paired_runs,
    signed_percent,
)
from harness.report.history_page import history_report
from tests.paths import ROOT

TUTORIAL = json.loads((ROOT / "results" / "tutorial.json").read_text(encoding="utf-8"))
FOREIGN = json.loads((ROOT / "results" / "foreign-python.json").read_text(encoding="utf-8"))


def _result(document: dict[str, Any]) -> Result:
    return Result.from_json(copy.deepcopy(document), "test", record_types=record_types())


def _with_rounds(document: dict[str, Any], scale: float, spread: float,
                 only: str | None = None, cpu: float | None = None) -> dict[str, Any]:
    """The document with every layout timing's rounds replaced: ten rounds around
    `scale` times its median, +-spread of it (only `only`'s, when named); with `cpu`,
    CPU rounds too, around `cpu` times the median it had."""
    changed = copy.deepcopy(document)
    offsets = [-1.0, -0.8, -0.5, -0.3, -0.1, 0.1, 0.3, 0.5, 0.8, 1.0]
    for run in changed["runs"]:
        for subject in run["subjects"]:
            timings = subject["figures"].get("throughput", {})
            for name in ("scalar_ns", "batch_ns"):
                timing = timings.get(name)
                if timing is None or (only is not None and subject["name"] != only):
                    continue
                samples = [timing["median"] * scale * (1 + spread * o) for o in offsets]
                if cpu is not None:
                    timing["cpu_samples"] = [timing["median"] * cpu * (1 + spread * o)
                                             for o in offsets]
                timing.update(median=sorted(samples)[4] / 2 + sorted(samples)[5] / 2,
                              min=min(samples), max=max(samples), rounds=len(samples),
                              samples=samples)
    return changed


def _table(a: dict[str, Any], b: dict[str, Any]) -> str:
    return markdown.report(comparison_report(_result(a), _result(b), "a", "b"))


def _row(table: str, subject: str, figure: str, ring: str = "k=160") -> str:
    return next(line for line in table.splitlines()
                if re.match(rf"\| {re.escape(ring)} +\| {re.escape(subject)} +\| "
                            rf"{re.escape(figure)} +\|", line))


def test_unchanged_timings_read_within_noise_with_their_interval() -> None:
    """Two runs 5% apart with +-20% noise a round: every timing within noise, with its
    ratio and interval, and no finding in the verdict."""
    base = _with_rounds(TUTORIAL, 1.0, 0.2)
    table = _table(base, _with_rounds(TUTORIAL, 1.05, 0.2))
    row = _row(table, "cffi-packed", "batch_ns")
    assert re.search(r"\| 1\.05x \(\d\.\d\d-\d\.\d\d\) +\| within noise +\|$", row)
    assert "**No timing difference beyond the noise.**" in table
    assert "16 timing change(s) within the noise" in table
    assert "slower" not in table and "faster" not in table


def test_a_2x_slowdown_is_a_finding_named_in_the_verdict() -> None:
    """One layout twice as slow: its rows read slower with the change, the verdict names
    them; the other layouts stay within noise."""
    base = _with_rounds(TUTORIAL, 1.0, 0.05)
    slowed = _with_rounds(base, 2.0, 0.05, only="numpy-packed")
    table = _table(base, slowed)
    assert re.search(r"\| 2\.00x \([\d.]+-[\d.]+\) +\| \+100\.0% slower +\|$",
                     _row(table, "numpy-packed", "batch_ns"))
    assert "**Timing differences beyond the noise: 4**" in table
    assert "k=16, numpy-packed, scalar_ns: +100.0% slower" in table
    assert re.search(r"\| = +\|$", _row(table, "cffi-packed", "batch_ns"))
    comparison = compared(paired_runs(_result(base), _result(slowed)))
    assert len(comparison.findings) == 4 and comparison.judged == 16


def test_results_without_rounds_are_judged_by_their_spreads() -> None:
    """Committed results kept no rounds: the interval comes from min-max, and says so."""
    table = _table(TUTORIAL, TUTORIAL)
    assert "spreads only" in _row(table, "cffi-packed", "batch_ns")


def test_too_few_rounds_leave_the_noise_unknown() -> None:
    """A peer timed over 3 rounds a side is not judged: its change says the noise is
    unknown, and it is no finding."""
    slower = copy.deepcopy(FOREIGN)
    timing = slower["runs"][0]["subjects"][1]["figures"]["foreign"]["batch_ns"]
    timing.update(median=2 * timing["median"], min=2 * timing["min"], max=2 * timing["max"])
    table = _table(FOREIGN, slower)
    row = _row(table, "ketama-python", "foreign: batch ns/key, timed by us", "libketama")
    assert "+100.0% (noise unknown: under 5 rounds)" in row
    assert "**No timing difference beyond the noise.**" in table


def test_foreign_peer_figures_are_compared() -> None:
    """A pipe peer's ns/key by our clock and by its own, its ratio to our route, its
    agreement, points, reported bytes and PSS growth are rows."""
    table = _table(FOREIGN, FOREIGN)
    for figure in ("peer: points", "peer: same owner as our ring",
                   "foreign: agreement with its claimed recipe",
                   "foreign: batch ns/key, timed by us", "foreign: ns/key by its own clock",
                   "foreign: batch time vs our route (per round)",
                   "foreign: bytes it reports", "foreign: PSS growth at BUILD"):
        assert re.search(r"\| = +\|$", _row(table, "ketama-python", figure, "libketama")), \
            figure


def test_figures_a_subject_does_not_report_read_unknown() -> None:
    """A peer that reports no points and no bytes: "unknown" on its side, never 0 or 0.0x."""
    silent = copy.deepcopy(FOREIGN)
    peer = silent["runs"][0]["subjects"][1]
    peer["entries"] = 0
    peer["figures"]["foreign"]["reported_bytes"] = 0
    del peer["figures"]["foreign"]["self_timed_ns"]
    table = _table(FOREIGN, silent)
    for figure, a in (("peer: points", "3,192"), ("foreign: bytes it reports", "255,360"),
                      ("foreign: ns/key by its own clock", "3,226.92")):
        row = _row(table, "ketama-python", figure, "libketama")
        assert re.search(rf"\| {a} +\| unknown +\| +\| unknown +\|$", row), row
    assert "| 0 " not in table.split("| peer: points")[1].splitlines()[0]
    assert "0.0x" not in table


def test_one_side_only_sweep_points_and_subjects_are_named() -> None:
    """A sweep point only A ran, and a layout only A measured, are named, not dropped."""
    fewer = copy.deepcopy(TUTORIAL)
    fewer["runs"] = fewer["runs"][:1]
    fewer["runs"][0]["subjects"] = [s for s in fewer["runs"][0]["subjects"]
                                    if s["name"] != "numpy-packed"]
    table = _table(TUTORIAL, fewer)
    assert "Sweep point(s) only in A, not compared: `k=16`." in table
    assert "Only in A at k=160: `numpy-packed`." in table
    table = _table(fewer, TUTORIAL)
    assert "Sweep point(s) only in B, not compared: `k=16`." in table
    assert "Only in B at k=160: `numpy-packed`." in table


@given(st.floats(-10, 10).filter(lambda f: f != 0))
def test_a_change_never_reads_as_zero(fraction: float) -> None:
    """Any nonzero relative change shows a nonzero digit: never "+0.0%"."""
    shown = signed_percent(fraction)
    assert re.search(r"[1-9]", shown.split("e")[0]), shown
    assert shown[0] == ("+" if fraction > 0 else "-")


def test_a_step_inside_the_runs_noise_is_not_flagged() -> None:
    """A +77% level that the runs' own bands cover is no step; the same values with
    tight bands are one confirmed step."""
    values = [60.0, 61.0, 60.5, 107.0, 106.0, 108.0]
    wide = [(v * 0.5, v * 1.9) for v in values]
    tight = [(v * 0.98, v * 1.02) for v in values]
    assert steps(values, 0.15, bands=wide) == []
    (step,) = steps(values, 0.15, bands=tight)
    assert step.at == 3 and step.confirmed


def _history(folder: Path, documents: list[dict[str, Any]]) -> str:
    for number, document in enumerate(documents, 1):
        write_numbered(folder / "vm", lambda n: f"{n:04d}.json", number,
                       json.dumps(document))
    return markdown.report(history_report(folder))


def test_history_flags_a_slowdown_beyond_the_noise_only(tmp_path: Path) -> None:
    """Four runs, the last two with numpy-packed twice as slow: a confirmed step of its
    timings; the same change under noise that covers it (+-60% a round): none."""
    base = _with_rounds(TUTORIAL, 1.0, 0.05)
    slowed = _with_rounds(base, 2.0, 0.05, only="numpy-packed")
    page = _history(tmp_path / "clear", [base, base, slowed, slowed])
    row = _row(page, "numpy-packed", "batch_ns")
    assert re.search(r"\+100\.0% at 0003 +\|$", row), row
    assert "(unconfirmed)" not in row
    assert re.search(r"\| +\|$", _row(page, "cffi-packed", "batch_ns"))
    noisy = _with_rounds(TUTORIAL, 1.0, 0.6)
    noisy_slowed = _with_rounds(noisy, 1.6, 0.6, only="numpy-packed")
    page = _history(tmp_path / "noisy", [noisy, noisy, noisy_slowed, noisy_slowed])
    assert re.search(r"\| +\|$", _row(page, "numpy-packed", "batch_ns"))


def test_a_slower_machine_is_not_a_slower_layout(tmp_path: Path) -> None:
    """Wall time doubled on every layout but CPU time unchanged (the machine got busy):
    compare finds nothing and the history flags no step; wall and CPU time doubled on
    one layout: both find it."""
    base = _with_rounds(TUTORIAL, 1.0, 0.05, cpu=0.9)
    busy = _with_rounds(TUTORIAL, 2.0, 0.05, cpu=0.9)
    table = _table(base, busy)
    assert "**No timing difference beyond the noise.**" in table
    row = _row(table, "numpy-packed", "batch_ns")
    assert re.search(r"\| 2\.00x \([\d.]+-[\d.]+\); CPU time 1\.00x \([\d.]+-[\d.]+\) +"
                     r"\| within noise +\|$", row), row
    page = _history(tmp_path / "busy", [base, base, busy, busy])
    assert re.search(r"\| +\|$", _row(page, "numpy-packed", "batch_ns"))
    slowed = _with_rounds(base, 2.0, 0.05, only="numpy-packed", cpu=1.8)
    table = _table(base, slowed)
    assert "**Timing differences beyond the noise: 4**" in table
    assert _row(table, "numpy-packed", "batch_ns").rstrip(" |").endswith(
        "+100.0% slower (CPU time +100.0%)")
    page = _history(tmp_path / "slowed", [base, base, slowed, slowed])
    assert re.search(r"\+100\.0% at 0003 +\|$", _row(page, "numpy-packed", "batch_ns"))


def test_history_keeps_a_foreign_peers_figures(tmp_path: Path) -> None:
    """A pipe peer's timings, agreement and memory are rows of the history's index."""
    page = _history(tmp_path, [FOREIGN, FOREIGN])
    for figure in ("foreign: batch ns/key, timed by us", "foreign: ns/key by its own clock",
                   "foreign: agreement with its claimed recipe", "foreign: bytes it reports",
                   "foreign: PSS growth at BUILD", "peer: points"):
        assert _row(page, "ketama-python", figure, "libketama"), figure


def test_hostile_rounds_leave_the_noise_unknown(tmp_path: Path) -> None:
    """Rounds no run writes (negative, zero, more than a run takes): those timings read
    "noise unknown", CPU rounds that are no timing are left out; nothing is held for a
    million rounds, and compare of such a file renders."""
    from harness.cli import main

    hostile = _with_rounds(TUTORIAL, 1.0, 0.1)
    timings = [s["figures"]["throughput"]["batch_ns"] for s in hostile["runs"][0]["subjects"]]
    for timing in timings:
        timing["median"] *= 1.1
    timings[0]["samples"] = [-1.0] * 10
    timings[1]["samples"] = [0.0] * 10
    timings[2]["cpu_samples"] = [-5.0] * 10
    timings[3]["samples"] = [1.0] * 1_000_000
    table = _table(_with_rounds(TUTORIAL, 1.0, 0.1), hostile)
    for layout in ("cffi-aligned", "cffi-packed", "numpy-packed"):
        assert re.search(r"\| +\| \+10\.0% \(noise unknown: rounds that no run records\) +\|$",
                         _row(table, layout, "batch_ns")), layout
    assert re.search(r"\| 1\.\d\dx \([\d.-]+\) +\| within noise +\|$",
                     _row(table, "numpy-aligned", "batch_ns"))
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(hostile), encoding="utf-8")
    assert main(["compare", str(path), str(path)]) == 0


ANY_FLOAT = st.floats(allow_nan=True, allow_infinity=True)
ANY_ROUNDS = st.none() | st.lists(ANY_FLOAT, max_size=12).map(tuple) | st.just((1.0,) * 1001)


@given(st.tuples(ANY_FLOAT, ANY_FLOAT, ANY_FLOAT, st.integers(-1, 2000), ANY_ROUNDS,
                 ANY_ROUNDS),
       st.tuples(ANY_FLOAT, ANY_FLOAT, ANY_FLOAT, st.integers(-1, 2000), ANY_ROUNDS,
                 ANY_ROUNDS))
def test_any_timing_is_judged_or_left_unknown(a: tuple[Any, ...], b: tuple[Any, ...]) -> None:
    """Whatever a result file holds for two timings (medians, rounds, samples, CPU
    samples): a verdict with an interval holding its ratio, or none; never an exception."""
    from harness.metrics.instruments.timing import Timing

    judged = judge_timing(Timing(*a), Timing(*b))
    if judged.interval is None:
        assert judged.verdict is None and judged.why
    else:
        assert judged.verdict in ("slower", "faster", "within noise")
        assert judged.interval.low <= judged.interval.ratio <= judged.interval.high


def _foreign_rounds(scale: float, reference: list[float]) -> dict[str, Any]:
    """foreign-python's result with its peer's batch over ten rounds (CPU time too) at
    `scale` times its median, and our route's rounds as given."""
    changed: dict[str, Any] = copy.deepcopy(FOREIGN)
    record = changed["runs"][0]["subjects"][1]["figures"]["foreign"]
    batch = record["batch_ns"]
    samples = [batch["median"] * scale * (1 + 0.02 * o) for o in range(-5, 5)]
    batch.update(median=statistics.median(samples), min=min(samples), max=max(samples),
                 rounds=10, samples=samples, cpu_samples=[0.9 * s for s in samples])
    record["reference_ns"].update(median=statistics.median(reference), min=min(reference),
                                  max=max(reference), rounds=10, samples=reference)
    return changed


def test_a_wild_reference_does_not_hide_what_the_cpu_time_shows() -> None:
    """A pipe peer twice as slow, by wall and CPU time, while our plain-Python route beside
    it had wild rounds: a finding. The same peer unchanged: none."""
    steady = [2000.0 + i for i in range(10)]
    wild = [2000.0, 9000.0, 150.0, 2100.0, 30000.0, 1900.0, 2000.0, 400.0, 2050.0, 8000.0]
    table = _table(_foreign_rounds(1.0, steady), _foreign_rounds(2.0, wild))
    row = _row(table, "ketama-python", "foreign: batch ns/key, timed by us", "libketama")
    assert "against our route in its rounds" in row and "CPU time 2.00x" in row
    assert row.rstrip(" |").endswith("+100.0% slower (CPU time +100.0%)"), row
    table = _table(_foreign_rounds(1.0, steady), _foreign_rounds(1.0, wild))
    assert "**No timing difference beyond the noise.**" in table
