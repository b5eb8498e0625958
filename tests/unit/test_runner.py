"""End-to-end runs of a small scenario: result files, their content, show and compare."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.cli import main
from harness.core.model import Result
from harness.core.native.bucketed import default_tuning
from harness.core.servers import Server
from harness.metrics.memory import Memory
from harness.recipes.layouts import LAYOUTS
from harness.recipes.layouts.bucketed_tuning import Calibration
from harness.recipes.layouts.numpy_packed import NumpyPackedLayout
from harness.report.results import load_result
from tests.conftest import SMALL_SCENARIO


@pytest.fixture(scope="module")
def small_result(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("run")
    scenario = folder / "small.toml"
    scenario.write_text(SMALL_SCENARIO, encoding="utf-8")
    assert main(["run", str(scenario), "--out", str(folder / "results")]) == 0
    return folder / "results", json.loads((folder / "results" / "small.json").read_text())


@pytest.fixture(scope="module")
def small(small_result: tuple[Path, dict[str, Any]]) -> Result:
    return load_result(small_result[0] / "small.json")


def test_run_writes_json_and_markdown(small_result: tuple[Path, dict[str, Any]]) -> None:
    """A run writes NAME.json, NAME.md and NAME.html and leaves no temporary file behind."""
    out, _ = small_result
    assert sorted(p.name for p in out.iterdir()) == ["small.html", "small.json", "small.md"]
    markdown = (out / "small.md").read_text()
    for section in ("## Balance", "## Collisions", "## Memory", "## Lookup time",
                    "## Movement", "## Parity"):
        assert section in markdown


def test_result_records_every_layout_with_metrics(
    small_result: tuple[Path, dict[str, Any]], small: Result,
) -> None:
    """Each sweep point holds one subject per layout with memory and timing, in format 2."""
    _, doc = small_result
    assert doc["format_version"] == 2 and doc["scenario_sha256"]
    # Outside the current directory the path is recorded as given (tests/unit/test_model.py).
    assert doc["scenario_file"].endswith("small.toml")
    assert [run.points_per_weight for run in small.runs] == [4, 40]
    assert [run.label for run in small.runs] == ["k=4", "k=40"]
    for run in small.runs:
        assert run.algorithm == "ring" and run.params["points_per_weight"] in (4, 40)
        assert [s.name for s in run.of_kind("layout")] == [
            name for name, cls in LAYOUTS.items() if cls.hash_bits == 32
        ]
        for subject in run.subjects:
            memory, timing = subject.figure("memory"), subject.figure("throughput")
            assert isinstance(memory, Memory) and memory.tracemalloc_bytes is not None
            assert memory.lookup_peak_bytes >= 0 and memory.rss_before_bytes > 0
            assert timing.batch_ns.min <= timing.batch_ns.median
            assert timing.random_access_ns is not None and timing.random_access_ns.median > 0
        assert run.parity.ok and run.parity.keys == 5000
        assert run.wall_s is not None and run.peak_rss_bytes is not None


def test_the_bucketed_calibration_and_the_floor_ratio_spread_are_in_the_result(
    small_result: tuple[Path, dict[str, Any]], small: Result,
) -> None:
    """The bucketed form's calibration (what was tried, chosen, the timings) is a typed
    figure beside its lookup times, read back from JSON and rendered in Markdown and
    HTML; every form's batch/floor ratio carries its per-round spread."""
    out, _ = small_result
    markdown = (out / "small.md").read_text()
    page = (out / "small.html").read_text()
    for run in small.runs:
        bucketed = run.subject("bucketed").figure("throughput")
        calibration = bucketed.calibration
        assert isinstance(calibration, Calibration)
        assert calibration.entries == run.subject("bucketed").entries
        assert calibration.trials[calibration.default].tuning == default_tuning(
            calibration.entries)
        assert calibration.chosen_tuning in {t.tuning for t in calibration.trials}
        for subject in run.of_kind("layout"):
            timing = subject.figure("throughput")
            assert timing.floor_ratio is not None and timing.floor_ratio.rounds == 2
            assert timing.floor_ratio.min <= timing.floor_ratio.median <= timing.floor_ratio.max
            if subject.name != "bucketed":
                assert timing.calibration is None
        label = calibration.chosen_tuning.label
        assert f"Chosen: {label}," in markdown
    assert markdown.count("How `bucketed`'s batch lookup was tuned") == len(small.runs)
    assert page.count("batch lookup was tuned before it was timed") == len(small.runs)


def test_measured_bytes_per_entry(small: Result) -> None:
    """Allocator-measured bytes per entry: 8 for aligned, 6 for packed (within a small constant)."""
    run = small.runs[1]  # 400 entries
    measured = {s.name: s.figure("memory") for s in run.subjects}
    assert run.ring is not None
    entries = run.ring.entries
    for name, size in [("numpy-aligned", 8), ("numpy-packed", 6), ("cffi-aligned", 8),
                       ("cffi-packed", 6)]:
        # plus a constant: the Python objects that own the buffer (under 8 KiB)
        assert 0 <= measured[name].structure_bytes - size * entries < 8192, name
    # tracemalloc sees numpy's buffers but not the malloc'd C arrays
    assert measured["numpy-packed"].tracemalloc_bytes >= 6 * entries
    assert measured["cffi-packed"].tracemalloc_bytes < 6 * entries


def test_balance_and_movement_figures(small: Result) -> None:
    """Balance carries the four CVs; removal moves only the removed server's keys, mod N most."""
    run = small.runs[1]
    balance = run.figure("balance")
    assert balance.cv_theory == pytest.approx(np.sqrt(9 / (10 * 40 + 1)))
    assert balance.min_keys <= balance.mean_keys <= balance.max_keys
    remove, add = run.figure("movement")
    assert remove.ring_only_changed_server and add.ring_only_changed_server
    assert remove.ring_moved_fraction == pytest.approx(remove.changed_server_share, abs=0.02)
    assert remove.mod_n_moved_fraction > 0.8  # 10 -> 9: about 9/10 move
    assert run.figure("collisions").collisions == 0


def test_show_and_compare(small_result: tuple[Path, dict[str, Any]],
                          capsys: pytest.CaptureFixture[str]) -> None:
    """show re-renders the same Markdown; compare of a result with itself shows no change."""
    out, _ = small_result
    assert main(["show", str(out / "small.json")]) == 0
    assert capsys.readouterr().out.strip() == (out / "small.md").read_text().strip()
    assert main(["compare", str(out / "small.json"), str(out / "small.json")]) == 0
    table = capsys.readouterr().out
    assert "| cffi-packed" in table and "batch_ns" in table
    rows = [line for line in table.splitlines() if line.startswith("| ") and "layout" not in line]
    assert rows and all(line.rstrip(" |").endswith("=") for line in rows)


def test_old_result_format_is_refused_with_upgrade_advice(
    small_result: tuple[Path, dict[str, Any]], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A result of another format version gets exit 2 and a message on how to upgrade."""
    _, doc = small_result
    old = tmp_path / "old.json"
    old.write_text(json.dumps({**doc, "format_version": 9}))
    assert main(["show", str(old)]) == 2
    err = capsys.readouterr().err
    assert "format version 9" in err and "re-run its scenario" in err
    with pytest.raises(Exception, match="not a ring-harness result"):
        bad = tmp_path / "bad.json"
        bad.write_text("{}")
        load_result(bad)


class MisroutingLayout(NumpyPackedLayout):
    """numpy-packed with an off-by-one: keys equal to a position go to the next point."""

    def lookup_many(self, key_hashes: np.ndarray) -> np.ndarray:
        i = np.searchsorted(self._hashes, key_hashes, side="right")
        i[i == len(self._owners)] = 0
        return self._owners[i]


def test_parity_failure_fails_the_run_and_writes_nothing(
    write_scenario: Callable[[str], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A layout that misroutes exact hits makes the run fail loudly (exit 1), with no result."""
    monkeypatch.setitem(LAYOUTS, "numpy-packed", MisroutingLayout)
    # Keys named like the points hash exactly onto positions.
    path = write_scenario('[servers]\ncount = 3\n[generator]\npoints_per_weight = 5\n'
                          '[keys]\ncount = 20\nname = "server-0:{i}"\n'
                          '[measure]\nmetrics = ["balance"]\nrepeats = 1')
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "layout numpy-packed routes" in err and "differently from the reference" in err
    assert not out.exists()


def test_construction_scenario_with_peers(
    write_scenario: Callable[[str], Path], tmp_path: Path,
) -> None:
    """A libketama ring with uhashring beside it: one run, peers sized and timed, same owners."""
    path = write_scenario(
        'name = "ketama"\n[servers]\ncount = 5\nname = "10.0.{i}.1:11211"\n'
        '[generator]\nconstruction = "libketama"\n[keys]\ncount = 3000\n'
        '[measure]\nlayouts = ["numpy-packed", "cffi-packed"]\n'
        'peers = ["uhashring-ketama"]\nrepeats = 1\nscalar_keys = 300\n'
    )
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 0
    result = load_result(tmp_path / "out" / "ketama.json")
    (run,) = result.runs
    assert run.label == "libketama" and run.ring is not None and run.ring.entries == 5 * 160
    (peer,) = run.of_kind("peer")
    assert peer.name == "uhashring-ketama" and peer.agreement == 1.0
    assert peer.figure("memory").bytes_per_entry > 6
    assert peer.figure("throughput").scalar_ns.median > 0
    assert "## Peer libraries" in (tmp_path / "out" / "ketama.md").read_text()


def test_construction_refuses_its_fixed_fields(
    write_scenario: Callable[[str], Path], capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    """A construction fixes its points and hash: setting them is an error, not ignored."""
    path = write_scenario('[servers]\ncount = 3\n[generator]\nconstruction = "nginx"\n'
                          'points_per_weight = 100\n')
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 2
    assert "generator.points_per_weight must be left out" in capsys.readouterr().err


class ScalarMisroutingLayout(NumpyPackedLayout):
    """numpy-packed whose scalar lookup (only) answers server 0 for every key."""

    def lookup(self, key_hash: int) -> int:
        return 0


def test_scalar_only_parity_failure_names_the_scalar_answer() -> None:
    """When only the scalar path is wrong, the message shows the scalar answer, not the batch's."""
    from harness.core.errors import ParityError
    from harness.metrics.parity import check_parity
    from harness.recipes.algorithms.ring import RingAlgorithm

    reference = RingAlgorithm.build([Server("a"), Server("b")], points_per_weight=3)
    ring = reference.ring
    key = int(ring.positions[np.flatnonzero(ring.owners == 1)[0]])  # an exact hit on server 1
    keys = np.array([key], dtype=np.uint32)
    form = RingAlgorithm(reference.servers, reference.params, reference.construction, ring,
                         ScalarMisroutingLayout.build(ring.positions, ring.owners))
    with pytest.raises(ParityError, match=rf"0 of 1 keys \(batch\) and 1 of 1 \(scalar\).*"
                                          rf"key hash {key} -> 0, expected 1"):
        check_parity(reference, keys, {"numpy-packed": form})
