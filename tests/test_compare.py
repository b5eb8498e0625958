"""compare: figures matched by sweep point and layout, 64-bit layouts with their siblings,
across result formats."""

import json
import re
from pathlib import Path

from harness.report import markdown
from harness.report.compare import comparison_report, sibling
from harness.report.results import load_result

FORMAT1 = Path(__file__).parent / "fixtures" / "format1"


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
    """Results without a shared sweep point say so instead of printing an empty table."""
    a = load_result(FORMAT1 / "default.json")
    b = load_result(FORMAT1 / "nginx.json")
    assert "share no sweep point" in markdown.report(comparison_report(a, b, "a", "b"))
