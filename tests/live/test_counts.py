"""The counts metric: callgrind's output read right, refused without valgrind, and repeatable."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from harness.core.errors import HarnessError, ScenarioError
from harness.metrics.callgrind import count_layout, parse_totals
from harness.recipes.layouts import LAYOUTS
from harness.run.machine_check import check_machine, machine_problems
from harness.run.scenario import parse_scenario

needs_valgrind = pytest.mark.tools("valgrind")

CACHE_SIM_OUTPUT = """# callgrind format
events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
fn=(1) ring_lookup_many_packed
0 3821070 373783 20002 2 116640 624
totals: 3821070 373783 20002 2 116640 624
"""


def test_totals_read_with_trailing_zeros_left_out() -> None:
    """callgrind leaves trailing zero events out of `totals:`; they read as 0."""
    events = parse_totals(CACHE_SIM_OUTPUT, "x")
    assert (events.instructions, events.d1_misses, events.ll_misses) == (3821070, 117264, 0)
    assert events.per(20_000)["instructions_per_key"] == pytest.approx(191.0535)


def test_output_without_instruction_events_is_refused() -> None:
    """A file with no Ir event (not callgrind's, or cut short) is an error naming the file."""
    with pytest.raises(HarnessError, match=r"out\.3: no callgrind events line"):
        parse_totals("totals: 5\n", "out.3")


def test_counts_reads_without_valgrind_and_is_refused_by_run(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With no valgrind on PATH, a scenario asking for counts still reads (validation is the
    same on every machine), and the machine check that `run` makes before any work refuses
    it, with the way to install it."""
    monkeypatch.setattr("harness.core.tools.shutil.which", lambda _name: None)
    document = {"servers": {"count": 3}, "measure": {"metrics": ["throughput", "counts"]}}
    scenario = parse_scenario(document, "scenarios/x.toml")
    assert "counts" in scenario.measure.metrics
    problems = machine_problems(scenario)
    assert len(problems) == 1
    message = problems[0]
    assert message.startswith("scenarios/x.toml: measure.metrics must be metrics that can run")
    assert "valgrind is missing (valgrind, setarch" in message
    assert "apt-get install valgrind" in message
    with pytest.raises(ScenarioError, match="counts: valgrind is missing"):
        check_machine([scenario])


def test_counts_not_on_by_default() -> None:
    """A scenario without a metrics list does not ask for valgrind."""
    scenario = parse_scenario({"servers": {"count": 3}}, "x.toml")
    assert "counts" not in scenario.measure.metrics


def _ring_file(directory: Path) -> Path:
    rng = np.random.default_rng(7)
    positions = np.unique(rng.integers(0, 2**32, 20_000, dtype=np.uint32))
    owners = (np.arange(len(positions)) % 50).astype(np.uint16)
    keys = rng.integers(0, 2**32, 4_000, dtype=np.uint32)
    path = directory / "ring.npz"
    np.savez(path, positions=positions, owners=owners, keys=keys)
    return path


@needs_valgrind
def test_c_layout_counted_alike_twice_and_scalar_matches_batch(tmp_path: Path) -> None:
    """Two fresh callgrind runs count identical instructions in every phase, and the batch's
    cache misses within the gate's 2% (a build's and a scalar call's misses follow the heap
    the interpreter left, which is why the gate judges those on instructions only); the
    scalar and batch C searches execute about the same instructions per key (same binary
    search), far fewer than the whole Python call of a numpy layout."""
    ring = _ring_file(tmp_path)
    layout = LAYOUTS["cffi-packed"]
    functions = layout.c_functions
    first = count_layout("cffi-packed", ring, ("build", "batch", "scalar"), 500, functions)
    second = count_layout("cffi-packed", ring, ("build", "batch", "scalar"), 500, functions)
    assert {phase: e.instructions for phase, e in first.items()} == {
        phase: e.instructions for phase, e in second.items()}
    for misses in ("d1_misses", "ll_misses"):
        one, two = getattr(first["batch"], misses), getattr(second["batch"], misses)
        assert abs(one - two) <= 0.02 * max(one, two, 50)
    batch = first["batch"].per(4_000)["instructions_per_key"]
    scalar = first["scalar"].per(500)["instructions_per_key"]
    assert 0.8 < scalar / batch < 1.2
    assert first["build"].instructions > 0
    whole = count_layout("numpy-aligned", ring, ("scalar",), 500, None)["scalar"]
    assert whole.per(500)["instructions_per_key"] > 10 * scalar
    assert list(tmp_path.iterdir()) == [ring]


@pytest.mark.parametrize(("baseline", "current", "regressed"), [
    (191.0, 210.1, True),     # 1.10x instructions per key
    (191.0, 194.0, False),    # +1.6%: within the tolerance
    (5.8, 5.95, True),        # +2.6% misses per key
    (0.003, 0.006, False),    # doubled, but three thousandths of a miss per key
    (191.0, 150.0, False),    # fewer
])
def test_count_figures_regress_past_two_percent(baseline: float, current: float,
                                                regressed: bool) -> None:
    """A count regresses when it grows by more than 2% and by more than 0.01 per key."""
    from harness.apps.benchgate.decide import FigureVerdict

    verdict = FigureVerdict("counts/batch/cffi-packed/16k/instructions_per_key", baseline,
                            current)
    assert verdict.regressed is regressed
    miss = FigureVerdict("counts/batch/cffi-packed/16k/l1_misses_per_key", baseline, current)
    assert miss.regressed is regressed
