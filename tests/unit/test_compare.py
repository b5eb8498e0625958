"""compare: figures matched by sweep point and layout, 64-bit layouts with their siblings,
across result formats."""

import json
import re
from pathlib import Path

import pytest

from harness.cli import main
from harness.report import markdown
from harness.report.compare import comparison_report, paired_runs, sibling
from harness.report.results import load_result, only_point, split_point
from tests.paths import FIXTURES, ROOT

FORMAT1 = FIXTURES / "format1"


def test_sibling_strips_the_width_suffix() -> None:
    """numpy-packed-64 is compared with numpy-packed; other names are left alone."""
    assert sibling("numpy-packed-64") == "numpy-packed"
    assert sibling("bucketed") == "bucketed"


def test_comparison_rows_and_changes() -> None:
    """A 32-bit and a 64-bit result line up: collisions to zero, bytes per entry +66.7%."""
    a = load_result(FORMAT1 / "hash-bits-32.json")
    b = load_result(FORMAT1 / "hash-bits-64.json")
    table = markdown.report(comparison_report(a, b, "a.json", "b.json"))
    assert re.search(r"numpy-packed / numpy-packed-64 +\| bytes_per_entry", table)
    assert "+66.7%" in table
    assert "| collisions " in table and "-100.0%" in table
    assert "| entries " in table


def test_comparison_across_formats(tmp_path: Path) -> None:
    """A format-1 file compares with its own format-2 form: every figure unchanged."""
    old = load_result(FORMAT1 / "default.json")
    upgraded = tmp_path / "default.json"
    upgraded.write_text(json.dumps(old.to_json()))
    new = load_result(upgraded)
    assert new.format_version == 2
    table = markdown.report(comparison_report(old, new, "format1", "format2"))
    rows = [line for line in table.splitlines() if line.startswith("| k=")]
    assert len(rows) > 20
    assert all(re.search(r"\| = +\|$", line.rstrip()) for line in rows)


def test_nothing_in_common() -> None:
    """Results sharing neither a sweep point nor a recipe (a points ring against nginx's
    construction) say so instead of printing an empty table."""
    a = load_result(FORMAT1 / "default.json")
    b = load_result(FORMAT1 / "nginx.json")
    report = markdown.report(comparison_report(a, b, "a", "b"))
    assert "share no sweep point and no recipe" in report


TUTORIAL = ROOT / "results" / "tutorial.json"


def test_results_at_different_sweep_points_pair_by_recipe() -> None:
    """A k=160 result and a k=16 result of the same fleet share no sweep point: their runs
    pair by recipe, the rows say `k=160 → k=16`, percentages read as percentages with
    their change in points, and balance and load figures are there."""
    whole = load_result(TUTORIAL)
    a, b = only_point(whole, "k=160", "a"), only_point(whole, "k=16", "b")
    assert [(x.label, y.label) for x, y in paired_runs(a, b)] == [("k=160", "k=16")]
    table = markdown.report(comparison_report(a, b, "a", "b"))
    balance_a, balance_b = whole.runs[0].figure("balance"), whole.runs[1].figure("balance")
    cv_row = next(line for line in table.splitlines() if "| cv_arcs " in line)
    assert cv_row.startswith("| k=160 → k=16 ")
    assert f"| {100 * balance_a.cv_arcs:.2f}% " in cv_row
    assert f"| {100 * balance_b.cv_arcs:.2f}% " in cv_row
    assert f"{100 * (balance_b.cv_arcs - balance_a.cv_arcs):+.2f} pp" in cv_row
    peak = next(line for line in table.splitlines() if "| peak-to-mean (keys" in line)
    assert f"| {balance_a.max_over_mean:.3f} " in peak
    assert "| load peak-to-mean " in table and "| load hottest share " in table


def test_movement_and_migration_figures_are_compared() -> None:
    """Each operation's moved fractions (matched by operation) and a migration's moved keys
    and new ring's balance are rows of the comparison."""
    default = load_result(FORMAT1 / "default.json")
    table = markdown.report(comparison_report(default, default, "a", "b"))
    assert re.search(r"\| movement, \w+ [\w-]+: ring moved +\|", table)
    migration = load_result(TUTORIAL.with_name("tutorial-migration.json"))
    table = markdown.report(comparison_report(migration, migration, "a", "b"))
    for label in ("migration: keys moved", "migration: new ring's cv_arcs",
                  "migration: new ring's peak-to-mean", "migration: bytes after"):
        assert f"| {label} " in table, label


def test_one_sweep_point_of_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`compare FILE#k=160 FILE#k=16` compares two points of one result; an unknown point
    is refused in one line naming the points there are."""
    assert split_point("x/tutorial.json#k=16") == (Path("x/tutorial.json"), "k=16")
    odd = tmp_path / "odd#name.json"
    odd.write_text("{}")
    assert split_point(odd) == (odd, None)  # a path that exists is a path
    assert main(["compare", f"{TUTORIAL}#k=160", f"{TUTORIAL}#k=16"]) == 0
    assert "k=160 → k=16" in capsys.readouterr().out
    assert main(["compare", f"{TUTORIAL}#k=1", f"{TUTORIAL}#k=16"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no sweep point 'k=1'" in err and "k=160, k=16" in err
